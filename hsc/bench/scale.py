"""``python -m hsc bench scale``: hsc at 10^4, 10^5 and 10^6 synthetic leaves.

Per size, in a process of its own (so its peak RSS is its own): the hierarchy
rebuild (segmentation, pooling, the HNSW build over the groups), query
latency without the query's embedding (two-stage at the shipped defaults and
at the seed's, flat), then a real database written through the Store (bytes
per leaf) and the time to open it and answer a first query, from SQLite rows
and from the leaf-table side file.
"""

from __future__ import annotations

import gc
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from hsc.bench.memory import peak_rss_mb
from hsc.bench.perf import _percentiles, synthetic_table
from hsc.embed import EncoderSpec, normalise
from hsc.hierarchy.boundaries import segment
from hsc.hierarchy.groups import DefinitionVectors, plan_hierarchy
from hsc.params import Parameters
from hsc.search.two_stage import MidLevelIndex, TwoStageRetriever, flat_search

SIZES = (10_000, 100_000, 1_000_000)
# Definition vectors as the standard-library benchmark has them: 1,071 of 3,595 leaves (30%) hold
# definitions inside them, 2,005 vectors among them (about 2 each; README, Definition vectors).
DEFINITION_LEAF_SHARE = 0.3
DEFINITIONS_PER_LEAF = 2


def synthetic_definitions(vectors: np.ndarray, seed: int = 3) -> DefinitionVectors:
    """Definition vectors for a share of the rows, each near its leaf's own vector."""
    rng = np.random.default_rng(seed)
    holding = np.sort(rng.choice(len(vectors), int(DEFINITION_LEAF_SHARE * len(vectors)), replace=False))
    rows = np.repeat(holding, DEFINITIONS_PER_LEAF)
    noise = rng.standard_normal(size=(len(rows), vectors.shape[1]), dtype=np.float32) * 0.05
    return DefinitionVectors(rows.astype(np.int64), normalise(vectors[rows] + noise))


