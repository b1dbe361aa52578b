"""The query half of :class:`hsc.api.Index`: hierarchies loaded for search,
and one query answered in any of :data:`hsc.params.RETRIEVAL_MODES`.

:class:`Searching` is a base of ``Index`` and uses its views of the database
(``hierarchy``, ``leaf_table``, ``build``, ``default_hierarchy``, ``_mid_view``,
``encoder_spec``, ``embedder_for``); it keeps what a query needs loaded once
per process (leaf tables, group bounds, HNSW indexes).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from hsc.chunk.roles import check_roles, file_role, parse_roles
from hsc.embed import Embedder, EncoderSpec
from hsc.embed.tuned import retired_note
from hsc.hierarchy.groups import DefinitionVectors, LeafTable
from hsc.model import common_scope
from hsc.params import RETRIEVAL_MODES, Parameters, query_overrides, with_values
from hsc.search.answers import full_retrieval
from hsc.search.lexical import TermCounts, match_expression
from hsc.search.names import kept_terms, name_boost
from hsc.search.region_outlines import RegionOutlines, load_outlines, outline_evidence
from hsc.search.region_terms import (
    RegionTerms,
    build_region_terms,
    region_lexical,
    region_terms_arrays,
    region_terms_from_arrays,
)
from hsc.search.regions import (
    DEFINITION,
    FILE,
    Region,
    RegionTable,
    answer_regions,
    build_regions,
    region_arrays,
    regions_from_arrays,
)
from hsc.search.results import GroupResult, QueryResponse, QueryResult, check_query, parse_node_id
from hsc.search.results import join_pieces as joined
from hsc.search.two_stage import (
    LEXICAL_MODES,
    GroupHits,
    MidLevelIndex,
    Retrieval,
    TwoStageRetriever,
    flat_search,
)
from hsc.store import Store
from hsc.store.dbfile import StoreBusy
from hsc.store.sidecar import SideFiles

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


def _table_rows(table: LeafTable, keep: np.ndarray) -> LeafTable:
    """The rows of ``table`` where ``keep`` is true, still in document order."""
    rows = np.flatnonzero(keep)
    old_files = table.file_index[rows]
    used, file_index = np.unique(old_files, return_inverse=True)
    held = keep[table.definitions.rows]
    new_row = np.cumsum(keep) - 1
    definitions = DefinitionVectors(
        new_row[table.definitions.rows[held]].astype(np.int64), table.definitions.vectors[held]
    )
    return LeafTable(
        leaf_ids=table.leaf_ids[rows],
        file_index=file_index.astype(np.int32),
        paths=[table.paths[i] for i in used],
        scopes=[table.scopes[i] for i in rows],
        start_lines=table.start_lines[rows],
        end_lines=table.end_lines[rows],
        token_counts=table.token_counts[rows],
        vectors=table.vectors[rows],
        definitions=definitions,
    )


@dataclass
class _Loaded:
    """A hierarchy ready to answer queries: its leaf table, node ids, HNSW."""

    hierarchy_id: int
    stamp: str  # of the database state it was loaded at (Searching._hierarchy_stamp)
    table: LeafTable
    group_starts: np.ndarray
    group_ends: np.ndarray
    mid_ids: list[int]
    retriever: TwoStageRetriever
    term_counts: TermCounts  # the store's, kept as long as this state of the database
    row_of_leaf: dict[int, int] = field(default_factory=dict)  # leaf id -> row of ``table``
    # The regions above the leaves (hsc.search.regions), made on the first query that asks for them.
    regions: RegionTable | None = None
    # Their terms (hsc.search.region_terms), made on the first query with ``region_lexical`` on.
    region_terms: RegionTerms | None = None
    # Their stored outline vectors (hsc.search.region_outlines), read on the first query; False: none.
    region_outlines: RegionOutlines | bool | None = None

    @cached_property
    def mid_node_ids(self) -> list[str]:
        """``mid:N`` of each group, made once: a widened stage 1 opens 27,000 at 10^6 leaves,
        and formatting each per query cost 9 ms."""
        return [f"mid:{node_id}" for node_id in self.mid_ids]


@dataclass
class _Cache:
    tables: dict[str, LeafTable] = field(default_factory=dict)  # by Store.leaf_stamp
    loaded: dict[int, _Loaded] = field(default_factory=dict)
    # A hierarchy's files of some roles only (Searching._of_roles), by (hierarchy, its stamp, roles).
    by_roles: dict[tuple[int, str, tuple[str, ...]], _Loaded] = field(default_factory=dict)


class Searching:
    """Loaded hierarchies and the query over them (a base of :class:`hsc.api.Index`)."""

    store: Store
    _cache: _Cache
    _given_spec: EncoderSpec | None
    _side: SideFiles
    _stamped_table: Callable[[int | None], tuple[str, LeafTable]]
    # Read the leaf table and the groups from side files made for the database's exact state
    # (hsc.store.sidecar); False reads them from SQLite every time, as the seed did.
    side_files = True

    def _load(self, hierarchy_id: int) -> _Loaded:
        """The hierarchy ready to search, as the database holds it now: kept loaded while its
        stamp stays (another Index or process may update it in place, under the same id)."""
        hierarchy = self.hierarchy(hierarchy_id)
        table_stamp, table = self._stamped_table(hierarchy["repository_id"])
        stamp = self._hierarchy_stamp(hierarchy, table_stamp, len(table))
        cached = self._cache.loaded.get(hierarchy_id)
        if cached is not None and cached.stamp == stamp:
            return cached
        owners = self._owners(hierarchy_id, stamp, table)
        if len(table) and (owners < 0).any():
            # The leaves changed under this hierarchy; rebuild it with its own parameters.
            params = with_values(Parameters(), hierarchy["parameters"])
            try:
                rebuilt = self.build(hierarchy["repository_id"], params, name=hierarchy["name"])
            except StoreBusy:
                # Another run is indexing this database now and will rebuild it: answer from the
                # leaves the hierarchy still holds, without caching that partial view.
                keep = owners >= 0
                partial = _table_rows(table, keep)
                return self._loaded_from(hierarchy_id, stamp, partial, owners[keep], cache=False)
            return self._load(int(rebuilt["id"]))
        return self._loaded_from(hierarchy_id, stamp, table, owners, cache=True)

    @staticmethod
    def _hierarchy_stamp(hierarchy: dict[str, Any], table_stamp: str, leaves: int) -> str:
        """What a hierarchy's side files (owners, HNSW) are made of: the leaf table's stamp and
        the hierarchy's row (the memberships change only with it: a new id, or a new created_at)."""
        version = (hierarchy[k] for k in ("id", "created_at", "leaf_count", "group_count"))
        return "|".join(str(value) for value in (table_stamp, leaves, *version))

    def _owners(self, hierarchy_id: int, stamp: str, table: LeafTable) -> np.ndarray:
        """The mid node of every row of ``table`` (-1 for a leaf the hierarchy
        does not hold), from the side file made at ``stamp`` when there is one."""
        owners = self._side.load_owners(hierarchy_id, stamp, len(table)) if self.side_files else None
        if owners is not None:
            return owners
        leaf_ids, node_ids = self.store.membership_arrays(hierarchy_id)
        order = np.argsort(leaf_ids)
        leaf_ids, node_ids = leaf_ids[order], node_ids[order]
        at = np.minimum(np.searchsorted(leaf_ids, table.leaf_ids), max(len(leaf_ids) - 1, 0))
        found = (leaf_ids[at] == table.leaf_ids) if len(leaf_ids) else np.zeros(len(table), dtype=bool)
        owners = np.where(found, node_ids[at] if len(node_ids) else -1, -1).astype(np.int64)
        if self.side_files and not self.store.read_only and not (owners < 0).any():
            self._side.save_owners(hierarchy_id, stamp, owners)
        return owners

    def _loaded_from(
        self, hierarchy_id: int, stamp: str, table: LeafTable, owners: np.ndarray, cache: bool
    ) -> _Loaded:
        if len(table):
            group_starts = np.concatenate(([0], np.flatnonzero(np.diff(owners)) + 1)).astype(np.int64)
        else:
            group_starts = np.zeros(0, dtype=np.int64)
        group_ends = np.append(group_starts[1:], len(table)).astype(np.int64)
        mid_ids = owners[group_starts].tolist()
        path = self._side.graph_path(hierarchy_id, stamp)
        dim = table.vectors.shape[1] if len(table) else 1

        def graph(retriever: TwoStageRetriever) -> MidLevelIndex:
            # Loaded or built only when stage 1 walks it: the shipped widened stage 1 scores
            # the groups exactly, and building the graph at 10^6 leaves takes minutes.
            mid_index = MidLevelIndex.load(path, dim, len(group_starts)) if cache else None
            if mid_index is None:
                mid_index = MidLevelIndex.build(
                    retriever.group_vectors if len(table) else np.zeros((0, 1), np.float32)
                )
                if cache and not self.store.read_only:  # a read-only index writes nothing beside it either
                    self._side.save_graph(hierarchy_id, stamp, mid_index, dim)
            return mid_index

        loaded = _Loaded(
            hierarchy_id,
            stamp,
            table,
            group_starts,
            group_ends,
            mid_ids,
            TwoStageRetriever(table.vectors, group_starts, group_ends, graph, table.definitions),
            TermCounts(self.store.term_documents, self.store.leaf_count),
            {int(leaf_id): row for row, leaf_id in enumerate(table.leaf_ids)},
        )
        if cache:
            self._cache.loaded[hierarchy_id] = loaded
        return loaded

    def _of_roles(self, loaded: _Loaded, repository_id: int, roles: tuple[str, ...]) -> _Loaded:
        """``loaded`` narrowed to the leaves of files whose role (hsc.chunk.roles) is one of
        ``roles``: its groups keep the leaves they still hold, in document order, and stage 1 and
        BM25 see only those (a leaf BM25 finds elsewhere is not a row here, so it is dropped)."""
        key = (loaded.hierarchy_id, loaded.stamp, tuple(sorted(roles)))
        cached = self._cache.by_roles.get(key)
        if cached is not None:
            return cached
        role_of = self.store.file_roles(repository_id)
        wanted = np.array([role_of.get(path, file_role(path)) in roles for path in loaded.table.paths])
        keep = wanted[loaded.table.file_index] if len(loaded.table) else np.zeros(0, dtype=bool)
        if keep.all():
            return loaded
        owners = np.repeat(
            np.asarray(loaded.mid_ids, dtype=np.int64), loaded.group_ends - loaded.group_starts
        )
        narrowed = self._loaded_from(
            loaded.hierarchy_id, loaded.stamp, _table_rows(loaded.table, keep), owners[keep], cache=False
        )
        # Only the latest state of each hierarchy is kept (older stamps are dropped with it).
        stale = [k for k in self._cache.by_roles if k[0] == loaded.hierarchy_id and k[1] != loaded.stamp]
        for old in stale:
            self._cache.by_roles.pop(old)
        self._cache.by_roles[key] = narrowed
        return narrowed

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

    def _regions(
        self,
        loaded: _Loaded,
        hierarchy: dict[str, Any],
        candidates: list[Any],
        vector: np.ndarray,
        params: Parameters,
        text: str = "",
    ) -> tuple[list[Region], list[Region]]:
        """The query's ranked regions and files, from its candidate leaves (best first); with
        ``region_lexical`` on, also from the BM25 of ``text`` over each region's terms."""
        if loaded.regions is None:
            loaded.regions = self._region_table(loaded, int(hierarchy["repository_id"]))
        regions = loaded.regions
        rows = np.array([hit.row for hit in candidates], dtype=np.int64)
        scores = np.array([hit.score for hit in candidates], dtype=np.float64)
        lexical = None
        if params.region_lexical != "off":
            if loaded.region_terms is None:
                loaded.region_terms = self._region_terms(loaded, regions, int(hierarchy["repository_id"]))
            lexical = region_lexical(
                loaded.region_terms,
                regions.levels,
                regions.lo,
                regions.outermost,
                text,
                params.region_lexical,
                "own",
            )
        evidence = None
        if params.region_outlines != "off":
            if loaded.region_outlines is None:
                repository_id = int(hierarchy["repository_id"])
                loaded.region_outlines = load_outlines(self.store, repository_id, regions) or False
            if isinstance(loaded.region_outlines, RegionOutlines):
                evidence = outline_evidence(loaded.region_outlines, regions, vector)
        return answer_regions(regions, rows, scores, vector, params, lexical, evidence)

    def _region_terms(self, loaded: _Loaded, regions: RegionTable, repository_id: int) -> RegionTerms:
        """A hierarchy's region terms: read from the side file made at its stamp, else made from
        the stored leaf terms (one read of the lexical table) and saved there, as the regions are."""
        whole = self.side_files and self._cache.loaded.get(loaded.hierarchy_id) is loaded
        saved = self._side.load_region_terms(loaded.hierarchy_id, loaded.stamp) if whole else None
        if saved is not None and int(saved["shape"][0]) == len(regions):
            return region_terms_from_arrays(saved)
        stored = self.store.leaf_term_texts(repository_id)
        made = build_region_terms(
            regions.lo,
            regions.hi,
            (regions.levels == FILE) | ((regions.levels == DEFINITION) & regions.outermost),
            [stored.get(int(leaf_id), ("", "")) for leaf_id in loaded.table.leaf_ids],
        )
        if whole and not self.store.read_only:
            self._side.save_region_terms(loaded.hierarchy_id, loaded.stamp, region_terms_arrays(made))
        return made

    def _region_table(self, loaded: _Loaded, repository_id: int) -> RegionTable:
        """A hierarchy's regions: read from the side file made at its stamp, else built (the
        definitions read, every region pooled) and saved there. A view of some files' roles only,
        or a partial one, is built each time: its rows are not the saved table's."""
        whole = self.side_files and self._cache.loaded.get(loaded.hierarchy_id) is loaded
        saved = self._side.load_regions(loaded.hierarchy_id, loaded.stamp) if whole else None
        if saved is not None:
            return regions_from_arrays(*saved)
        definitions = self.store.definitions(repository_id)
        regions = build_regions(loaded.table, definitions, loaded.group_starts, loaded.group_ends)
        if whole and not self.store.read_only:
            self._side.save_regions(
                loaded.hierarchy_id, loaded.stamp, region_arrays(regions), regions.vectors
            )
        return regions

    def _group_labels(self, hierarchy_id: int, node_ids: list[int]) -> dict[int, dict[str, Any]]:
        """What a query shows of each group (GroupResult's fields after its score), from the
        stored labels; a group made by an older hsc has no stored scope and is described from
        its leaves, as before scopes were stored."""
        labels = self.store.group_labels(node_ids)
        unscoped = [node_id for node_id, label in labels.items() if label["scope"] is None]
        if unscoped:
            members = self.store.members_of(hierarchy_id, unscoped, with_text=False)
            for node_id in unscoped:
                leaves = members[node_id]
                labels[node_id]["scope"] = common_scope([leaf["scope"] for leaf in leaves])
                labels[node_id]["leaf_count"] = len(leaves)
        return labels

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

    def _results(
        self, loaded: _Loaded, retrieval: Retrieval, lexical_part: Callable[[int], float] | None = None
    ) -> list[QueryResult]:
        """The retrieved leaves still in the database, with their group's id (the parent view is
        filled in by the caller, for all results at once) and, in a hybrid mode, the BM25 part of
        each score (``lexical_part`` of its row)."""
        leaf_ids = [int(loaded.table.leaf_ids[hit.row]) for hit in retrieval.leaves]
        rows = self.store.leaves_by_id(leaf_ids)
        group_of_row = (
            np.searchsorted(loaded.group_starts, [hit.row for hit in retrieval.leaves], side="right") - 1
        )
        results: list[QueryResult] = []
        for hit, leaf_id, group in zip(retrieval.leaves, leaf_ids, group_of_row):
            row = rows.get(leaf_id)
            if row is None:  # rewritten by an index run since the hierarchy was loaded
                continue
            mid_id = loaded.mid_ids[int(group)]
            results.append(
                QueryResult(
                    rank=len(results) + 1,
                    score=hit.score,
                    leaf_id=f"leaf:{leaf_id}",
                    path=row["path"],
                    start_line=row["start_line"],
                    end_line=row["end_line"],
                    scope=row["scope"],
                    parent_id=f"mid:{mid_id}",
                    parent_score=None if hit.group < 0 else hit.group_score,
                    text=row["text"],
                    language=row["language"] or "",
                    lexical_score=None if lexical_part is None else lexical_part(hit.row),
                )
            )
        return results

    def query_history(self, repository_id: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.store.queries(self._only_repository(repository_id), limit)
        for row in rows:
            row["parameters"] = json.loads(row["parameters"])
        return rows
