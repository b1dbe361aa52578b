"""Stage 5: two-stage retrieval, and the flat search it is measured against.

Stage 1 asks an HNSW index (hnswlib, inner product on normalised vectors =
cosine) for the ``mid_level_top_k`` nearest groups. Stage 2 scores only the
leaves of those groups, exactly, and keeps ``leaf_level_top_k``. Groups are
contiguous runs of the leaf matrix, so stage 2 reads slices, not a gather
over the whole table.

A stage 1 widened to a leaf budget (``stage1_leaf_share``) asks for a share of
all groups, not a handful; past :data:`EXACT_STAGE1_SHARE` of them it scores
every group vector exactly instead, which is both faster and exact there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import hnswlib
import numpy as np

from hsc.hierarchy.groups import DefinitionVectors, mean_pool
from hsc.search.lexical import fuse

# What ``Index.query(mode=...)`` accepts: the seed's two stages, the exact
# search over every leaf that they are judged by, and each fused with BM25
# over identifier-split leaf text (see hsc.search.lexical).
LEXICAL_MODES = ("hybrid", "hybrid-flat")

# When stage 1 needs more than this share of the groups, one product with the
# group matrix beats HNSW: hnswlib's cost grows with ef >= k while the exact
# scan's does not. Measured over synthetic tables (one thread, 30 queries): at
# 5,269 groups HNSW and the scan cross near k = 100 (1.9%), at 26,598 groups
# near k = 500 (1.9%); at k = 20% of the groups, what the shipped share of 0.1
# asks for, the scan was 11x (5,269) and 4.8x (26,598) faster, and HNSW there
# missed up to 4% of the exact top k at k = 2% of the groups.
EXACT_STAGE1_SHARE = 0.02

# Stage 2 gathers its leaves' vectors this many rows at a time into one buffer
# (384 floats a row: 384 KB, within a core's L2) and scores each block. Gathering
# a tenth of 10^6 rows, in groups spread over the table, at once wrote 150 MB out
# to memory and read it back, and cost as much as the flat scan of all rows;
# blocks of 128 and 256 rows took 0.59x the time of the one gather at 10^6 rows
# and 0.9x at 10^5, 512 rows 0.67x and 1.1x, 1,024 0.93x and 1.7x (random
# 384-d tables, groups of 1-7 rows, a tenth of them opened, 3 runs each).
ROWS_PER_BLOCK = 256


@dataclass(frozen=True)
class GroupHit:
    ordinal: int  # group ordinal in the hierarchy plan
    score: float


def _no_ordinals() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


def _no_scores() -> np.ndarray:
    return np.zeros(0, dtype=np.float32)


@dataclass(frozen=True)
class GroupHits:
    """Stage 1's groups, best first, as two arrays: a widened stage 1 opens tens of
    thousands (a tenth of the leaves' groups), and one object per group cost a
    quarter of a query at 10^6 leaves. Iterating or indexing it gives GroupHit objects."""

    ordinals: np.ndarray = field(default_factory=_no_ordinals)  # int64
    scores: np.ndarray = field(default_factory=_no_scores)  # float32

    def __len__(self) -> int:
        return len(self.ordinals)

    def __iter__(self) -> Iterator[GroupHit]:
        return map(GroupHit, self.ordinals.tolist(), self.scores.tolist())

    def __getitem__(self, index: int) -> GroupHit:
        return GroupHit(int(self.ordinals[index]), float(self.scores[index]))

    def first(self, count: int) -> GroupHits:
        return GroupHits(self.ordinals[:count], self.scores[:count])


@dataclass(frozen=True)
class LeafHit:
    row: int  # row in the leaf table
    score: float
    group: int  # ordinal of the parent group, -1 for the flat search
    group_score: float  # the parent's stage-1 score (NaN for the flat search)


@dataclass(frozen=True)
class Retrieval:
    groups: GroupHits
    leaves: list[LeafHit]
    leaves_compared: int
    # Of leaves_compared, those inside the groups stage 1 opened (the rest: BM25 candidates).
    opened_leaves: int = 0


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, highest first (ties by index)."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    # argpartition finds the k best in linear time; only those are sorted.
    candidates = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return candidates[np.lexsort((candidates, -scores[candidates]))]


DETERMINISTIC_BUILD = 2_000


class MidLevelIndex:
    """HNSW over the mid-level group vectors; labels are group ordinals."""

    def __init__(self, index: hnswlib.Index, count: int) -> None:
        self._index = index
        self.count = count

    @classmethod
    def build(
        cls, vectors: np.ndarray, ef_construction: int = 200, m: int = 16, seed: int = 7
    ) -> MidLevelIndex:
        count, dim = vectors.shape
        index = hnswlib.Index(space="ip", dim=dim)
        index.init_index(max_elements=max(count, 1), ef_construction=ef_construction, M=m, random_seed=seed)
        if count:
            # Threads insert in a racy order, so a threaded graph (and its answers) differs from
            # run to run; up to DETERMINISTIC_BUILD groups one thread builds it (0.3 s for 2,000
            # random 384-d vectors on 2 cores), so the same vectors always give the same index.
            threads = 1 if count <= DETERMINISTIC_BUILD else -1
            index.add_items(
                np.ascontiguousarray(vectors, dtype=np.float32), np.arange(count), num_threads=threads
            )
        return cls(index, count)

    @classmethod
    def load(cls, path: Path, dim: int, count: int) -> MidLevelIndex | None:
        """The saved index, or None when it is missing or does not match."""
        if not path.exists():
            return None
        index = hnswlib.Index(space="ip", dim=dim)
        try:
            index.load_index(str(path), max_elements=max(count, 1))
        except RuntimeError:
            return None
        if index.get_current_count() != count:
            return None
        return cls(index, count)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # one per process saving
        try:
            self._index.save_index(str(temporary))
            temporary.replace(path)  # never leave a half-written index behind
        finally:
            temporary.unlink(missing_ok=True)

    def vector(self, ordinal: int) -> np.ndarray:
        return np.asarray(self._index.get_items([ordinal])[0], dtype=np.float32)

    def search(self, query: np.ndarray, k: int) -> GroupHits:
        k = min(k, self.count)
        if k <= 0:
            return GroupHits()
        # ef must be >= k; a margin above k buys recall at little cost.
        self._index.set_ef(max(64, 2 * k))
        labels, distances = self._index.knn_query(query.reshape(1, -1).astype(np.float32), k=k)
        # hnswlib's "ip" distance is 1 - dot product.
        return GroupHits(labels[0].astype(np.int64), (1.0 - distances[0]).astype(np.float32))


def stage_one_ask(group_sizes: np.ndarray, mid_level_top_k: int, leaf_budget: int) -> int:
    """How many groups a widened stage 1 asks for first: about as many as the budget needs."""
    return max(mid_level_top_k, int(2 * leaf_budget / max(float(np.mean(group_sizes)), 1.0)))


def stage_one_is_exact(group_sizes: np.ndarray, mid_level_top_k: int, leaf_budget: int) -> bool:
    """Whether stage 1 scores every group exactly rather than walking the HNSW graph: when it
    is widened (``leaf_budget``) past :data:`EXACT_STAGE1_SHARE` of the groups."""
    if leaf_budget <= 0 or not len(group_sizes):
        return False
    return stage_one_ask(group_sizes, mid_level_top_k, leaf_budget) > EXACT_STAGE1_SHARE * len(group_sizes)


class TwoStageRetriever:
    """Stage 1 picks groups, stage 2 scores only their leaves.

    Beyond the seed (each off by default, see :class:`hsc.params.Parameters`):
    ``leaf_budget`` widens stage 1 until its groups hold that many leaves;
    ``group_weight`` adds the group's stage-1 score to each leaf's; ``lexical``
    (leaf row -> BM25 score) adds its best leaves to the candidates and fuses
    its scores with the dense ones; ``definitions`` score a leaf that holds
    definitions by the best of its vectors (:func:`best_of_definitions`).
    """

    def __init__(
        self,
        leaf_vectors: np.ndarray,
        group_starts: np.ndarray,
        group_ends: np.ndarray,
        mid_index: MidLevelIndex | Callable[[TwoStageRetriever], MidLevelIndex],
        definitions: DefinitionVectors | None = None,
    ) -> None:
        """``mid_index`` is the HNSW index over the groups, or what loads or
        builds it from this retriever: then it is made on first use, as a
        stage 1 widened past :data:`EXACT_STAGE1_SHARE` never walks it. Groups
        are pooled from the leaves' own vectors, never the definitions'."""
        self.leaf_vectors = leaf_vectors
        self.definitions = definitions or DefinitionVectors()
        self.group_starts = group_starts
        self.group_ends = group_ends
        self._mid_index = mid_index
        self.group_sizes = group_ends - group_starts
        self.group_of_row = np.repeat(np.arange(len(group_starts)), self.group_sizes)
        self._group_vectors: np.ndarray | None = None

    @property
    def mid_index(self) -> MidLevelIndex:
        if not isinstance(self._mid_index, MidLevelIndex):
            self._mid_index = self._mid_index(self)
        return self._mid_index

    @property
    def group_vectors(self) -> np.ndarray:
        """The groups' pooled vectors, the ones the HNSW index was built from;
        pooled on first use, as a loaded index does not keep them."""
        if self._group_vectors is None:
            vectors = np.asarray(self.leaf_vectors, dtype=np.float32)
            self._group_vectors = mean_pool(vectors, self.group_starts)
        return self._group_vectors

    def stage_one(self, query: np.ndarray, mid_level_top_k: int, leaf_budget: int = 0) -> GroupHits:
        """The ``mid_level_top_k`` nearest groups, or with a ``leaf_budget`` the
        nearest groups until they hold that many leaves (never fewer groups)."""
        if leaf_budget <= 0:
            return self.mid_index.search(query, mid_level_top_k)
        k = stage_one_ask(self.group_sizes, mid_level_top_k, leaf_budget)
        if stage_one_is_exact(self.group_sizes, mid_level_top_k, leaf_budget):
            return self._exact_stage_one(query, mid_level_top_k, leaf_budget, k)
        while True:
            groups = self.mid_index.search(query, k)
            held = np.cumsum(self.group_sizes[groups.ordinals])
            enough = np.flatnonzero(held >= leaf_budget)
            if len(enough) or k >= self.mid_index.count:
                keep = int(enough[0]) + 1 if len(enough) else len(groups)
                return groups.first(max(keep, mid_level_top_k))
            k *= 2

    def _group_vector(self, ordinal: int) -> np.ndarray:
        # The pooled matrix when stage 1 made it; else one row of the graph, not a pooling of all.
        if self._group_vectors is None and isinstance(self._mid_index, MidLevelIndex):
            return self._mid_index.vector(ordinal)
        return self.group_vectors[ordinal]

    def _exact_stage_one(
        self, query: np.ndarray, mid_level_top_k: int, leaf_budget: int, k: int
    ) -> GroupHits:
        """Stage 1 by scoring every group: the nearest groups, best first, until
        they hold ``leaf_budget`` leaves (never fewer than ``mid_level_top_k``)."""
        scores = self.group_vectors @ query.astype(np.float32)
        count = len(scores)
        while True:
            k = min(k, count)
            nearest = np.argpartition(-scores, k - 1)[:k] if k < count else np.arange(count)
            nearest = nearest[np.argsort(-scores[nearest], kind="stable")]
            held = np.cumsum(self.group_sizes[nearest])
            enough = np.flatnonzero(held >= leaf_budget)
            if len(enough) or k >= count:
                keep = max(int(enough[0]) + 1 if len(enough) else k, mid_level_top_k)
                return GroupHits(nearest[:keep].astype(np.int64), scores[nearest[:keep]])
            k *= 2

    def _group_rows(self, groups: GroupHits) -> tuple[np.ndarray, np.ndarray]:
        """The leaf rows of ``groups`` in their order, and each row's group score,
        without a Python loop over rows (a widened stage 1 holds thousands of groups)."""
        sizes = self.group_sizes[groups.ordinals]
        # Row i of the result is its group's start plus its place inside the group.
        first_of_group = np.repeat(np.cumsum(sizes) - sizes, sizes)
        rows = (
            np.repeat(self.group_starts[groups.ordinals], sizes)
            + np.arange(int(sizes.sum()))
            - first_of_group
        )
        scores = np.repeat(groups.scores.astype(np.float32), sizes)
        return rows.astype(np.int64), scores

    def _row_scores(self, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosine of the leaves ``rows`` with the query (the best of a leaf's vectors)."""
        return best_of_definitions(
            gathered_scores(self.leaf_vectors, rows, query), rows, self.definitions, query
        )

    def search(
        self,
        query: np.ndarray,
        mid_level_top_k: int,
        leaf_level_top_k: int,
        leaf_budget: int = 0,
        group_weight: float = 0.0,
        lexical: dict[int, float] | None = None,
        lexical_weight: float = 0.0,
        boost: dict[int, float] | None = None,
        fusion: str = "sum",
    ) -> Retrieval:
        """``fusion``: how BM25 joins the cosine (hsc.search.lexical.fuse). ``boost``: row -> a score
        added to that leaf's, which is a candidate whatever stage 1 opened (the leaves holding
        definitions the query names, hsc.search.names)."""
        groups = self.stage_one(query, mid_level_top_k, leaf_budget)
        if not groups:
            return Retrieval(GroupHits(), [], 0)
        rows, owner_scores = self._group_rows(groups)
        opened_leaves = len(rows)
        found = {**(lexical or {}), **dict.fromkeys(boost or {}, 0.0)}
        if found:
            group_score = dict(zip(groups.ordinals.tolist(), groups.scores.tolist()))
            # The lexical candidates stage 1 did not open, in row order (marks over the table, as
            # rows hold up to 10^5 at 10^6 leaves: sorting them to compare cost 15 ms a query).
            opened = np.zeros(len(self.leaf_vectors), dtype=np.bool_)
            opened[rows] = True
            candidates = np.fromiter(found, dtype=np.int64, count=len(found))
            extra = np.unique(candidates[~opened[candidates]])
            for ordinal in {int(self.group_of_row[r]) for r in extra} - set(group_score):
                # A group stage 1 did not pick: its score is its mean vector's, as stage 1 would give.
                group_score[ordinal] = float(self._group_vector(ordinal) @ query)
            rows = np.concatenate([rows, extra])
            extra_scores = [group_score[int(o)] for o in self.group_of_row[extra]]
            owner_scores = np.concatenate([owner_scores, np.array(extra_scores, dtype=np.float32)])
        scores = self._row_scores(rows, query)
        if group_weight:
            scores = scores + group_weight * owner_scores
        if lexical:
            scores = fuse(
                scores,
                lexical_by_row(lexical, len(self.leaf_vectors), np.float64)[rows],
                lexical_weight,
                fusion,
            )
        if boost:
            scores = scores + lexical_by_row(boost, len(self.leaf_vectors), np.float64)[rows]
        best = top_k(scores, leaf_level_top_k)
        owners = self.group_of_row[rows[best]]
        leaves = [
            LeafHit(int(rows[i]), float(scores[i]), int(owner), float(owner_scores[i]))
            for i, owner in zip(best, owners)
        ]
        return Retrieval(groups, leaves, int(len(rows)), opened_leaves)


def gathered_scores(vectors: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of the ``rows`` of ``vectors`` with the query, gathered ROWS_PER_BLOCK at a
    time into one buffer that stays in the core's cache (see ROWS_PER_BLOCK)."""
    if len(rows) <= ROWS_PER_BLOCK:
        return np.asarray(vectors[rows] @ query, dtype=np.float32)
    query = np.asarray(query, dtype=vectors.dtype)
    scores = np.empty(len(rows), dtype=np.result_type(vectors.dtype, np.float32))
    block = np.empty((ROWS_PER_BLOCK, vectors.shape[1]), dtype=vectors.dtype)
    for start in range(0, len(rows), ROWS_PER_BLOCK):
        part = rows[start : start + ROWS_PER_BLOCK]
        vectors.take(part, axis=0, out=block[: len(part)])
        np.matmul(block[: len(part)], query, out=scores[start : start + len(part)])
    return scores


def best_of_definitions(
    scores: np.ndarray, rows: np.ndarray, definitions: DefinitionVectors, query: np.ndarray
) -> np.ndarray:
    """``scores`` (of the leaves ``rows``) raised, for each leaf with definition vectors, to the
    best cosine among them: a query about one function of a merged leaf meets that function's
    vector, not only the blend (:mod:`hsc.embed.definitions`)."""
    if not len(definitions) or not len(rows):
        return scores
    first = definitions.first_of_row(rows)
    counts = definitions.first_of_row(rows + 1) - first
    holding = np.flatnonzero(counts)
    if not len(holding):
        return scores
    counts = counts[holding]
    # The definition vectors of each holding row, one run per row, rows in their order here.
    run_starts = np.cumsum(counts) - counts
    picked = np.repeat(first[holding] - run_starts, counts) + np.arange(int(counts.sum()))
    best = np.maximum.reduceat(gathered_scores(definitions.vectors, picked, query), run_starts)
    out = np.array(scores, dtype=np.result_type(scores.dtype, np.float32))
    out[holding] = np.maximum(out[holding], best)
    return out


def _best_of_all(scores: np.ndarray, definitions: DefinitionVectors, query: np.ndarray) -> np.ndarray:
    """:func:`best_of_definitions` over the whole table: one product with every definition vector."""
    rows, run_starts = definitions.runs
    best = np.maximum.reduceat(definitions.vectors @ query.astype(np.float32), run_starts)
    out = np.array(scores, dtype=np.result_type(scores.dtype, np.float32))
    out[rows] = np.maximum(out[rows], best)
    return out


def lexical_by_row(lexical: dict[int, float], leaves: int, dtype: type = np.float32) -> np.ndarray:
    """The BM25 score of each of the table's ``leaves`` rows, 0 for a row the look-up did not find."""
    scores = np.zeros(leaves, dtype=dtype)
    scores[list(lexical)] = list(lexical.values())
    return scores


def flat_search(
    leaf_vectors: np.ndarray,
    query: np.ndarray,
    k: int,
    lexical: dict[int, float] | None = None,
    lexical_weight: float = 0.0,
    definitions: DefinitionVectors | None = None,
    boost: dict[int, float] | None = None,
    fusion: str = "sum",
) -> Retrieval:
    """Exact cosine over every leaf: the baseline two-stage retrieval is judged by
    (with ``lexical``, fused with BM25 as in :meth:`TwoStageRetriever.search`; with
    ``definitions``, a leaf holding definitions scored by the best of its vectors)."""
    if len(leaf_vectors) == 0:
        return Retrieval(GroupHits(), [], 0)
    scores = leaf_vectors @ query
    if definitions is not None and len(definitions):
        scores = _best_of_all(scores, definitions, query)
    if lexical:
        scores = fuse(scores, lexical_by_row(lexical, len(scores)), lexical_weight, fusion)
    if boost:
        scores = scores + lexical_by_row(boost, len(scores))
    leaves = [LeafHit(int(i), float(scores[i]), -1, float("nan")) for i in top_k(scores, k)]
    return Retrieval(GroupHits(), leaves, int(len(leaf_vectors)))
