"""The regions of a leaf table: its folders, files, definitions and groups as runs of leaf rows.

A repository's leaves are in document order (files sorted by path, leaves by position), so every
region is a contiguous run of leaf rows: a folder's files, a file's leaves, the leaves a
definition's lines overlap, a group's leaves. Each region gets one pooled vector, made once
when its table is built (the re-normalised mean of its leaves; no query pools anything) and kept
in a side file for the database's state, so a later process reads it instead of pooling again.
A query ranks them in hsc.search.regions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from hsc.chunk.node_types import TYPE_KINDS
from hsc.model import Definition, common_scope
from hsc.search.region_members import MEMBER_KINDS, declared_members, pool_members

LEVELS = ("folder", "file", "definition", "group")
FOLDER, FILE, DEFINITION, GROUP = range(4)
# Definitions that are not regions of their own: the file's description (the file is one).
NOT_REGIONS = frozenset({"file"})
# The definitions the "type" level lists: types, not the blocks that add members to one (a Rust
# impl block, a Swift extension), which lend their type their leaves instead (region_members).
ANSWER_TYPE_KINDS = TYPE_KINDS - MEMBER_KINDS


@dataclass(frozen=True)
class Region:
    """One ranked answer above the leaves (a folder's lines are None)."""

    level: str  # one of LEVELS
    path: str
    start_line: int | None
    end_line: int | None
    name: str
    score: float

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "name": self.name,
            "score": round(self.score, 4),
        }


