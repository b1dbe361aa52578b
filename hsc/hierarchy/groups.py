"""Stage 4: leaves between boundaries become mid-level groups; each file
becomes a top-level document node.

Pure numpy over a :class:`LeafTable`, so a new threshold or window is a
rebuild from cached vectors: no parsing, no embedding, no database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from hsc.hierarchy.boundaries import Segmentation, segment
from hsc.params import Parameters


def _no_rows() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


def _no_vectors() -> np.ndarray:
    return np.zeros((0, 0), dtype=np.float32)


@dataclass(frozen=True)
class DefinitionVectors:
    """The extra vectors of the leaves that hold definitions inside them
    (:mod:`hsc.embed.definitions`): a search scores such a leaf by the best of its vectors."""

    rows: np.ndarray = field(default_factory=_no_rows)  # int64, the leaf row of each vector, ascending
    vectors: np.ndarray = field(default_factory=_no_vectors)  # float32 (m, dim), L2-normalised

    def __len__(self) -> int:
        return len(self.rows)

    @cached_property
    def _starts(self) -> np.ndarray:
        """Index of the first vector of each leaf row from 0 to the last holding one, and past it."""
        last = int(self.rows[-1]) + 1 if len(self.rows) else 0
        return np.searchsorted(self.rows, np.arange(last + 1))

    @cached_property
    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(the leaf rows holding vectors, ascending; the index of each one's first vector)."""
        holding = np.flatnonzero(np.diff(self._starts))
        return holding, self._starts[holding]

    def first_of_row(self, rows: np.ndarray) -> np.ndarray:
        """The index of the first vector of each leaf row (of the next row's when it has none):
        the vectors of row r are ``first_of_row(r)`` to ``first_of_row(r + 1)``, exclusive."""
        return self._starts[np.minimum(rows, len(self._starts) - 1)]


@dataclass(frozen=True)
class LeafTable:
    """The leaves of one repository in document order (files sorted by path,
    leaves by position), as parallel arrays. Rows of one file are contiguous."""

    leaf_ids: np.ndarray  # int64, store ids
    file_index: np.ndarray  # int32, index into ``paths``
    paths: list[str]
    scopes: list[str]
    start_lines: np.ndarray  # int32
    end_lines: np.ndarray  # int32
    token_counts: np.ndarray  # int32
    vectors: np.ndarray  # float32 (n, dim), L2-normalised
    # Leaves holding definitions inside them have a vector for each too (none: one vector a leaf).
    definitions: DefinitionVectors = field(default_factory=DefinitionVectors)

    def __len__(self) -> int:
        return len(self.leaf_ids)


@dataclass(frozen=True)
class MidGroup:
    """A run of adjacent leaves of one file with no boundary inside."""

    ordinal: int
    file_index: int
    leaf_start: int  # row in the LeafTable, inclusive
    leaf_end: int  # exclusive
    start_line: int
    end_line: int
    token_count: int
    needs_summary: bool  # longer than maximum_merged_chunk_token_length

    @property
    def leaf_count(self) -> int:
        return self.leaf_end - self.leaf_start


@dataclass(frozen=True)
class DocumentNode:
    """The top-level node of one file: its groups and leaves."""

    file_index: int
    path: str
    group_start: int  # ordinal of its first group, inclusive
    group_end: int  # exclusive
    leaf_start: int
    leaf_end: int
    start_line: int
    end_line: int
    token_count: int


