"""Run the benchmark: build the corpus, index it, score every system, sweep the knobs.

The corpus is indexed with :class:`hsc.api.Index` into a database under the
output folder, so a rerun reuses every cached vector; everything after that
is numpy over the cached vectors (plus SQLite's FTS5 for BM25).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed import Embedder
from hsc.hierarchy import HierarchyPlan, plan_hierarchy
from hsc.params import Parameters, Settings, split_overrides
from hsc.quality import corpus as corpus_module
from hsc.quality.corpus import Target, is_hit
from hsc.quality.metrics import first_hit, summarise
from hsc.quality.systems import (
    LEXICAL_CANDIDATES,
    CollapsedTree,
    Corpus,
    Flat,
    HnswLeaves,
    System,
    TokenWindows,
    TwoStage,
    cached_embedder,
    contextual_texts,
    describe,
    group_texts,
)
from hsc.tokens import get_counter

K = 10
Report = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    path: Path | None = None  # None: the standard-library packages
    queries: int | None = None  # None: every usable docstring
    seed: int = 0
    out: Path = Path(".hsc/quality")
    overrides: dict[str, str] = field(default_factory=dict)  # --set name=value
    sweep: bool = True


@dataclass
class Prepared:
    corpus: Corpus
    targets: list[Target]
    query_vectors: np.ndarray
    params: Parameters
    files: dict[str, str]  # corpus path -> source, for the window baseline
    index_seconds: float
    corpus_info: dict[str, Any]


def prepare(options: Options, report: Report = print, embedder: Embedder | None = None) -> Prepared:
    """``embedder``: a model already loaded (default: the settings' model)."""
    from hsc.api import Index

    params, settings = split_overrides(dict(options.overrides), Parameters(), Settings())
    root = options.out / "corpus"
    if options.path is None:
        sources, name = corpus_module.stdlib_sources(), "standard library"
    else:
        if not options.path.is_dir():
            raise NotADirectoryError(f"not a folder: {options.path}")
        sources, name = [(options.path.resolve(), "")], str(options.path)
    report(f"building the corpus from {name} into {root}")
    built = corpus_module.build_corpus(sources, root, options.queries, options.seed)
    if not built.targets:
        raise ValueError(f"no usable docstrings or doc comments in {name}")
    index = Index.open(options.out / "index.db", settings, embedder=embedder)
    started = time.perf_counter()
    indexed = index.index(root, params, progress=_progress(report))
    index_seconds = time.perf_counter() - started
    repository_id = indexed.repository_id
    table = index.leaf_table(repository_id)
    text_of = {int(r["id"]): r["text"] for r in index.store.leaf_rows(repository_id)}
    texts = [text_of[int(i)] for i in table.leaf_ids]
    model = (index.store.repository(repository_id) or {}).get("embedding_model") or settings.embedding_model
    embed = cached_embedder(index.store, lambda batch: index.embedder.embed(batch), model)
    corpus = Corpus(table, texts, index.store, repository_id, embed)
    report(f"embedding {len(built.targets)} queries")
    query_vectors = embed([t.query for t in built.targets])
    files = {p: (root / p).read_text(encoding="utf-8", errors="replace") for p in sorted(set(table.paths))}
    info = {
        "source": name,
        "files": built.files,
        "functions_with_docs": built.functions,
        "queries": len(built.targets),
        "leaves": len(table),
        "seed": options.seed,
        "model": model,
        "files_embedded": indexed.leaves_embedded,
    }
    return Prepared(corpus, built.targets, query_vectors, params, files, index_seconds, info)


def _progress(report: Report) -> Callable[[Any], None]:
    def show(event: Any) -> None:
        if event.stage in ("scan", "hierarchy") or (event.total and event.done == event.total):
            report(f"[{event.stage}] {event.done}/{event.total} {event.message}")

    return show


def evaluate(system: System, prepared: Prepared, k: int = K) -> dict[str, Any]:
    """Metrics of one system, and where it ranked each query's target (None: not in the top k)."""
    units, ranks, scored, latencies = system.units, [], [], []
    for target, vector in zip(prepared.targets, prepared.query_vectors):
        if getattr(system, "lexical_weight", 0):
            # Into the memo, outside the timing.
            prepared.corpus.lexical(target.query, getattr(system, "lexical_candidates", LEXICAL_CANDIDATES))
        started = time.perf_counter()
        ranking = system.search(vector, target.query, k)
        # The BM25 look-up, served from the memo, counts with its own measured cost.
        latencies.append((time.perf_counter() - started) * 1000 + ranking.lexical_ms)
        hits = [
            is_hit(target, units.paths[r], int(units.start_lines[r]), int(units.end_lines[r]))
            for r in ranking.rows[:k]
        ]
        ranks.append(first_hit(hits))
        scored.append(ranking.scored)
    row = summarise(ranks, scored, latencies, len(prepared.corpus.table))
    if not any(scored):  # a graph walk: its work is not counted
        row["leaves_scored_mean"] = row["leaves_scored_share"] = None
    return {"system": system.name, **describe(system), **row, "ranks": ranks}


def group_stats(plan: HierarchyPlan) -> dict[str, Any]:
    sizes = (plan.group_ends - plan.group_starts).tolist()
    return {
        "groups": plan.group_count,
        "group_size_median": statistics.median(sizes) if sizes else 0,
        "group_size_mean": round(float(np.mean(sizes)), 2) if sizes else 0,
        "singleton_share": round(sum(1 for s in sizes if s == 1) / max(len(sizes), 1), 3),
    }


def _timed(make: Callable[[], System]) -> tuple[System, float]:
    started = time.perf_counter()
    system = make()
    return system, time.perf_counter() - started


def main_systems(
    prepared: Prepared, report: Report = print
) -> Iterable[tuple[System, float, dict[str, Any]]]:
    """(system, build seconds, its hierarchy's group figures) for the main table."""
    corpus, params = prepared.corpus, prepared.params
    plan = plan_hierarchy(corpus.table, params)
    stats = group_stats(plan)
    # "-seed": the seed's stage 1 (exactly mid_level_top_k groups); the others
    # widen it by the run's stage1_leaf_share, as Index.query does.
    k, share = params.mid_level_top_k, params.stage1_leaf_share
    report("token windows (embedding once, then cached)")
    yield (*_timed(lambda: TokenWindows(corpus, prepared.files, get_counter())), {})
    yield (*_timed(lambda: Flat(corpus)), {})
    yield (*_timed(lambda: HnswLeaves(corpus)), {})
    yield (*_timed(lambda: TwoStage(corpus, plan, k, "two-stage-seed")), stats)
    yield (*_timed(lambda: CollapsedTree(corpus, plan)), stats)
    yield (*_timed(lambda: TwoStage(corpus, plan, k, "two-stage", share)), stats)
    yield (*_timed(lambda: TwoStage(corpus, plan, k, "two-stage+group-score", group_weight=0.25)), stats)
    report("group vectors from group text (embedding once, then cached)")
    yield (
        *_timed(
            lambda: TwoStage(
                corpus,
                plan,
                k,
                "two-stage+group-text",
                group_vectors=corpus.embed_texts(group_texts(corpus, plan)),
            )
        ),
        stats,
    )
    yield (*_timed(lambda: Flat(corpus, 0.1, "hybrid-flat")), {})
    yield (*_timed(lambda: TwoStage(corpus, plan, k, "hybrid-seed", lexical_weight=0.1)), stats)
    yield (
        *_timed(lambda: TwoStage(corpus, plan, k, "hybrid", share, lexical_weight=0.1)),
        stats,
    )
    report("contextual leaf vectors (embedding once, then cached)")
    contextual, seconds = _timed(lambda: contextual_corpus(corpus))
    yield Flat(contextual, name="contextual-flat"), seconds, {}
    yield Flat(contextual, 0.1, "contextual+hybrid-flat"), seconds, {}
    context_plan = plan_hierarchy(contextual.table, params)
    yield (
        TwoStage(contextual, context_plan, k, "contextual+hybrid", lexical_weight=0.1),
        seconds,
        group_stats(context_plan),
    )


def contextual_corpus(corpus: Corpus) -> Corpus:
    table = corpus.table
    paths = [table.paths[i] for i in table.file_index]
    vectors = corpus.embed_texts(contextual_texts(paths, table.scopes, corpus.texts))
    return Corpus(
        dataclasses.replace(table, vectors=vectors),
        corpus.texts,
        corpus.store,
        corpus.repository_id,
        corpus.embed_texts,
    )


# The sweep's grid: the seed's hierarchy knobs (boundary rule, threshold, window) x
# mid_level_top_k or a stage-1 leaf share, then each fusion variant's own knob.
# Kept to what a run on a shared 2-core machine finishes in minutes.
HIERARCHIES = (
    *(("valley", t, w) for t in (0.5, 0.6, 0.7, 0.8) for w in (1, 3)),
    ("threshold", 0.5, 3),
    ("threshold", 0.7, 1),
)
MID_LEVEL_TOP_KS = (5, 10, 20, 40, 80)
LEAF_SHARES = (0.05, 0.1, 0.15, 0.25)
GROUP_WEIGHTS = (0.1, 0.25, 0.5)
LEXICAL_WEIGHTS = (0.05, 0.1, 0.2)
LEXICAL_CANDIDATE_COUNTS = (25, 50, 100, 200)


def sweep(prepared: Prepared, report: Report = print) -> list[dict[str, Any]]:
    """Two-stage over boundary rule x threshold x window x (mid_level_top_k, or a
    stage-1 leaf share), then the fusion variants' knobs at the run's own
    hierarchy parameters. One row per configuration."""
    corpus, base = prepared.corpus, prepared.params
    rows = []
    for rule, threshold, window in HIERARCHIES:
        params = dataclasses.replace(
            base, similarity_drop_threshold=threshold, smoothing_window_size=window, boundary_rule=rule
        )
        plan = plan_hierarchy(corpus.table, params)
        stats = group_stats(plan)
        systems = [TwoStage(corpus, plan, k) for k in MID_LEVEL_TOP_KS]
        systems += [
            TwoStage(corpus, plan, base.mid_level_top_k, "two-stage+share", share) for share in LEAF_SHARES
        ]
        for system in systems:
            rows.append({**_knobs(params), **stats, **evaluate(system, prepared)})
        report(f"sweep: {rule} {threshold} {window} done")
    plan = plan_hierarchy(corpus.table, base)
    stats = group_stats(plan)
    k = base.mid_level_top_k
    variants: list[System] = []
    for share in LEAF_SHARES:
        variants.append(TwoStage(corpus, plan, k, "hybrid+share", share, lexical_weight=0.1))
    for weight in GROUP_WEIGHTS:
        variants.append(TwoStage(corpus, plan, k, "two-stage+group-score", group_weight=weight))
    for weight in LEXICAL_WEIGHTS:
        variants.append(Flat(corpus, weight, "hybrid-flat"))
        variants.append(TwoStage(corpus, plan, k, "hybrid", lexical_weight=weight))
        # The shipped hybrid (stage 1 widened by the run's leaf share): its two knobs together.
        for candidates in LEXICAL_CANDIDATE_COUNTS:
            variants.append(
                TwoStage(
                    corpus,
                    plan,
                    k,
                    "hybrid+share",
                    base.stage1_leaf_share,
                    lexical_weight=weight,
                    lexical_candidates=candidates,
                )
            )
    for system in variants:
        rows.append({**_knobs(base), **stats, **evaluate(system, prepared)})
    report("sweep: variants done")
    return rows


def _knobs(params: Parameters) -> dict[str, Any]:
    return {
        "similarity_drop_threshold": params.similarity_drop_threshold,
        "smoothing_window_size": params.smoothing_window_size,
        "boundary_rule": params.boundary_rule,
    }


def run_quality(options: Options, report: Report = print, embedder: Embedder | None = None) -> dict[str, Any]:
    prepared = prepare(options, report, embedder)
    table = []
    for system, build_seconds, stats in main_systems(prepared, report):
        row = evaluate(system, prepared)
        table.append({**row, **stats, "build_s": round(build_seconds, 2)})
        report(f"{row['system']}: R@10 {row['recall_at_10']}, scored {row['leaves_scored_share']}")
    result = {
        "suite": "quality",
        "corpus": prepared.corpus_info,
        "parameters": dataclasses.asdict(prepared.params),
        "index_s": round(prepared.index_seconds, 1),
        "systems": table,
        "sweep": sweep(prepared, report) if options.sweep else [],
        "targets": [dataclasses.asdict(t) for t in prepared.targets],
    }
    return result