@dataclass(frozen=True)
class RegionTable:
    """Every region of one leaf table as parallel arrays; ``lo``..``hi`` (exclusive) its leaf rows."""

    levels: np.ndarray  # int8, index into LEVELS
    paths: list[str]
    names: list[str]
    start_lines: np.ndarray  # int64 (0 for a folder)
    end_lines: np.ndarray  # int64 (0 for a folder)
    lo: np.ndarray  # int64
    hi: np.ndarray  # int64
    vectors: np.ndarray  # float32 (regions, dim), L2-normalised
    outermost: np.ndarray  # bool: a definition inside no other definition of its file (others: True)
    # int64: the row of the type declaration whose members this region holds, declared outside the
    # type's lines in its file (a Go method of a struct, a Rust impl block of a type); -1 for none.
    extends: np.ndarray
    # float32 (len(owners), dim): each such type's vector pooled over its own leaves and its
    # members', L2-normalised; row i is the type ``owners[i]``'s.
    member_vectors: np.ndarray
    kinds: np.ndarray  # str: a definition's kind (hsc.model.Definition.kind), "" for the other levels

    def __len__(self) -> int:
        return len(self.levels)

    @cached_property
    def leaf_regions(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, regions): the regions holding leaf row r are ``regions[indptr[r]:indptr[r + 1]]``."""
        leaves = int(self.hi.max()) if len(self) else 0
        lengths = self.hi - self.lo
        region_of = np.repeat(np.arange(len(self), dtype=np.int64), lengths)
        row_of = np.repeat(self.lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        order = np.argsort(row_of, kind="stable")
        indptr = np.searchsorted(row_of[order], np.arange(leaves + 1))
        return indptr.astype(np.int64), region_of[order]

    @cached_property
    def owners(self) -> np.ndarray:
        """The rows of the types some region holds members of (:attr:`extends`), ascending."""
        return np.unique(self.extends[self.extends >= 0])

    @cached_property
    def types(self) -> np.ndarray:
        """Whether each region is a definition of :data:`ANSWER_TYPE_KINDS` (the type level's)."""
        return np.isin(self.kinds, list(ANSWER_TYPE_KINDS))

    @cached_property
    def holds_others(self) -> np.ndarray:
        """Definitions that hold another definition of their file (a class, a nested class): a
        file's definitions come in line order, outer before inner, so one holds others exactly
        when the next definition of its file lies inside it."""
        out = np.zeros(len(self), dtype=bool)
        rows = np.flatnonzero(self.levels == DEFINITION)
        if len(rows) < 2:
            return out
        a, b = rows[:-1], rows[1:]
        same_file = np.array([self.paths[i] == self.paths[j] for i, j in zip(a.tolist(), b.tolist())])
        inside = (self.start_lines[a] <= self.start_lines[b]) & (self.end_lines[b] <= self.end_lines[a])
        same_lines = (self.start_lines[a] == self.start_lines[b]) & (self.end_lines[a] == self.end_lines[b])
        out[a[same_file & inside & ~same_lines]] = True
        return out

    @cached_property
    def files(self) -> np.ndarray:
        """The rows of the file regions, in path order."""
        return np.flatnonzero(self.levels == FILE)

    @cached_property
    def file_vectors(self) -> np.ndarray:
        """The file regions' vectors, one contiguous block: every query scores them all."""
        return np.ascontiguousarray(self.vectors[self.files])

    def region(self, row: int, score: float) -> Region:
        folder = self.levels[row] == FOLDER
        return Region(
            LEVELS[int(self.levels[row])],
            self.paths[row],
            None if folder else int(self.start_lines[row]),
            None if folder else int(self.end_lines[row]),
            self.names[row],
            float(score),
        )


# The columns a region table is saved as beside its vectors (hsc.store.sidecar), in field order.
COLUMNS = (
    "levels",
    "paths",
    "names",
    "start_lines",
    "end_lines",
    "lo",
    "hi",
    "outermost",
    "extends",
    "kinds",
)


def region_arrays(regions: RegionTable) -> dict[str, np.ndarray]:
    """A region table's columns and its types' member vectors (without the regions' vectors) as
    arrays a side file can hold; the member vectors are its one two-dimensional array."""
    columns = {
        name: np.array(getattr(regions, name), dtype=str)
        if name in ("paths", "names", "kinds")
        else getattr(regions, name)
        for name in COLUMNS
    }
    return {**columns, "member_vectors": regions.member_vectors}


def regions_from_arrays(arrays: dict[str, np.ndarray], vectors: np.ndarray) -> RegionTable | None:
    """The region table :func:`region_arrays` saved, with its (possibly memory-mapped) vectors; None
    for arrays an older hsc saved without all of them (the table is then made again)."""
    if not {*COLUMNS, "member_vectors"} <= arrays.keys():
        return None
    columns = {name: arrays[name] for name in COLUMNS}
    columns["paths"] = columns["paths"].tolist()
    columns["names"] = columns["names"].tolist()
    return RegionTable(**columns, vectors=vectors, member_vectors=arrays["member_vectors"])


def _runs(starts: list[int], ends: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def run_membership(lo: np.ndarray, hi: np.ndarray, rows: int) -> Any:
    """A sparse runs x ``rows`` matrix of ones: run ``i`` holds rows ``lo[i]``..``hi[i]``
    (exclusive); runs may nest or overlap. Its product with per-row data sums each run's rows."""
    from scipy import sparse

    lengths = hi - lo
    region_of = np.repeat(np.arange(len(lo)), lengths)
    row_of = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    return sparse.csr_matrix(
        (np.ones(len(row_of), dtype=np.float32), (region_of, row_of)), shape=(len(lo), rows)
    )


def pool_runs(vectors: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The re-normalised mean of the rows ``lo[i]``..``hi[i]`` (exclusive) of ``vectors``, for runs
    that may nest or overlap: one sparse product, as :func:`hsc.hierarchy.groups.mean_pool`."""
    dim = vectors.shape[1] if vectors.ndim == 2 else 1
    if not len(lo):
        return np.zeros((0, dim), dtype=np.float32)
    sums = np.asarray(run_membership(lo, hi, len(vectors)) @ vectors, dtype=np.float32)
    return sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)


def build_regions(
    table: Any,
    definitions: dict[str, list[Definition]],
    group_starts: np.ndarray | None = None,
    group_ends: np.ndarray | None = None,
) -> RegionTable:
    """The regions of a :class:`hsc.hierarchy.groups.LeafTable`: its folders, files, the stored
    definitions of its files (by path, as :meth:`hsc.store.Store.definitions` gives them) and,
    when given, the hierarchy's groups (leaf-row runs)."""
    levels: list[int] = []
    paths: list[str] = []
    names: list[str] = []
    kinds: list[str] = []  # a definition's kind ("" for the other levels), to link members to their type
    first: list[int] = []
    last: list[int] = []
    lo: list[int] = []
    hi: list[int] = []

    def add(
        level: int, path: str, name: str, lines: tuple[int, int], rows: tuple[int, int], kind: str = ""
    ) -> None:
        levels.append(level)
        paths.append(path)
        names.append(name)
        kinds.append(kind)
        first.append(lines[0])
        last.append(lines[1])
        lo.append(rows[0])
        hi.append(rows[1])

    n = len(table)
    file_index = np.asarray(table.file_index)
    file_starts = np.searchsorted(file_index, np.arange(len(table.paths)), side="left")
    file_ends = np.searchsorted(file_index, np.arange(len(table.paths)), side="right")
    folders: dict[str, list[int]] = {}
    for number, path in enumerate(table.paths):
        start, end = int(file_starts[number]), int(file_ends[number])
        if start == end:
            continue
        starts, ends = table.start_lines[start:end], table.end_lines[start:end]
        add(FILE, path, path.rsplit("/", 1)[-1], (1, int(ends.max())), (start, end))
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            span = folders.setdefault("/".join(parts[:depth]), [start, end])
            span[0], span[1] = min(span[0], start), max(span[1], end)
        for definition in definitions.get(path, []):
            if definition.kind in NOT_REGIONS:
                continue
            # The leaves the definition's lines overlap (a definition inside one leaf: that leaf).
            a = start + int(np.searchsorted(ends, definition.start_line, side="left"))
            b = start + int(np.searchsorted(starts, definition.end_line, side="right"))
            if a < b:
                lines = (definition.start_line, definition.end_line)
                add(DEFINITION, path, definition.scope, lines, (a, b), definition.kind)
    for folder, (start, end) in sorted(folders.items()):
        add(FOLDER, folder, folder + "/", (0, 0), (start, end))
    if group_starts is not None and group_ends is not None:
        for start, end in zip(group_starts.tolist(), group_ends.tolist()):
            path = table.paths[int(file_index[start])]
            lines = (int(table.start_lines[start]), int(table.end_lines[start:end].max()))
            add(GROUP, path, common_scope(table.scopes[start:end]), lines, (start, end))
    lo_array, hi_array = _runs(lo, hi)
    outermost = np.ones(len(levels), dtype=bool)
    last_outer: tuple[str, int] = ("", -1)  # path and last line of the latest outermost definition
    for region, level in enumerate(levels):
        if level == DEFINITION:  # a file's definitions come in line order, outer before inner
            if paths[region] == last_outer[0] and last[region] <= last_outer[1]:
                outermost[region] = False
            else:
                last_outer = (paths[region], last[region])
    outer = [r for r, level in enumerate(levels) if level == DEFINITION and outermost[r]]
    extends = declared_members(paths, names, kinds, first, last, outer, len(levels))
    vectors = pool_runs(table.vectors, lo_array, hi_array) if n else np.zeros((0, 1), np.float32)
    member_vectors = pool_members(table.vectors, lo_array, hi_array, extends, vectors.shape[1])
    return RegionTable(
        np.asarray(levels, dtype=np.int8),
        paths,
        names,
        np.asarray(first, dtype=np.int64),
        np.asarray(last, dtype=np.int64),
        lo_array,
        hi_array,
        vectors,
        outermost,
        extends,
        member_vectors,
        np.asarray(kinds, dtype=str),
    )
