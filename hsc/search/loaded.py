"""Hierarchies loaded for search: a hierarchy's leaf table, groups and stage-1 graph, read once
per process and kept while the database state they were read at stays, and narrowed to the files
of some roles (a base of :class:`hsc.search.searching.Searching`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from hsc.chunk.roles import file_role
from hsc.hierarchy.groups import DefinitionVectors, LeafTable
from hsc.params import Parameters, with_values
from hsc.search.lexical import TermCounts
from hsc.search.region_outlines import RegionOutlines
from hsc.search.region_table import RegionTable
from hsc.search.region_terms import RegionTerms
from hsc.search.two_stage import MidLevelIndex, TwoStageRetriever
from hsc.store import Store
from hsc.store.dbfile import StoreBusy
from hsc.store.sidecar import SideFiles


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


class LoadedHierarchies:
    """Hierarchies loaded for search, kept per database state; uses the ``hierarchy`` and
    ``build`` views of :class:`hsc.api.Index`."""

    store: Store
    _cache: _Cache
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
