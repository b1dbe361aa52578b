"""Speed suites of ``python -m hsc bench``: chunking, embedding, the whole
index, hierarchy rebuilds and queries.

Timings are printed, never asserted: they depend on the machine. Each suite
says what it measured and on what, so a run can be compared with another.
"""

from __future__ import annotations

import sysconfig
import time
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed import normalise
from hsc.hierarchy import LeafTable, mean_pool, plan_hierarchy
from hsc.params import Parameters, Settings
from hsc.retrieve import MidLevelIndex, TwoStageRetriever, flat_search
from hsc.tokens import get_counter

SAMPLE_REPOS = Path(__file__).resolve().parent.parent.parent / "sample_repos"


def bench_embed() -> dict[str, Any]:
    """Embedding throughput of the default model on the sample repositories' leaves."""
    from hsc.embed import SentenceTransformerEmbedder
    from hsc.ingest import load_file, walk_repository

    params, settings, counter = Parameters(), Settings(), get_counter()
    texts = []
    for repo in sorted(p for p in SAMPLE_REPOS.iterdir() if p.is_dir()):
        for rel_path in walk_repository(repo):
            texts += [
                leaf.embedding_text for leaf in load_file(repo, rel_path, params, settings, counter).leaves
            ]
    started = time.perf_counter()
    embedder = SentenceTransformerEmbedder(settings.embedding_model)
    load_seconds = time.perf_counter() - started
    embedder.embed(texts[:8])  # warm-up
    started = time.perf_counter()
    embedder.embed(texts, batch_size=params.embedding_batch_size)
    seconds = time.perf_counter() - started
    return {
        "suite": "embed",
        "model": settings.embedding_model,
        "leaves": len(texts),
        "mean_tokens": round(float(np.mean([counter.count(t) for t in texts])), 1),
        "batch_size": params.embedding_batch_size,
        "load_seconds": round(load_seconds, 2),
        "seconds": round(seconds, 2),
        "leaves_per_second": round(len(texts) / seconds, 1),
    }


def bench_index(path: Path | None = None) -> dict[str, Any]:
    """The whole pipeline on a real folder (default: the standard library's
    ``email`` package) into a fresh database, then again with nothing changed."""
    import tempfile

    from hsc.api import Index

    root = path or Path(sysconfig.get_paths()["stdlib"]) / "email"
    with tempfile.TemporaryDirectory() as folder, Index.open(Path(folder) / "bench.db") as index:
        started = time.perf_counter()
        first = index.index(root)
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = index.index(root)
        unchanged_seconds = time.perf_counter() - started
        hierarchy = index.hierarchies(first.repository_id)[0]
    return {
        "suite": "index",
        "root": str(root),
        "files": first.files_seen,
        "leaves": first.leaves,
        "groups": hierarchy["group_count"],
        "seconds_with_model_load": round(seconds, 1),
        "leaves_per_second": round(first.leaves / seconds, 1),
        "reindex_unchanged_seconds": round(unchanged_seconds, 2),
        "reindex_leaves_embedded": again.leaves_embedded,
    }


def synthetic_table(n: int, dim: int = 384, seed: int = 0) -> LeafTable:
    """Leaves whose vectors drift by topic, in files of 5 to 60 leaves: the
    structure real repositories have, so segmentation has work to do."""
    rng = np.random.default_rng(seed)
    topics = normalise(rng.normal(size=(max(8, n // 40), dim)).astype(np.float32))
    run_lengths = rng.integers(2, 12, n)
    topic_of_leaf = np.repeat(rng.integers(0, len(topics), n), run_lengths)[:n]
    # Noise of norm ~0.8 puts same-topic neighbours near 0.6 cosine, others near 0.
    noise = 0.8 * rng.normal(size=(n, dim)).astype(np.float32) / np.sqrt(dim)
    vectors = normalise(topics[topic_of_leaf] + noise)
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
        vectors=vectors.astype(np.float32),
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
