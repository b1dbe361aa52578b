"""Run the benchmark: build the corpus, index it, score every system, sweep the knobs.

The corpus is indexed with :class:`hsc.api.Index` into a database under the
output folder, so a rerun reuses every cached vector; everything after that
is numpy over the cached vectors (plus SQLite's FTS5 for BM25).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hsc.embed import Embedder
from hsc.hierarchy.groups import plan_hierarchy
from hsc.params import Parameters, Settings, split_overrides
from hsc.quality import corpus as corpus_module
from hsc.quality.catalog import (
    QUICK_SYSTEMS,
    SYSTEM_NAMES,
    Prepared,
    check_names,
    group_stats,
    main_systems,
)
from hsc.quality.corpus import is_hit
from hsc.quality.metrics import first_hit, mcnemar, summarise
from hsc.quality.systems import (
    LEXICAL_CANDIDATES,
    Corpus,
    Flat,
    System,
    TwoStage,
    cached_embedder,
    describe,
)

__all__ = [
    "Options",
    "Prepared",
    "evaluate",
    "main_systems",
    "prepare",
    "quick_options",
    "run_quality",
    "sweep",
]

K = 10
# An interactive run's queries: a first run well under a minute on QUICK_PACKAGES (README, The app).
QUICK_QUERIES = 150
Report = Callable[[str], None]
# fraction of the run done (0..1), what is happening
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Options:
    path: Path | None = None  # None: the standard-library packages
    queries: int | None = None  # None: every usable docstring
    seed: int = 0
    out: Path = Path(".hsc/quality")
    overrides: dict[str, str] = field(default_factory=dict)  # --set name=value
    sweep: bool = True
    packages: tuple[str, ...] = corpus_module.STDLIB_PACKAGES  # the standard library's, when path is None
    params: Parameters | None = None  # the parameters to run with (default: Parameters() + overrides)
    systems: tuple[str, ...] = SYSTEM_NAMES  # which systems of the main table to run
    query_kind: str = "docstring"  # or "comment": prose comments inside function bodies
    # Ask only about these corpus files (None: all); e.g. the files an encoder was not tuned on.
    query_files: frozenset[str] | None = None
    # Also score region and file answers (hsc.quality.regions); always for the class and module kinds.
    regions: bool = False


def quick_options(out: Path) -> Options:
    """The app's default run: a few standard-library packages, 150 queries, the
    systems that embed nothing beyond the leaves, and the sweep (writes under ``out``)."""
    return Options(
        packages=corpus_module.QUICK_PACKAGES, queries=QUICK_QUERIES, out=out, systems=QUICK_SYSTEMS
    )


def corpus_sources(options: Options) -> tuple[list[tuple[Path, str]], str]:
    """The folders the corpus is copied from, and how the run names them."""
    if options.path is None:
        sources = corpus_module.stdlib_sources(options.packages)
        if options.packages == corpus_module.STDLIB_PACKAGES:
            return sources, "standard library"
        return sources, "standard library: " + ", ".join(name for _, name in sources)
    if not options.path.is_dir():
        raise NotADirectoryError(f"not a folder: {options.path}")
    return [(options.path.resolve(), "")], str(options.path)


def prepare(
    options: Options,
    report: Report = print,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> Prepared:
    """``embedder``: a model already loaded (default: the settings' model);
    ``progress`` hears the indexing's share of the embedding done."""
    from hsc.api import Index

    params, settings = split_overrides(dict(options.overrides), options.params or Parameters(), Settings())
    root = options.out / "corpus"
    sources, name = corpus_sources(options)
    report(f"building the corpus from {name} into {root}")
    built = corpus_module.build_corpus(sources, root, options.queries, options.seed, options.query_kind)
    if options.query_files is not None:
        built = dataclasses.replace(
            built, targets=[t for t in built.targets if t.path in options.query_files]
        )
    if not built.targets:
        what = {"comment": "body comments", "class": "class docstrings", "module": "module docstrings"}.get(
            options.query_kind, "docstrings or doc comments"
        )
        raise ValueError(f"no usable {what} in {name}")
    index = Index.open(options.out / "index.db", settings, embedder=embedder)
    try:  # closed by the caller once the run is scored (run_quality), or here on a failure
        started = time.perf_counter()
        indexed = index.index(root, params, progress=_progress(report, progress))
        index_seconds = time.perf_counter() - started
        repository_id = indexed.repository_id
        table = index.leaf_table(repository_id)
        text_of = {int(r["id"]): r["text"] for r in index.store.leaf_rows(repository_id)}
        texts = [text_of[int(i)] for i in table.leaf_ids]
        model = (index.store.repository(repository_id) or {}).get(
            "embedding_model"
        ) or settings.embedding_model
        embed = cached_embedder(index.store, lambda batch: index.embedder.embed(batch), model)
        corpus = Corpus(
            table,
            texts,
            index.store,
            repository_id,
            embed,
            params.lexical_term_share,
            params.lexical_name_weight,
            params.exact_name_weight,
        )
        report(f"embedding {len(built.targets)} queries")
        query_vectors = embed([t.query for t in built.targets])
    except BaseException:
        index.close()
        raise
    files = {p: (root / p).read_text(encoding="utf-8", errors="replace") for p in sorted(set(table.paths))}
    info = {
        "source": name,
        "root": str(root),
        "files": built.files,
        "functions_with_docs": built.functions,
        "queries": len(built.targets),
        "leaves": len(table),
        "seed": options.seed,
        "query_kind": options.query_kind,
        "model": model,
        "files_embedded": indexed.leaves_embedded,
        "leaves_truncated": indexed.leaves_truncated,
    }
    return Prepared(corpus, built.targets, query_vectors, params, files, index_seconds, info)


def _progress(report: Report, progress: Progress | None) -> Callable[[Any], None]:
    def show(event: Any) -> None:
        if event.stage in ("scan", "hierarchy") or (event.total and event.done == event.total):
            report(f"[{event.stage}] {event.done}/{event.total} {event.message}")
        if progress is not None and event.stage == "embed" and event.total:
            progress(event.done / event.total, f"embedding leaves: {event.done}/{event.total}")

    return show


def evaluate(system: System, prepared: Prepared, k: int = K, details: bool = False) -> dict[str, Any]:
    """Metrics of one system, and where it ranked each query's target (None: not in
    the top k). ``details``: also, per query, what it scored, what it ranked first
    and, for a two-stage system, the stage-1 ranks of the target's group."""
    units, ranks, scored, latencies, per_query = system.units, [], [], [], []
    for target, vector in zip(prepared.targets, prepared.query_vectors):
        if getattr(system, "lexical_weight", 0):
            # Into the memo, outside the timing.
            prepared.corpus.lexical(target.query, getattr(system, "lexical_candidates", LEXICAL_CANDIDATES))
        started = time.perf_counter()
        ranking = system.search(vector, target.query, k)
        # The BM25 look-up, served from the memo, counts with its own measured cost.
        latencies.append((time.perf_counter() - started) * 1000 + ranking.lexical_ms)
        hits = [
            any(
                is_hit(target, units.paths[m], int(units.start_lines[m]), int(units.end_lines[m]))
                for m in ranking.members.get(r, [r])
            )
            for r in ranking.rows[:k]
        ]
        ranks.append(first_hit(hits))
        scored.append(ranking.scored)
        if details:
            found: dict[str, Any] = {"rank": ranks[-1], "scored": ranking.scored}
            found["top"] = units.where(ranking.rows[0]) if ranking.rows else None
            if isinstance(system, TwoStage):
                rows = units.rows_of(target.path, target.start_line, target.end_line)
                found.update(system.group_ranks(vector, rows, ranking.groups))
            per_query.append(found)
    row = summarise(ranks, scored, latencies, len(prepared.corpus.table))
    if not any(scored):  # a graph walk: its work is not counted
        row["leaves_scored_mean"] = row["leaves_scored_share"] = None
    out = {"system": system.name, **describe(system), **row, "ranks": ranks}
    if details:
        out["queries"] = per_query
    return out


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
LEXICAL_WEIGHTS = (0.05, 0.1, 0.15, 0.2)
LEXICAL_CANDIDATE_COUNTS = (25, 50, 100, 200)


def sweep(
    prepared: Prepared, report: Report = print, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Two-stage over boundary rule x threshold x window x (mid_level_top_k, or a
    stage-1 leaf share), then the fusion variants' knobs at the run's own
    hierarchy parameters. One row per configuration."""
    corpus, base = prepared.corpus, prepared.params
    rows = []
    for number, (rule, threshold, window) in enumerate(HIERARCHIES):
        if progress is not None:
            progress(number / (len(HIERARCHIES) + 1), f"sweep: {rule} {threshold} {window}")
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
        variants.append(TwoStage(corpus, plan, k, "hybrid+share", share, lexical_weight=base.lexical_weight))
    for weight in GROUP_WEIGHTS:
        variants.append(TwoStage(corpus, plan, k, "two-stage+group-score", group_weight=weight))
    for weight in LEXICAL_WEIGHTS:
        variants.append(Flat(corpus, weight, "hybrid-flat"))
        variants.append(TwoStage(corpus, plan, k, "hybrid-seed", lexical_weight=weight))
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


# The system a query answers with by default, first choice first: each other system is compared
# with it by McNemar's test on hit@10 (docs/languages.md).
DEFAULT_SYSTEMS = ("hybrid+joined", "hybrid")


def against_default(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each system of the table against the default one: the queries only one of them finds
    in its top 10, and McNemar's p."""
    ranks = {row["system"]: row["ranks"] for row in table}
    default = next((name for name in DEFAULT_SYSTEMS if name in ranks), None)
    if default is None:
        return []
    return [
        {"default": default, "system": name, **mcnemar(ranks[default], other, K)}
        for name, other in ranks.items()
        if name != default
    ]


def _knobs(params: Parameters) -> dict[str, Any]:
    return {
        "similarity_drop_threshold": params.similarity_drop_threshold,
        "smoothing_window_size": params.smoothing_window_size,
        "boundary_rule": params.boundary_rule,
    }


def run_quality(
    options: Options,
    report: Report = print,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build and index the corpus, score the chosen systems (with per-query
    details) and, when asked, sweep. ``progress`` hears the share of the run done."""
    systems = check_names(options.systems)
    tell = progress or (lambda fraction, message: None)
    # Shares of the bar: indexing (embedding) first, then the systems, then the sweep.
    indexing, scoring = (0.4, 0.45) if options.sweep else (0.5, 0.5)
    prepared = prepare(options, report, embedder, lambda f, m: tell(indexing * f, m))
    try:
        return _scored(options, systems, prepared, report, tell, indexing, scoring)
    finally:
        prepared.corpus.store.close()


def _scored(
    options: Options,
    systems: tuple[str, ...],
    prepared: Prepared,
    report: Report,
    tell: Progress,
    indexing: float,
    scoring: float,
) -> dict[str, Any]:
    table = []
    built = main_systems(prepared, report, systems)
    for number, name in enumerate(systems):
        tell(indexing + scoring * number / len(systems), f"building and scoring {name}")
        system, build_seconds, stats = next(built)
        row = evaluate(system, prepared, details=True)
        table.append({**row, **stats, "build_s": round(build_seconds, 2)})
        report(f"{row['system']}: R@10 {row['recall_at_10']}, scored {row['leaves_scored_share']}")
    regions: list[dict[str, Any]] = []
    misses: dict[str, int] = {}
    if options.regions or options.query_kind in ("class", "module"):
        from hsc.quality.regions import region_rankings, score_regions

        plan = plan_hierarchy(prepared.corpus.table, prepared.params)
        ranked = region_rankings(prepared, plan, prepared.params, report, misses)
        regions = score_regions(prepared, ranked)
    swept = []
    if options.sweep:
        done = indexing + scoring
        swept = sweep(prepared, report, lambda f, m: tell(done + (1 - done) * f, m))
    tell(1.0, "done")
    return {
        "mcnemar": against_default(table),
        "suite": "quality",
        "corpus": prepared.corpus_info,
        "parameters": dataclasses.asdict(prepared.params),
        "index_s": round(prepared.index_seconds, 1),
        "systems": table,
        "sweep": swept,
        "regions": regions,
        "region_misses": misses,
        "targets": [dataclasses.asdict(t) for t in prepared.targets],
    }