@dataclass(frozen=True)
class HierarchyPlan:
    """Groups and documents as parallel arrays (struct of arrays keeps a
    20,000-leaf rebuild well under 100 ms); ``group(i)`` and ``document(i)``
    give the dataclass view of one."""

    parameters: Parameters
    segmentation: Segmentation
    group_starts: np.ndarray  # int64 leaf row of each group's first leaf
    group_ends: np.ndarray  # int64, exclusive
    group_tokens: np.ndarray  # int64
    group_end_lines: np.ndarray  # int64: max end line over the group's leaves
    document_group_starts: np.ndarray  # int64 ordinal of each document's first group
    document_group_ends: np.ndarray  # int64, exclusive
    table: LeafTable

    # Pooled on first use: a preview (a slider step) needs only the boundaries and counts,
    # and pooling was about 17 ms of the 27 ms a 20,000-leaf preview took.
    @cached_property
    def group_vectors(self) -> np.ndarray:
        """(groups, dim): the re-normalised mean of each group's leaves."""
        return mean_pool(self.table.vectors, self.group_starts)

    @cached_property
    def document_vectors(self) -> np.ndarray:
        """(documents, dim): the re-normalised mean of each file's leaves."""
        return mean_pool(self.table.vectors, self.group_starts[self.document_group_starts])

    @property
    def group_count(self) -> int:
        return len(self.group_starts)

    @property
    def document_count(self) -> int:
        return len(self.document_group_starts)

    @property
    def needs_summary(self) -> np.ndarray:
        return self.group_tokens > self.parameters.maximum_merged_chunk_token_length

    def group(self, ordinal: int) -> MidGroup:
        start, end = int(self.group_starts[ordinal]), int(self.group_ends[ordinal])
        tokens = int(self.group_tokens[ordinal])
        return MidGroup(
            ordinal=ordinal,
            file_index=int(self.table.file_index[start]),
            leaf_start=start,
            leaf_end=end,
            start_line=int(self.table.start_lines[start]),
            end_line=int(self.group_end_lines[ordinal]),
            token_count=tokens,
            needs_summary=tokens > self.parameters.maximum_merged_chunk_token_length,
        )

    def groups(self) -> list[MidGroup]:
        return [self.group(i) for i in range(self.group_count)]

    def document(self, ordinal: int) -> DocumentNode:
        gs, ge = int(self.document_group_starts[ordinal]), int(self.document_group_ends[ordinal])
        leaf_start, leaf_end = int(self.group_starts[gs]), int(self.group_ends[ge - 1])
        file_index = int(self.table.file_index[leaf_start])
        return DocumentNode(
            file_index=file_index,
            path=self.table.paths[file_index],
            group_start=gs,
            group_end=ge,
            leaf_start=leaf_start,
            leaf_end=leaf_end,
            start_line=int(self.table.start_lines[leaf_start]),
            end_line=int(self.group_end_lines[gs:ge].max()),
            token_count=int(self.group_tokens[gs:ge].sum()),
        )

    def documents(self) -> list[DocumentNode]:
        return [self.document(i) for i in range(self.document_count)]

    def group_of_leaf(self) -> np.ndarray:
        """Group ordinal of every leaf row."""
        return np.repeat(np.arange(self.group_count), self.group_ends - self.group_starts)


def mean_pool(vectors: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Re-normalised mean of the contiguous row runs beginning at ``starts``.

    A sparse membership matrix times the vectors: measured about 8 ms for
    20,000 x 384 here, where ``np.add.reduceat`` along rows took about 100 ms.
    """
    from scipy import sparse  # here, not at the top: a cold query pools without it

    dim = vectors.shape[1]
    if len(starts) == 0:
        return np.zeros((0, dim), dtype=np.float32)
    n = len(vectors)
    run_of_row = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    membership = sparse.csr_matrix(
        (np.ones(n, dtype=np.float32), (run_of_row, np.arange(n))), shape=(len(starts), n)
    )
    sums = np.asarray(membership @ vectors, dtype=np.float32)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    # The mean and the sum point the same way, so normalising the sum suffices.
    return sums / np.maximum(norms, 1e-12)


def plan_hierarchy(table: LeafTable, parameters: Parameters) -> HierarchyPlan:
    """Group the leaves (the group and document vectors are pooled when first
    read). Every leaf lands in exactly one group; groups are contiguous and
    never cross files."""
    seg = segment(
        table.vectors,
        table.file_index,
        parameters.similarity_drop_threshold,
        parameters.smoothing_window_size,
        parameters.boundary_rule,
        table.scopes,
    )
    n = len(table)
    if n == 0:
        group_starts = np.zeros(0, dtype=np.int64)
        group_ends = group_tokens = group_end_lines = doc_starts = doc_ends = group_starts
    else:
        group_starts = np.concatenate(([0], np.flatnonzero(seg.boundaries) + 1)).astype(np.int64)
        group_ends = np.concatenate((group_starts[1:], [n])).astype(np.int64)
        token_cumsum = np.concatenate(([0], np.cumsum(table.token_counts, dtype=np.int64)))
        group_tokens = token_cumsum[group_ends] - token_cumsum[group_starts]
        # Leaves are in order but a merged leaf may end after its successor starts
        # a line later, so take the max end line of the run rather than the last.
        group_end_lines = np.maximum.reduceat(table.end_lines.astype(np.int64), group_starts)
        group_files = table.file_index[group_starts]
        doc_starts = np.concatenate(([0], np.flatnonzero(np.diff(group_files)) + 1)).astype(np.int64)
        doc_ends = np.concatenate((doc_starts[1:], [len(group_starts)])).astype(np.int64)
    return HierarchyPlan(
        parameters=parameters,
        segmentation=seg,
        group_starts=group_starts,
        group_ends=group_ends,
        group_tokens=group_tokens,
        group_end_lines=group_end_lines,
        document_group_starts=doc_starts,
        document_group_ends=doc_ends,
        table=table,
    )
