"""Speed suites of ``python -m hsc bench``: chunking, embedding, the whole
index, hierarchy rebuilds and queries.

Timings are printed, never asserted: they depend on the machine. Each suite
says what it measured and on what, so a run can be compared with another.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed import normalise
from hsc.hierarchy.groups import LeafTable, mean_pool, plan_hierarchy
from hsc.params import Parameters
from hsc.search.two_stage import MidLevelIndex, TwoStageRetriever, flat_search

SAMPLE_REPOS = Path(__file__).resolve().parent.parent.parent / "hsc" / "samples"


def synthetic_table(n: int, dim: int = 384, seed: int = 0) -> LeafTable:
    """Leaves whose vectors drift by topic, in files of 5 to 60 leaves: the
    structure real repositories have, so segmentation has work to do."""
    rng = np.random.default_rng(seed)
    topics = normalise(rng.normal(size=(max(8, n // 40), dim)).astype(np.float32))
    run_lengths = rng.integers(2, 12, n)
    topic_of_leaf = np.repeat(rng.integers(0, len(topics), n), run_lengths)[:n]
    # Noise of norm ~0.8 puts same-topic neighbours near 0.6 cosine, others near 0.
    # Made in float32 and in slices, so 10^6 leaves need no float64 copy (3 GB).
    vectors = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        end = min(n, start + 100_000)
        noise = rng.standard_normal(size=(end - start, dim), dtype=np.float32) * (0.8 / np.sqrt(dim))
        vectors[start:end] = normalise(topics[topic_of_leaf[start:end]] + noise)
    file_sizes = rng.integers(5, 60, n // 5 + 1)
    file_index = np.repeat(np.arange(len(file_sizes)), file_sizes)[:n].astype(np.int32)
    lines = np.arange(n, dtype=np.int32) * 12 + 1
    return LeafTable(
        leaf_ids=np.arange(1, n + 1, dtype=np.int64),
        file_index=file_index,
        paths=[f"pkg/module_{i}.py" for i in range(int(file_index[-1]) + 1)],
        scopes=[f"pkg.scope_{i}" for i in range(n)],
        start_lines=lines,
        end_lines=lines + 10,
        token_counts=rng.integers(24, 256, n).astype(np.int32),
        vectors=vectors,
    )


def _percentiles(samples: list[float]) -> dict[str, float]:
    values = np.array(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 3),
        "p95_ms": round(float(np.percentile(values, 95)), 3),
        "min_ms": round(float(values.min()), 3),
    }


def bench_hierarchy(n: int = 20_000, repeats: int = 20) -> dict[str, Any]:
    """Rebuilding the hierarchy from cached vectors (numpy only)."""
    table = synthetic_table(n)
    params = Parameters(similarity_drop_threshold=0.45, smoothing_window_size=2)
    plan_hierarchy(table, params)  # warm-up
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        plan = plan_hierarchy(table, params)
        samples.append(time.perf_counter() - started)
    return {
        "suite": "hierarchy",
        "leaves": n,
        "groups": plan.group_count,
        "documents": plan.document_count,
        **_percentiles(samples),
        "target": "under 100 ms",
    }


def bench_query(n: int = 100_000, queries: int = 200) -> dict[str, Any]:
    """Two-stage query over ``n`` synthetic leaves, without the query's own
    embedding, against the flat exact search over all of them."""
    table = synthetic_table(n, seed=1)
    params = Parameters()
    plan = plan_hierarchy(table, params)
    started = time.perf_counter()
    mid_index = MidLevelIndex.build(mean_pool(table.vectors, plan.group_starts))
    build_seconds = time.perf_counter() - started
    retriever = TwoStageRetriever(table.vectors, plan.group_starts, plan.group_ends, mid_index)
    rng = np.random.default_rng(2)
    rows = rng.integers(0, n, queries)
    noise = rng.normal(size=(queries, table.vectors.shape[1])).astype(np.float32) * 0.03
    query_vectors = normalise(table.vectors[rows] + noise)
    staged_times, flat_times, compared, recall = [], [], [], []
    k = params.leaf_level_top_k
    for query in query_vectors:
        started = time.perf_counter()
        staged = retriever.search(query, params.mid_level_top_k, k)
        staged_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        exact = flat_search(table.vectors, query, k)
        flat_times.append(time.perf_counter() - started)
        compared.append(staged.leaves_compared)
        recall.append(len({h.row for h in staged.leaves} & {h.row for h in exact.leaves}) / k)
    return {
        "suite": "query",
        "leaves": n,
        "groups": plan.group_count,
        "hnsw_build_seconds": round(build_seconds, 2),
        "mid_level_top_k": params.mid_level_top_k,
        "leaf_level_top_k": k,
        "queries": queries,
        "two_stage": {
            **_percentiles(staged_times),
            "leaves_compared_mean": round(float(np.mean(compared)), 1),
        },
        "flat": {**_percentiles(flat_times), "leaves_compared": n},
        "recall_at_k_vs_flat": round(float(np.mean(recall)), 3),
        "target": "two-stage p50 under 20 ms",
    }
