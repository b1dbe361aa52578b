"""The context query of :class:`hsc.api.Index`: rank leaves, then fill a token budget with them,
the rest of the definitions they are pieces of and the definitions they use
(:func:`hsc.search.assemble.assemble_pack`), resolved from the stored facts
(:mod:`hsc.search.resolve`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from hsc.chunk.tokens import TokenCounter
from hsc.hierarchy.groups import LeafTable
from hsc.model import Definition
from hsc.params import RETRIEVAL_MODES, Parameters, with_values
from hsc.search.answers import definition_runs
from hsc.search.assemble import Dependency, Hit, PackPolicy, assemble_pack
from hsc.search.context import ContextPack
from hsc.search.module_rule import needs_ranking
from hsc.search.modules import FileFacts, FileIndex
from hsc.search.reasons import answer_ranks, why_found
from hsc.search.resolve import Resolver
from hsc.search.results import QueryResponse, QueryResult, check_query
from hsc.store import Store

# Files whose lines (and, separately, whose facts) a code source keeps between packs.
KEPT_FILES = 512


def policy_of(params: Parameters) -> PackPolicy:
    return PackPolicy(
        lead_hits=params.context_lead_hits,
        dependency_hits=params.context_dependency_hits,
        depth=params.context_depth,
        uses_share=params.context_uses_share,
        outline_tokens=params.context_outline_tokens,
        complete_tokens=params.context_complete_tokens,
        enclosing_tokens=params.context_enclosing_tokens,
        file_outline_tokens=params.context_file_outline_tokens,
        module_rule=params.context_module_rule,
        module_margin=params.context_module_margin,
    )


class StoreSource:
    """A repository's code as the assembler reads it: lines from the files on disk when they are
    still what was indexed (else from the stored leaves), definitions and uses from the facts."""

    def __init__(self, store: Store, repository_id: int, root: str | Path | None) -> None:
        self.store = store
        self.repository_id = repository_id
        self.root = Path(root) if root else None
        self._lines: dict[str, list[str]] = {}
        self.token_memo: dict[tuple[str, int, int], int] = {}
        self.files = FileIndex(
            store.file_languages(repository_id),
            self._facts,
            preload=self._read_facts,
            namespace_scopes=lambda: store.namespace_scopes(repository_id),
        )
        self.resolver = Resolver(self.files)

    def _facts(self, path: str) -> FileFacts:
        self.prefetch([path])
        return self.files.cache[path]

    def _read_facts(self, paths: list[str]) -> dict[str, str]:
        """Put the facts of ``paths`` into the cache; path -> the content hash they were read from."""
        cache = self.files.cache
        while len(cache) + len(paths) > KEPT_FILES and cache:
            cache.pop(next(iter(cache)))  # the one read longest ago
        found = self.store.files_facts(self.repository_id, paths)
        digests = {}
        for path in paths:
            digest, definitions, bindings = found.get(path, ("", [], []))
            cache[path] = FileFacts(path, self.files.languages.get(path, "text"), definitions, bindings)
            digests[path] = digest
        return digests

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self.prefetch([path])
        return self._lines[path]

    def prefetch(self, paths: list[str]) -> None:
        """Read the lines and facts of the files of ``paths`` not read yet, a few statements for all:
        a pack's hits are in a dozen files or more."""
        cache = self.files.cache
        wanted = [path for path in dict.fromkeys(paths) if path not in self._lines or path not in cache]
        if not wanted:
            return
        while len(self._lines) + len(wanted) > KEPT_FILES and self._lines:
            self._lines.pop(next(iter(self._lines)))  # the one read longest ago
        digests = self._read_facts(wanted)
        from_leaves = []
        for path in wanted:
            digest = digests[path]
            data = None
            if self.root is not None:
                try:
                    data = (self.root / path).read_bytes()
                except OSError:
                    data = None
            if data is not None and hashlib.sha1(data).hexdigest() == digest:
                self._lines[path] = data.decode("utf-8", "replace").splitlines()
            else:  # changed or gone since it was indexed: the file as its stored leaves hold it
                from_leaves.append(path)
        for path, leaves in self.store.files_leaf_texts(self.repository_id, from_leaves).items():
            self._lines[path] = lines_of_leaves(leaves)

    def definitions(self, path: str) -> list[Definition]:
        return self.files.facts(path).definitions

    def dependencies(self, path: str, start_line: int, end_line: int) -> list[Dependency]:
        facts = self.store.facts_on_lines(self.repository_id, path, start_line, end_line)
        uses = {name for fact in facts for name in fact.uses}
        references = {reference for fact in facts for reference in fact.references}
        return self.resolver.dependencies(path, start_line, end_line, uses, references)


def lines_of_leaves(leaves: list[tuple[int, str]]) -> list[str]:
    """A file's lines rebuilt from its leaves' (start line, text), blank where no leaf is."""
    lines: list[str] = []
    for start_line, text in leaves:
        while len(lines) < start_line - 1:
            lines.append("")
        pieces = text.split("\n")
        if len(lines) >= start_line:  # a leaf starting on the line the previous one ended on
            lines[start_line - 1] += pieces[0]
            pieces = pieces[1:]
        lines.extend(pieces)
    return lines