def _query_vectors(vectors: np.ndarray, count: int, seed: int = 2) -> np.ndarray:
    """Queries near random leaves, as a real query lands near the code it asks for."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(vectors), count)
    noise = rng.standard_normal(size=(count, vectors.shape[1]), dtype=np.float32) * 0.03
    return normalise(vectors[rows] + noise)


def measure_memory(n: int, queries: int) -> dict[str, Any]:
    """Rebuild and query timings over an in-memory synthetic table."""
    started = time.perf_counter()
    table = synthetic_table(n)
    made_seconds = time.perf_counter() - started
    params = Parameters()
    started = time.perf_counter()
    segment(
        table.vectors,
        table.file_index,
        params.similarity_drop_threshold,
        params.smoothing_window_size,
        params.boundary_rule,
    )
    segment_seconds = time.perf_counter() - started
    started = time.perf_counter()
    plan = plan_hierarchy(table, params)  # segmentation again, and the pooling
    plan_seconds = time.perf_counter() - started
    started = time.perf_counter()
    mid_index = MidLevelIndex.build(plan.group_vectors)
    hnsw_seconds = time.perf_counter() - started
    retriever = TwoStageRetriever(table.vectors, plan.group_starts, plan.group_ends, mid_index)
    definitions = synthetic_definitions(table.vectors)
    with_definitions = TwoStageRetriever(
        table.vectors, plan.group_starts, plan.group_ends, mid_index, definitions
    )
    budget = math.ceil(params.stage1_leaf_share * n)
    timings: dict[str, list[float]] = {
        "two_stage": [],
        "two_stage_seed": [],
        "flat": [],
        "two_stage_definitions": [],
        "flat_definitions": [],
    }
    compared: dict[str, list[int]] = {"two_stage": [], "two_stage_seed": []}
    recall: dict[str, list[float]] = {"two_stage": [], "two_stage_seed": []}
    k = params.leaf_level_top_k
    for query in _query_vectors(table.vectors, queries):
        started = time.perf_counter()
        exact = flat_search(table.vectors, query, k)
        timings["flat"].append(time.perf_counter() - started)
        best = {hit.row for hit in exact.leaves}
        for name, leaf_budget in (("two_stage", budget), ("two_stage_seed", 0)):
            started = time.perf_counter()
            staged = retriever.search(
                query, params.mid_level_top_k, k, leaf_budget, params.group_score_weight
            )
            timings[name].append(time.perf_counter() - started)
            compared[name].append(staged.leaves_compared)
            recall[name].append(len({hit.row for hit in staged.leaves} & best) / k)
        started = time.perf_counter()
        flat_search(table.vectors, query, k, definitions=definitions)
        timings["flat_definitions"].append(time.perf_counter() - started)
        started = time.perf_counter()
        with_definitions.search(query, params.mid_level_top_k, k, budget, params.group_score_weight)
        timings["two_stage_definitions"].append(time.perf_counter() - started)
    result = {
        "leaves": n,
        "files": len(table.paths),
        "groups": plan.group_count,
        "make_table_seconds": round(made_seconds, 2),
        "rebuild": {
            "segment_seconds": round(segment_seconds, 3),
            "plan_seconds": round(plan_seconds, 3),
            "hnsw_seconds": round(hnsw_seconds, 2),
            "total_seconds": round(plan_seconds + hnsw_seconds, 2),
        },
        "queries": queries,
        "flat": {**_percentiles(timings["flat"]), "leaves_compared": n},
    }
    for name in ("two_stage", "two_stage_seed"):
        result[name] = {
            **_percentiles(timings[name]),
            "leaves_compared_mean": round(float(np.mean(compared[name])), 1),
            "recall_at_k_vs_flat": round(float(np.mean(recall[name])), 3),
        }
    result["two_stage"]["stage1_leaf_share"] = params.stage1_leaf_share
    # The same searches with definition vectors (DEFINITION_LEAF_SHARE of the leaves hold them).
    result["definitions"] = {
        "vectors": len(definitions),
        "flat": _percentiles(timings["flat_definitions"]),
        "two_stage": _percentiles(timings["two_stage_definitions"]),
    }
    result["hybrid"] = "not measured here: BM25 needs leaf text (see the database part)"
    result["peak_rss_mb"] = peak_rss_mb()
    return result


class SyntheticQueries:
    """An Embedder that answers with queries near stored leaves, so a query over
    the synthetic database times everything but the model."""

    def __init__(self, name: str, vectors: np.ndarray) -> None:
        self.name = name
        self.spec = EncoderSpec(name)
        self.dimension = int(vectors.shape[1])
        self._vectors = vectors
        self._next = 0

    def embed(self, texts: list[str], batch_size: int = 32, on_batch: Any = None) -> np.ndarray:
        rows = self._vectors[self._next : self._next + len(texts)]
        self._next += len(texts)
        return rows


def database_bytes(database: Path) -> int:
    return sum(p.stat().st_size for p in database.parent.glob(database.name + "*"))


def measure_database(n: int, out: Path, queries: int, storage: str = "float32") -> dict[str, Any]:
    """Write (or reuse) a synthetic index of ``n`` leaves with vectors stored as
    ``storage``; its size per leaf, and the time to open it and answer a first query."""
    from hsc.bench.app import write_synthetic_index
    from hsc.params import Settings
    from hsc.store import Store

    database = out / (f"scale-{n}.db" if storage == "float32" else f"scale-{n}-{storage}.db")
    written: dict[str, Any] = {"vector_storage": storage, "reused": database.exists()}
    if not database.exists():
        started = time.perf_counter()
        written.update(write_synthetic_index(database, n, settings=Settings(vector_storage=storage)))
        written["write_seconds"] = round(time.perf_counter() - started, 1)
    store = Store(database)
    sizes = store.row("SELECT COUNT(*) AS count, SUM(LENGTH(vector)) AS vector_bytes FROM embeddings") or {
        "count": 0,
        "vector_bytes": 0,
    }
    text_bytes = (store.row("SELECT SUM(LENGTH(text)) AS bytes FROM leaves") or {"bytes": 0})["bytes"]
    store.close()
    total = database_bytes(database)
    result: dict[str, Any] = {
        "database": str(database),
        **written,
        "database_bytes": total,
        "bytes_per_leaf": round(total / n, 1),
        "vector_bytes_per_leaf": round(sizes["vector_bytes"] / n, 1),
        "text_bytes_per_leaf": round(text_bytes / n, 1),
    }
    result["open"] = measure_open(database, queries)
    return result


# One synthetic definition in this many gets an outline (the standard library: 476 outlines
# beside 4,415 definitions, about one in nine).
OUTLINE_EVERY = 9


def synthetic_outlines(database: Path) -> int:
    """Outline rows (hsc.index.outlines) for one definition in :data:`OUTLINE_EVERY` of a
    synthetic index, each under its first leaf's embedding (a vector the store has), so that a
    query scores outline evidence as it would on code; written once."""
    from hsc.store import Store

    store = Store(database)
    try:
        repository_id = int(store.repositories()[0]["id"])
        if store.row("SELECT 1 AS found FROM outline_vectors LIMIT 1") is not None:
            return -1
        found = store.conn.execute(
            """SELECT f.path, d.start_line, d.end_line, l.content_hash FROM definitions d
               JOIN files f ON f.id = d.file_id
               JOIN leaves l ON l.file_id = d.file_id AND l.start_line = d.start_line
               WHERE f.repository_id = ? AND d.kind != 'file' ORDER BY f.path, d.ordinal""",
            (repository_id,),
        ).fetchall()
        rows = [tuple(row) for row in found[::OUTLINE_EVERY]]
        store.replace_outlines(repository_id, rows)  # type: ignore[arg-type]
        store.set_meta(f"region_outlines:{repository_id}", "evidence")
    finally:
        store.close()
    return len(rows)


def measure_open(database: Path, queries: int) -> dict[str, Any]:
    """Open the index and answer queries (without the model), from SQLite rows
    (``side_file=False``, the seed's way) and from the side file, interleaved."""
    from hsc.api import Index
    from hsc.store import Store

    outlines = synthetic_outlines(database)
    # The HNSW file and the side file are made once, before anything is timed.
    with Index(Store(database)) as index:
        hierarchy_id = index.default_hierarchy()
        vectors = index.leaf_table().vectors
        query_vectors = _query_vectors(np.asarray(vectors), 4 * queries + 2 * max(queries, 40) + 1, seed=5)
        model = index.repositories()[0]["embedding_model"]
        index._load(hierarchy_id)
    del vectors
    gc.collect()
    found: dict[str, Any] = {}
    for side_file in (False, True):
        embedder = SyntheticQueries(model, query_vectors)
        started = time.perf_counter()
        index = Index(Store(database), embedder=embedder)
        index.side_files = side_file
        index._load(hierarchy_id)
        opened = time.perf_counter() - started
        started = time.perf_counter()
        first = index.query("q", hierarchy_id=hierarchy_id, record=False, compare=False)
        first_seconds = time.perf_counter() - started
        later = []
        every_term = index.hierarchy_parameters(hierarchy_id, lexical_term_share=1.0)
        region_lexical = index.hierarchy_parameters(hierarchy_id, region_lexical="text+names")
        outlines_off = index.hierarchy_parameters(hierarchy_id, region_outlines="off")
        names_off = index.hierarchy_parameters(hierarchy_id, region_names="off")
        # Index.query ranks regions and files by default; the query without them, for the ratio.
        for name, mode, params, regions in (
            ("two-stage", "two-stage", None, True),
            ("flat", "flat", None, True),
            ("hybrid", "hybrid", None, True),
            ("hybrid_without_regions", "hybrid", None, False),
            ("hybrid_region_lexical", "hybrid", region_lexical, True),
            ("hybrid_region_outlines_off", "hybrid", outlines_off, True),
            ("hybrid_region_names_off", "hybrid", names_off, True),
            ("hybrid_every_term", "hybrid", every_term, True),
        ):
            samples = []
            for number in range(queries // 2):
                # The synthetic leaves' words: two in every leaf, the number in a few (for BM25).
                text = f"compute_{37 * number + 11} value"
                started = time.perf_counter()
                index.query(
                    text,
                    hierarchy_id=hierarchy_id,
                    params=params,
                    record=False,
                    compare=False,
                    mode=mode,
                    regions=regions,
                )
                samples.append(time.perf_counter() - started)
            later.append((name, _percentiles(samples)))
        if side_file:
            later += _context_timings(index, hierarchy_id, max(queries, 40))
        index.close()
        found["side_file" if side_file else "sqlite"] = {
            "open_seconds": round(opened, 3),
            "first_query_seconds": round(first_seconds, 3),
            "first_query_results": len(first.results),
            **{f"{name}_whole_query": figures for name, figures in later},
        }
        gc.collect()
    found["open_ratio"] = round(
        found["sqlite"]["open_seconds"] / max(found["side_file"]["open_seconds"], 1e-9), 1
    )
    found["first_region_query"] = first_region_query(database, hierarchy_id, model, query_vectors)
    found["synthetic_outlines"] = outlines  # -1: written by an earlier run
    return found


def first_region_query(
    database: Path, hierarchy_id: int, model: str, query_vectors: np.ndarray
) -> dict[str, float]:
    """The first query of a fresh index (its hierarchy already loaded): without regions, with
    the regions built (their side file removed first) and with them read from the side file that
    build saved (hsc.store.sidecar), in that order; then with ``region_lexical`` on, its region
    terms built (their side file removed first) and read."""
    from hsc.api import Index
    from hsc.store import Store

    out: dict[str, float] = {}
    for name, regions in (
        ("without_regions", False),
        ("regions_built", True),
        ("regions_read", True),
        ("region_terms_built", True),
        ("region_terms_read", True),
    ):
        if name in ("regions_built", "region_terms_built"):
            kind = "regions" if name == "regions_built" else "region-terms"
            for saved in (database.parent / "hnsw").glob(f"{database.stem}-h{hierarchy_id}-{kind}-*"):
                saved.unlink()
        params = {"region_lexical": "text+names"} if name.startswith("region_terms") else None
        with Index(Store(database), embedder=SyntheticQueries(model, query_vectors)) as index:
            index._load(hierarchy_id)
            started = time.perf_counter()
            index.query(
                "q", hierarchy_id=hierarchy_id, params=params, record=False, compare=False, regions=regions
            )
            out[f"{name}_seconds"] = round(time.perf_counter() - started, 3)
        gc.collect()
    return out


def _context_timings(index: Any, hierarchy_id: int, count: int) -> list[tuple[str, dict[str, Any]]]:
    """A context pack at 2,048 tokens against the query it starts with (the same mode and
    candidates), alternated query by query: the pack's own cost is the difference."""
    params = index.hierarchy_parameters(hierarchy_id)
    ranked = index.hierarchy_parameters(hierarchy_id, leaf_level_top_k=params.context_candidates)
    query_only, whole = [], []
    for number in range(count):
        text = f"compute_{53 * number + 7} value"
        started = time.perf_counter()
        index.query(
            text,
            hierarchy_id=hierarchy_id,
            params=ranked,
            record=False,
            compare=False,
            mode="hybrid",
            regions=False,
        )
        query_only.append(time.perf_counter() - started)
        started = time.perf_counter()
        index.context(text, 2048, "hybrid", hierarchy_id=hierarchy_id)
        whole.append(time.perf_counter() - started)
    pack_ms = [1000 * (a - b) for a, b in zip(whole, query_only)]
    cost = {
        "p50_ms": round(float(np.percentile(pack_ms, 50)), 2),
        "p95_ms": round(float(np.percentile(pack_ms, 95)), 2),
    }
    return [
        ("context_query", _percentiles(query_only)),
        ("context_2048", _percentiles(whole)),
        ("context_pack_cost", cost),
    ]


def bench_scale_one(
    n: int, out: Path | None, queries: int = 100, storages_too: bool = True
) -> dict[str, Any]:
    """One size; with ``storages_too`` a second database with float16 vectors."""
    result: dict[str, Any] = {"suite": "scale", **measure_memory(n, queries)}
    # On stderr at once: the database part of a large size takes long, and may be cut short.
    print(json.dumps(result), file=sys.stderr, flush=True)
    gc.collect()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        result["store"] = measure_database(n, out, queries=20)
        if storages_too:
            result["store_float16"] = measure_database(n, out, queries=20, storage="float16")
        result["peak_rss_mb_with_store"] = peak_rss_mb()
    return result


def bench_scale(sizes: list[int], out: Path | None, queries: int = 100) -> dict[str, Any]:
    """Each size in a child process of its own, one after the other."""
    runs = []
    for n in sizes:
        command = [sys.executable, "-m", "hsc", "bench", "scale", "--leaves", str(n), "--json"]
        command += ["--out", str(out)] if out is not None else ["--no-store"]
        print(f"bench scale: {n} leaves ...", file=sys.stderr, flush=True)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            runs.append({"leaves": n, "error": done.stderr.strip().splitlines()[-1:]})
            continue
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {"suite": "scale", "runs": runs, "machine": "2 cores, shared with other work"}


def format_scale(result: dict[str, Any]) -> str:
    runs = result.get("runs") or [result]
    lines = [
        "leaves     groups   rebuild s (plan+hnsw)   two-stage p50/p95 ms   seed p50/p95 ms   "
        "flat p50/p95 ms   peak RSS MB   DB B/leaf   open s sqlite/side"
    ]
    for run in runs:
        if "error" in run:
            lines.append(f"{run['leaves']:>9,}  failed: {run['error']}")
            continue
        store = run.get("store", {})
        opened = store.get("open", {})
        lines.append(
            f"{run['leaves']:>9,}  {run['groups']:>7,}   {run['rebuild']['total_seconds']:>6} "
            f"({run['rebuild']['plan_seconds']}+{run['rebuild']['hnsw_seconds']})   "
            f"{run['two_stage']['p50_ms']}/{run['two_stage']['p95_ms']}   "
            f"{run['two_stage_seed']['p50_ms']}/{run['two_stage_seed']['p95_ms']}   "
            f"{run['flat']['p50_ms']}/{run['flat']['p95_ms']}   "
            f"{run.get('peak_rss_mb_with_store', run['peak_rss_mb'])}   "
            f"{store.get('bytes_per_leaf', '-')}   "
            f"{opened.get('sqlite', {}).get('open_seconds', '-')}/"
            f"{opened.get('side_file', {}).get('open_seconds', '-')}"
        )
    for run in runs:
        extra = run.get("definitions")
        if extra:
            lines.append(
                f"{run['leaves']:>9,}  with {extra['vectors']:,} definition vectors: two-stage p50/p95 "
                f"{extra['two_stage']['p50_ms']}/{extra['two_stage']['p95_ms']} ms, flat "
                f"{extra['flat']['p50_ms']}/{extra['flat']['p95_ms']} ms"
            )
    for run in runs:
        cost = run.get("store", {}).get("open", {}).get("side_file", {}).get("context_pack_cost_whole_query")
        if cost:
            lines.append(
                f"{run['leaves']:>9,}  context pack at 2,048 tokens beyond its query: "
                f"p50 {cost['p50_ms']} ms, p95 {cost['p95_ms']} ms"
            )
    return "\n".join(lines)
