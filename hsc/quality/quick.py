"""A quick Recall@10 of the current hierarchy settings on the repository's own docstrings.

For a tuner on the Similarity page: what a threshold or window does to retrieval,
measured in a second rather than by a benchmark run. The queries are a fixed sample
of the repository's documented definitions (the first sentence of each docstring,
as the index recorded it); a query is answered when one of the ten leaves retrieved
overlaps its definition's lines. Unlike ``bench quality`` the docstrings stay in the
code here, so the figures are higher than the benchmark's: compare settings with it,
not systems.

Only the dense two stages are scored: stage 1 over the groups these settings make,
stage 2 over their leaves, with the query parameters (mid_level_top_k,
stage1_leaf_share, group_score_weight); the shipped hybrid mode adds BM25 on top of
the same two stages. Flat search over every leaf is given beside it: the hierarchy
does not change it, so it is the ceiling the two stages are read against.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from hsc.hierarchy.groups import HierarchyPlan
from hsc.params import Parameters
from hsc.search.two_stage import MidLevelIndex, TwoStageRetriever, flat_search
from hsc.store import Store

K = 10
QUICK_QUERIES = 60
MIN_WORDS = 4  # "Return the value." says too little to find a definition by


@dataclass(frozen=True)
class DocQuery:
    """A docstring's first sentence, and the lines of the definition it documents."""

    query: str
    path: str
    start_line: int
    end_line: int


def docstring_queries(
    store: Store, repository_id: int, count: int = QUICK_QUERIES, seed: int = 0
) -> list[DocQuery]:
    """A fixed sample of the repository's documented definitions (the same for every setting)."""
    found = [
        DocQuery(" ".join(d.doc.split()), path, int(d.start_line), int(d.end_line))
        for path, definitions in store.definitions(repository_id).items()
        for d in definitions
        if d.kind != "file" and d.doc and len(d.doc.split()) >= MIN_WORDS
    ]
    unique = list({q.query: q for q in found}.values())  # one target per query text
    if len(unique) <= count:
        return unique
    return sorted(random.Random(seed).sample(unique, count), key=lambda q: (q.path, q.start_line))


@dataclass(frozen=True)
class QuickRecall:
    queries: int
    two_stage: float  # Recall@10 of the dense two stages with these settings
    flat: float  # of flat search over every leaf (the settings do not change it)
    groups: int


def _answers(plan: HierarchyPlan, rows: list[int], query: DocQuery) -> bool:
    table = plan.table
    for row in rows:
        path = table.paths[int(table.file_index[row])]
        if (
            path == query.path
            and table.start_lines[row] <= query.end_line
            and table.end_lines[row] >= query.start_line
        ):
            return True
    return False


def flat_recall(plan: HierarchyPlan, queries: list[DocQuery], vectors: np.ndarray) -> float:
    """Recall@10 of flat search over every leaf, scored as stage 2 scores (definition vectors
    included): the ceiling the two stages are read against; no hierarchy setting changes it."""
    table = plan.table
    found = 0
    for query, vector in zip(queries, vectors):
        nearest = flat_search(table.vectors, vector, K, definitions=table.definitions)
        found += _answers(plan, [hit.row for hit in nearest.leaves], query)
    return found / max(len(queries), 1)


def quick_recall(
    plan: HierarchyPlan,
    queries: list[DocQuery],
    vectors: np.ndarray,
    params: Parameters,
    flat: float | None = None,
) -> QuickRecall:
    """Recall@10 of ``queries`` (embedded as ``vectors``) on the hierarchy ``plan``; ``flat``:
    :func:`flat_recall` when already known (it is the same for every setting)."""
    table = plan.table
    retriever = TwoStageRetriever(
        table.vectors,
        plan.group_starts,
        plan.group_ends,
        lambda built: MidLevelIndex.build(built.group_vectors),
        table.definitions,
    )
    budget = math.ceil(params.stage1_leaf_share * len(table))
    staged = 0
    for query, vector in zip(queries, vectors):
        found = retriever.search(vector, params.mid_level_top_k, K, budget, params.group_score_weight)
        staged += _answers(plan, [hit.row for hit in found.leaves], query)
    if flat is None:
        flat = flat_recall(plan, queries, vectors)
    return QuickRecall(len(queries), staged / max(len(queries), 1), flat, int(plan.group_count))
