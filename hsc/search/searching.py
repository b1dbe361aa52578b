"""The query half of :class:`hsc.api.Index`: hierarchies loaded for search,
and one query answered in any of :data:`hsc.params.RETRIEVAL_MODES`.

:class:`Searching` is a base of ``Index`` and uses its views of the database
(``hierarchy``, ``leaf_table``, ``build``, ``default_hierarchy``, ``_mid_view``,
``encoder_spec``, ``embedder_for``); it keeps what a query needs loaded once
per process (leaf tables, group bounds, HNSW indexes).

Its bases hold the rest: :class:`~hsc.search.loaded.LoadedHierarchies` loads a
hierarchy for search, :class:`~hsc.search.response_parts.ResponseParts` reads what a
response shows beside its ranking (results' rows, groups' labels, regions and files).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from hsc.chunk.roles import check_roles, parse_roles
from hsc.embed import Embedder, EncoderSpec
from hsc.embed.tuned import retired_note
from hsc.params import RETRIEVAL_MODES, Parameters, query_overrides, with_values
from hsc.search.answers import full_retrieval
from hsc.search.lexical import match_expression
from hsc.search.loaded import _Cache as _Cache  # hsc.api imports it from here
from hsc.search.loaded import _Loaded
from hsc.search.loaded import _table_rows as _table_rows  # so do the tests
from hsc.search.names import kept_terms, name_boost
from hsc.search.response_parts import ResponseParts
from hsc.search.results import GroupResult, QueryResponse, check_query, parse_node_id
from hsc.search.results import join_pieces as joined
from hsc.search.two_stage import LEXICAL_MODES, GroupHits, Retrieval, flat_search

# How many of the groups stage 1 opened a query describes (path, lines, scope, summary), best
# first, besides every group that holds a result: the Query page and the history show these.
GROUPS_DESCRIBED = 100


def _lexical_part(
    lexical: dict[int, float], weight: float, boost: dict[int, float] | None = None
) -> Callable[[int], float]:
    """What :func:`hsc.search.lexical.fuse` added to a row's score: ``weight`` times its BM25
    score over the query's best (both rankings fuse every candidate, so the best is the same),
    and what naming its definition added (``boost``)."""
    top = max(lexical.values(), default=0.0)
    named = boost or {}
    return lambda row: (
        (weight * lexical.get(row, 0.0) / top if top > 0 and weight else 0.0) + named.get(row, 0.0)
    )


class Searching(ResponseParts):
    """Loaded hierarchies and the query over them (a base of :class:`hsc.api.Index`)."""

    _given_spec: EncoderSpec | None

    def tool_roles(
        self, roles: str | tuple[str, ...] | list[str] | None, repository_id: int, params: Parameters
    ) -> tuple[str, ...] | None:
        """The roles an agent's tool searches (None: every file): those asked for (``"all"``: every
        file), else ``params.tool_roles`` when the repository holds a file of one of them, else every
        file (a repository of docs alone is still answered)."""
        if isinstance(roles, str) and roles.strip().lower() in ("all", "*"):
            return None
        asked = parse_roles(roles) if isinstance(roles, str) else check_roles(roles)
        if asked:
            return asked
        preferred = parse_roles(params.tool_roles)
        if preferred and any(role in preferred for role in self.store.file_roles(repository_id).values()):
            return preferred
        return None

    def query_encoder(self, repository_id: int | None = None) -> Embedder:
        """The encoder that made the repository's vectors; a backend named in
        the settings that did not is an error, not a silent mismatch."""
        repository_id = self._only_repository(repository_id)
        spec = self.encoder_spec(repository_id)
        recorded = (self.store.repository(repository_id) or {}).get("embedding_model")
        if recorded and recorded != spec.key and self._given_spec is None:
            made_by = EncoderSpec.from_key(recorded)
            retired = retired_note(made_by.model)
            if retired:
                raise ValueError(retired)
            raise ValueError(
                f"this repository's vectors were made by {made_by.describe()}, not "
                f"{spec.describe()}: query with embedding_backend=auto, or re-index with the new backend"
            )
        return self.embedder_for(spec)

    def embed_query(self, text: str, repository_id: int | None = None) -> np.ndarray:
        return self.query_encoder(repository_id).embed([text])[0]

    def query(
        self,
        text: str,
        repository_id: int | None = None,
        hierarchy_id: int | None = None,
        params: Parameters | Mapping[str, Any] | None = None,
        flat: bool = False,
        record: bool = True,
        compare: bool = True,
        mode: str | None = None,
        join_pieces: bool = True,
        regions: bool = True,
        roles: tuple[str, ...] | list[str] | str | None = None,
    ) -> QueryResponse:
        """Retrieve with ``mode`` (one of :data:`hsc.params.RETRIEVAL_MODES`;
        default: the parameters' ``retrieval_mode``; ``flat=True`` is short for
        ``mode="flat"``). With ``compare`` (the default) the flat ranking is
        computed too, so both can be shown side by side; without it only the one
        asked for runs, and the other is empty. ``record`` saves the query in
        the history, except on a database opened read-only.

        ``params``: the query-stage values of a whole :class:`Parameters` (its other
        stages are the hierarchy's own, already built), or a mapping of query-stage
        names (``{"lexical_weight": 0.5}``) applied on top of the hierarchy's values; a
        mapping naming a parameter of another stage is refused, saying where it is set.

        ``join_pieces``: results that are pieces of one split definition become one result
        (:attr:`QueryResult.pieces`); False keeps each leaf a result of its own.

        ``regions``: also rank the regions (files and definitions; :attr:`QueryResponse.regions`)
        and the files (:attr:`QueryResponse.files`) from the mode's best ``region_candidates``
        leaves (hsc.search.regions).

        ``roles``: search only the files of these roles (:data:`hsc.chunk.roles.ROLES`, e.g.
        ``("code", "test")`` or ``"code,test"``); None searches every file."""
        check_query(text)
        wanted_roles = parse_roles(roles) if isinstance(roles, str) else check_roles(roles)
        if mode is not None and mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}")
        if hierarchy_id is None:
            hierarchy_id = self.default_hierarchy(repository_id)
        hierarchy = self.hierarchy(hierarchy_id)
        stored = with_values(Parameters(), hierarchy["parameters"])
        if params is None or isinstance(params, Mapping):
            params = with_values(stored, query_overrides(dict(params or {})))
        mode = mode or ("flat" if flat else params.retrieval_mode)
        flat = mode in ("flat", "hybrid-flat")
        loaded = self._load(hierarchy_id)
        hierarchy_id = loaded.hierarchy_id  # a stale hierarchy is rebuilt under a new id
        if wanted_roles:
            loaded = self._of_roles(loaded, int(hierarchy["repository_id"]), wanted_roles)
        started = time.perf_counter()
        vector = self.embed_query(text, int(hierarchy["repository_id"]))
        embedding_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        lexical = (
            self._lexical(loaded, hierarchy, text, params, wanted_roles) if mode in LEXICAL_MODES else None
        )
        boost = None
        if mode in LEXICAL_MODES and params.exact_name_weight > 0:
            repository_id = int(hierarchy["repository_id"])
            boost = name_boost(
                text,
                loaded.table,
                lambda names: self.store.definitions_named(repository_id, names),
                params.exact_name_weight,
            )
        lexical_ms = (time.perf_counter() - started) * 1000
        staged, staged_ms = Retrieval(GroupHits(), [], 0), 0.0
        staged_runs: dict[int, tuple[int, int]] = {}
        exact_runs: dict[int, tuple[int, int]] = {}
        # Enough leaves for leaf_level_top_k joined results (joined_results, hsc.search.answers).
        full = join_pieces and params.joined_results == "full"
        table = loaded.table
        # The regions are scored from more leaves than a query lists: the search is asked for both at
        # once, and the answer is drawn from the first leaves it asked for.
        wanted = params.region_candidates if regions else 0
        staged_found: list[Any] = []
        exact_found: list[Any] = []
        if compare or not flat:
            started = time.perf_counter()
            staged, staged_runs, staged_found = full_retrieval(
                lambda ask: loaded.retriever.search(
                    vector,
                    params.mid_level_top_k,
                    max(ask, wanted),
                    math.ceil(params.stage1_leaf_share * len(loaded.table)),
                    params.group_score_weight,
                    lexical,
                    params.lexical_weight,
                    boost,
                    params.lexical_fusion,
                ),
                loaded.table,
                params.leaf_level_top_k,
                full,
            )
            staged_ms = (time.perf_counter() - started) * 1000 + lexical_ms
        exact, flat_ms = Retrieval(GroupHits(), [], len(loaded.table)), 0.0
        if compare or flat:
            # The flat ranking of the same family: fused with BM25 in the hybrid modes.
            started = time.perf_counter()
            exact, exact_runs, exact_found = full_retrieval(
                lambda ask: flat_search(
                    table.vectors,
                    vector,
                    max(ask, wanted),
                    lexical,
                    params.lexical_weight,
                    table.definitions,
                    boost,
                    params.lexical_fusion,
                ),
                loaded.table,
                params.leaf_level_top_k,
                full,
            )
            flat_ms = (time.perf_counter() - started) * 1000 + lexical_ms
        candidates = exact_found if flat else staged_found
        # A node or leaf replaced by an index run since this hierarchy was loaded is left out.
        # Opened groups are described by their stored labels, the first GROUPS_DESCRIBED of them
        # and those holding a result (a widened stage 1 opens about 27,000 at 10^6 leaves); the
        # groups that hold a result come whole too, as its parent.
        opened = staged.groups.ordinals
        holding = np.isin(opened, [hit.group for hit in staged.leaves])
        holding[:GROUPS_DESCRIBED] = True
        described = [(int(place) + 1, staged.groups[place]) for place in np.flatnonzero(holding)]
        labels = self._group_labels(hierarchy_id, [loaded.mid_ids[hit.ordinal] for _, hit in described])
        groups: list[GroupResult] = []
        for rank, hit in described:
            node_id = loaded.mid_ids[hit.ordinal]
            label = labels.get(node_id)
            if label is not None:
                groups.append(GroupResult(rank, f"mid:{node_id}", hit.score, **label))
        lexical_part = (
            _lexical_part(lexical or {}, params.lexical_weight, boost)
            if lexical is not None and params.lexical_fusion == "sum"
            else None
        )
        two_stage = self._results(loaded, staged, lexical_part)
        flat_results = self._results(loaded, exact, lexical_part)
        ranked = two_stage + flat_results
        parent_of = {r.parent_id: parse_node_id(r.parent_id)[1] for r in ranked if r.parent_id}
        parents = self._mid_views(hierarchy_id, sorted(set(parent_of.values())), True)
        root = (self.store.repository(int(hierarchy["repository_id"])) or {}).get("root") or ""
        for result in ranked:
            result.parent = parents.get(parent_of[result.parent_id]) if result.parent_id else None
            result.repository = root
        response = QueryResponse(
            query=text,
            mode=mode,
            results=flat_results if flat else two_stage,
            groups=groups,
            flat=flat_results,
            leaves_compared=exact.leaves_compared if flat else staged.leaves_compared,
            flat_leaves_compared=exact.leaves_compared,
            elapsed_ms=flat_ms if flat else staged_ms,
            embedding_ms=embedding_ms,
            hierarchy_id=hierarchy_id,
            opened_group_ids=[loaded.mid_node_ids[ordinal] for ordinal in opened.tolist()],
            opened_leaves=staged.opened_leaves,
            lexical_candidates=len(lexical or {}),
        )
        if regions:
            started = time.perf_counter()
            response.regions, response.files = self._regions(
                loaded, hierarchy, candidates, vector, params, text
            )
            response.regions_ms = (time.perf_counter() - started) * 1000
        if record and not self.store.read_only:
            rows = [("mid", g.rank, g.node_id, g.score) for g in groups]
            rows += [("leaf", r.rank, r.leaf_id, r.score) for r in two_stage]
            rows += [("flat", r.rank, r.leaf_id, r.score) for r in flat_results]
            response.query_id = self.store.save_query(
                int(hierarchy["repository_id"]),
                hierarchy_id,
                text,
                response.mode,
                asdict(params),
                response.leaves_compared,
                response.elapsed_ms,
                rows,
            )
        if join_pieces:
            leaf_ids = loaded.table.leaf_ids
            runs = {**staged_runs, **exact_runs}
            definition_of: dict[str, object] = {f"leaf:{int(leaf_ids[r])}": key for r, key in runs.items()}
            response.results = joined(response.results, definition_of)
            response.flat = joined(response.flat, definition_of)
        response.pieces_joined = join_pieces
        return response

    def _lexical(
        self,
        loaded: _Loaded,
        hierarchy: dict[str, Any],
        text: str,
        params: Parameters,
        roles: tuple[str, ...] | None = None,
    ) -> dict[int, float]:
        """Leaf row -> BM25 score of the query's best ``lexical_candidates`` leaves.
        Read only: the terms are written with the leaves at index time (a leaf
        indexed by an older hsc and not yet updated has none, and is ranked
        by its vector alone)."""
        repository_id = int(hierarchy["repository_id"])
        kept = kept_terms(text) if params.exact_name_weight > 0 else set()
        match = match_expression(text, loaded.term_counts, params.lexical_term_share, kept)
        found = self.store.lexical_search(
            repository_id, match, params.lexical_candidates, params.lexical_name_weight, roles
        )
        return {loaded.row_of_leaf[i]: score for i, score in found if i in loaded.row_of_leaf}

    def query_history(self, repository_id: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.store.queries(self._only_repository(repository_id), limit)
        for row in rows:
            row["parameters"] = json.loads(row["parameters"])
        return rows