def hits_of(
    results: list[QueryResult],
    token_counts: dict[int, int],
    shown: dict[str, tuple[int, str]] | None = None,
) -> list[Hit]:
    """The pack's hits; ``shown``: leaf id -> (rank, why) as the query's table gives them."""
    hits = []
    for r in results:
        leaf_id = int(r.leaf_id.split(":")[1])
        hint = token_counts.get(leaf_id, 0)
        rank, why = (shown or {}).get(r.leaf_id, (0, ""))
        hits.append(
            Hit(leaf_id, r.path, r.start_line, r.end_line, float(r.score), r.rank, hint, r.scope, rank, why)
        )
    return hits


def shown_ranks(
    response: QueryResponse, table: LeafTable, row_of_leaf: dict[int, int], mid_level_top_k: int
) -> dict[str, tuple[int, str]]:
    """Leaf id -> (rank, why) of each of the response's (unjoined) results as the query's table shows
    them: the pieces of one split definition joined at their best piece's rank and reason."""
    rows = {r.leaf_id: row_of_leaf.get(int(r.leaf_id.split(":")[1])) for r in response.results}
    runs = definition_runs(table, [row for row in rows.values() if row is not None])
    definition_of = {leaf: runs[row] for leaf, row in rows.items() if row in runs}
    group_rank = {g.node_id: g.rank for g in response.groups}
    ranks = answer_ranks(response.results, definition_of)
    why: dict[int, str] = {}
    for rank, result in zip(ranks, response.results):
        why.setdefault(rank, why_found(result, group_rank, mid_level_top_k, response.mode))
    return {result.leaf_id: (rank, why[rank]) for rank, result in zip(ranks, response.results)}


class ContextQueries:
    """``Index.context`` (a base of :class:`hsc.api.Index`)."""

    store: Store
    counter: TokenCounter

    def context(
        self,
        query: str,
        budget_tokens: int,
        mode: str | None = None,
        *,
        repository_id: int | None = None,
        hierarchy_id: int | None = None,
        path_prefix: str | None = None,
        language: str | None = None,
        roles: tuple[str, ...] | list[str] | str | None = None,
        **overrides: Any,
    ) -> ContextPack:
        """At most ``budget_tokens`` cl100k tokens of code for ``query``: the ranked leaves (``mode``,
        as :meth:`query`), the rest of the functions they are pieces of, and the definitions they
        use, resolved from the stored facts, in reading order per file. ``overrides`` are
        :class:`~hsc.params.Parameters` fields (``context_*``, the query's own); ``roles`` as
        :meth:`query`'s (hits from files of these roles only)."""
        check_query(query)
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 1:
            raise ValueError(f"the budget must be a whole number of tokens >= 1, got {budget_tokens!r}")
        if mode is not None and mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}")
        if hierarchy_id is None:
            hierarchy_id = self.default_hierarchy(repository_id)  # type: ignore[attr-defined]
        hierarchy = self.hierarchy(hierarchy_id)  # type: ignore[attr-defined]
        params = with_values(Parameters(), {**hierarchy["parameters"], **overrides})
        mode = mode or params.retrieval_mode
        wanted = params.context_candidates
        filtered = bool(path_prefix or language)
        ranked = with_values(params, {"leaf_level_top_k": wanted * (4 if filtered else 1)})
        # A module rule that reads the file ranking or the region list has the query make them, once.
        rank_regions = params.context_file_outline_tokens > 0 and needs_ranking(params.context_module_rule)
        response = self.query(  # type: ignore[attr-defined]
            query,
            hierarchy_id=hierarchy_id,
            params=ranked,
            record=False,
            compare=False,
            mode=mode,
            # The pack completes a split definition itself (context_complete_tokens): it needs the leaf
            # that matched, not the whole definition, which may not fit where the piece does.
            join_pieces=False,
            regions=rank_regions,
            roles=roles,
        )
        loaded = self._load(response.hierarchy_id or hierarchy_id)  # type: ignore[attr-defined]
        shown = shown_ranks(response, loaded.table, loaded.row_of_leaf, params.mid_level_top_k)
        results = [
            r
            for r in response.results
            if (not path_prefix or r.path.startswith(path_prefix.removeprefix("./")))
            and (not language or r.language == language)
        ][:wanted]
        for rank, result in enumerate(results, start=1):
            result.rank = rank
        counts = {}
        for result in results:
            leaf_id = int(result.leaf_id.split(":")[1])
            row = loaded.row_of_leaf.get(leaf_id)
            counts[leaf_id] = int(loaded.table.token_counts[row]) if row is not None else 0
        source = self.code_source(int(hierarchy["repository_id"]))
        source.prefetch([result.path for result in results])

        def kept(path: str) -> bool:  # a file or region the filters let in, as the hits are
            prefix = not path_prefix or path.startswith(path_prefix.removeprefix("./"))
            return prefix and (not language or source.files.languages.get(path) == language)

        return assemble_pack(
            query,
            mode,
            budget_tokens,
            hits_of(results, counts, shown),
            source,
            self.counter,
            policy_of(params),
            [f for f in response.files if kept(f.path)],
            [r for r in response.regions if kept(r.path)],
        )

    def code_source(self, repository_id: int) -> StoreSource:
        """The repository's code as packs read it, kept while its leaves stay as they are (what it
        read of files and facts is reused by the next pack)."""
        stamp = self.leaf_stamp(repository_id)  # type: ignore[attr-defined]
        cached = getattr(self, "_code_sources", None)
        if cached is None or cached[0] != stamp:
            root = (self.store.repository(repository_id) or {}).get("root")
            cached = (stamp, StoreSource(self.store, repository_id, root))
            self._code_sources = cached
        return cached[1]
