"""``python -m hsc bench context``: code at a token budget, systems side by side in one run.

The corpus and its queries are the retrieval benchmark's (hsc.quality.corpus: docstring queries
on standard-library packages with the docstrings blanked), indexed once with hsc. Each system
fills budgets of 1,024 / 2,048 / 4,096 cl100k tokens from a ranking; every pack is scored against
the gold context that Python's ``ast`` finds on the original sources (hsc.quality.gold).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hsc.bench.context_modules import (
    FILE_OUTLINE,
    FILE_OUTLINE_VARIANTS,
    NO_OUTLINE,
    FileRankings,
    module_figures,
    names_shown,
    outline_intervals,
    rank_files_per_query,
    variant_name,
)
from hsc.chunk.tokens import get_counter
from hsc.embed import Embedder
from hsc.hierarchy.groups import plan_hierarchy
from hsc.params import Parameters
from hsc.quality import corpus as corpus_module
from hsc.quality.catalog import Prepared, main_systems
from hsc.quality.context_metrics import (
    PACK,
    PER_QUERY,
    SHIPPED,
    paired_against,
    paired_interval,
    per_query_scores,
    query_id,
    score_pack,
    summarise_packs,
)
from hsc.quality.gold import package_of
from hsc.quality.sweep import Options, Progress, corpus_sources, prepare
from hsc.search.assemble import (
    Hit,
    Piece,
    assemble_pack,
    fill_in_order,
    leaves_in_rank_order,
)
from hsc.search.context import ContextPack
from hsc.search.contexts import StoreSource, policy_of

BUDGETS = (1024, 2048, 4096)
RANKED = 60  # ranked units each system draws from
WINDOWS = "windows-256/64"
# The policy grid `--sweep` tries at 2,048 tokens (README, Context at a budget).
SWEEP = {
    "context_lead_hits": (1, 3, 5, 8),
    "context_dependency_hits": (3, 5, 8),
    "context_uses_share": (0.5, 0.8),
    "context_depth": (1, 2),
}
Report = Callable[[str], None]


@dataclasses.dataclass
class Bench:
    """The prepared corpus, its rankings and gold contexts, and the code source the packs read."""

    prepared: Prepared
    source: StoreSource
    rankings: dict[str, list[list[int]]]  # ranking name -> per query, unit rows best first
    units: dict[str, Any]
    gold: list[dict[str, set[int]]]  # per query: path -> dependency lines
    group_of_row: np.ndarray
    group_rows: list[tuple[int, int]]
    # Also the packs with their enclosing definitions (docs/hierarchy.md): asked for, or class questions.
    enclosing: bool = False
    # The hybrid ranking's files and regions per query, as the query gives them to Index.context.
    ranked: FileRankings | None = None

    def hits(self, ranking: str, query: int) -> list[Hit]:
        table = self.prepared.corpus.table
        units = self.units[ranking]
        # The hybrid's hits carry the scores the file ranking drew on (a module rule compares them).
        scored = self.ranked.scores[query] if self.ranked and ranking == "hybrid" else {}
        return [
            Hit(
                int(table.leaf_ids[row]),
                units.paths[row],
                int(units.start_lines[row]),
                int(units.end_lines[row]),
                scored.get(row, 1.0 / rank),
                rank,
                int(table.token_counts[row]),
            )
            for rank, row in enumerate(self.rankings[ranking][query], start=1)
        ]


def build_bench(
    options: Options, report: Report, embedder: Embedder | None = None, progress: Progress | None = None
) -> Bench:
    prepared = prepare(options, report, embedder, progress)
    corpus = prepared.corpus
    rankings: dict[str, list[list[int]]] = {}
    units: dict[str, Any] = {}
    hybrid = None
    for system, _seconds, _groups in main_systems(prepared, report, ("flat", "hybrid", WINDOWS)):
        report(f"ranking with {system.name}")
        rankings[system.name] = [
            system.search(vector, target.query, RANKED).rows
            for target, vector in zip(prepared.targets, prepared.query_vectors)
        ]
        units[system.name] = system.units
        hybrid = system if system.name == "hybrid" else hybrid
    sources, _ = corpus_sources(options)
    package = package_of(sources)
    indexed = set(corpus.table.paths)
    gold = []
    for target in prepared.targets:
        dependencies: dict[str, set[int]] = {}
        for (path, _first), lines in package.dependencies(target.path, target.start_line).items():
            if path in indexed:
                dependencies.setdefault(path, set()).update(lines)
        gold.append(dependencies)
    plan = plan_hierarchy(corpus.table, prepared.params)
    group_rows = list(zip(plan.group_starts.tolist(), plan.group_ends.tolist()))
    group_of_row = np.searchsorted(plan.group_starts, np.arange(len(corpus.table)), side="right") - 1
    source = StoreSource(corpus.store, corpus.repository_id, prepared.corpus_info["root"])
    report("ranking files and regions")
    ranked = rank_files_per_query(prepared, hybrid, plan)  # type: ignore[arg-type]
    unscored = sum(row not in seen for rows, seen in zip(rankings["hybrid"], ranked.scores) for row in rows)
    report(f"hybrid hits without a candidate's score: {unscored}")
    return Bench(prepared, source, rankings, units, gold, group_of_row, group_rows, ranked=ranked)


def where_dependencies_lie(bench: Bench) -> dict[str, Any]:
    """Where the gold dependency lines are: the share in the target's own group (the hierarchy at
    the run's parameters) and in its file, and how many targets depend on another file."""
    table, units = bench.prepared.corpus.table, bench.prepared.corpus.leaf_units
    total = in_group = in_file = elsewhere = 0
    for target, gold in zip(bench.prepared.targets, bench.gold):
        rows = units.rows_of(target.path, target.start_line, target.end_line)
        group_lines: set[int] = set()
        for group in {int(bench.group_of_row[row]) for row in rows}:
            first, end = bench.group_rows[group]
            group_lines.update(range(int(table.start_lines[first]), int(table.end_lines[end - 1]) + 1))
        for path, lines in gold.items():
            total += len(lines)
            if path == target.path:
                in_file += len(lines)
                in_group += len(lines & group_lines)
        elsewhere += any(path != target.path for path in gold)
    return {
        "dependency_lines": total,
        "share_in_own_group": round(in_group / total, 3) if total else 0.0,
        "share_in_own_file": round(in_file / total, 3) if total else 0.0,
        "targets_depending_on_another_file": elsewhere,
    }


def with_parents(bench: Bench, hits: list[Hit], rows: list[int]) -> list[Piece]:
    """Each leaf followed by its group."""
    pieces = []
    for hit, row in zip(hits, rows):
        pieces.append(Piece(hit.path, hit.start_line, hit.end_line, "hit", f"rank {hit.rank}"))
        first, end = bench.group_rows[int(bench.group_of_row[row])]
        table = bench.prepared.corpus.table
        last = end - 1
        pieces.append(
            Piece(hit.path, int(table.start_lines[first]), int(table.end_lines[last]), "parent", "its group")
        )
    return pieces


def auto_merged(bench: Bench, hits: list[Hit], rows: list[int]) -> list[Piece]:
    """LlamaIndex-style auto-merging: once half of a group's leaves are retrieved, the whole group."""
    seen: dict[int, int] = {}
    pieces = []
    table = bench.prepared.corpus.table
    for hit, row in zip(hits, rows):
        group = int(bench.group_of_row[row])
        seen[group] = seen.get(group, 0) + 1
        first, end = bench.group_rows[group]
        if end - first > 1 and seen[group] >= (end - first) / 2:
            pieces.append(
                Piece(hit.path, int(table.start_lines[first]), int(table.end_lines[end - 1]), "parent")
            )
        else:
            pieces.append(Piece(hit.path, hit.start_line, hit.end_line, "hit", f"rank {hit.rank}"))
    return pieces


def perfect_hits(bench: Bench, query: int) -> list[Hit]:
    """The target's own leaves first, then the hybrid ranking."""
    target = bench.prepared.targets[query]
    units = bench.prepared.corpus.leaf_units
    rows = units.rows_of(target.path, target.start_line, target.end_line).tolist()
    table = bench.prepared.corpus.table
    first = [
        Hit(
            int(table.leaf_ids[row]),
            target.path,
            int(units.start_lines[row]),
            int(units.end_lines[row]),
            1.0,
            1,
        )
        for row in rows
    ]
    return first + [dataclasses.replace(hit, rank=hit.rank + 1) for hit in bench.hits("hybrid", query)]


def with_enclosing(bench: Bench, hits: list[Hit]) -> list[Piece]:
    """Each leaf followed by its outermost enclosing definition (the structural baseline of regions)."""
    pieces = []
    for hit in hits:
        pieces.append(Piece(hit.path, hit.start_line, hit.end_line, "hit", f"rank {hit.rank}"))
        holding = [
            d
            for d in bench.source.definitions(hit.path)
            if d.kind != "file" and d.start_line <= hit.start_line and d.end_line >= hit.end_line
        ]
        if holding:
            outer = min(holding, key=lambda d: (d.start_line, -d.end_line))
            pieces.append(Piece(hit.path, outer.start_line, outer.end_line, "definition", "its definition"))
    return pieces


# context_enclosing_tokens tried beside the run's own (0: the pack as before this option).
ENCLOSING_TOKENS = (0, 400, 800)


def packs_for(bench: Bench, query: int, budget: int, params: Parameters) -> dict[str, ContextPack]:
    counter = get_counter()
    text = bench.prepared.targets[query].query
    source, policy = bench.source, policy_of(params)
    flat, hybrid = bench.hits("flat", query), bench.hits("hybrid", query)
    # The query's file ranking and regions (the hybrid's), for the module rules that read them.
    ranked = (bench.ranked.files[query], bench.ranked.regions[query]) if bench.ranked else ((), ())
    hybrid_rows = bench.rankings["hybrid"][query]
    windows = bench.units[WINDOWS]
    window_pieces = [
        Piece(windows.paths[r], int(windows.start_lines[r]), int(windows.end_lines[r]))
        for r in bench.rankings[WINDOWS][query]
    ]
    enclosing: dict[str, ContextPack] = {}
    if bench.enclosing:
        enclosing["leaf + enclosing definition"] = fill_in_order(
            text, "hybrid", budget, with_enclosing(bench, hybrid), source, counter
        )
        for tokens in ENCLOSING_TOKENS:
            enclosing[f"context pack, enclosing class {tokens}"] = assemble_pack(
                text,
                "hybrid",
                budget,
                hybrid,
                source,
                counter,
                dataclasses.replace(policy, enclosing_tokens=tokens),
            )
    for rule, margin, tokens in FILE_OUTLINE_VARIANTS:
        outlined = dataclasses.replace(
            policy, file_outline_tokens=tokens, module_rule=rule, module_margin=margin
        )
        enclosing[variant_name(rule, margin, tokens)] = assemble_pack(
            text, "hybrid", budget, hybrid, source, counter, outlined, *ranked
        )
    if policy.file_outline_tokens:  # what the outline variants are measured against
        off = dataclasses.replace(policy, file_outline_tokens=0)
        enclosing[NO_OUTLINE] = assemble_pack(text, "hybrid", budget, hybrid, source, counter, off)
    return {
        "leaves (flat)": leaves_in_rank_order(text, "flat", budget, flat, source, counter),
        SHIPPED: leaves_in_rank_order(text, "hybrid", budget, hybrid, source, counter),
        "leaf + parent group": fill_in_order(
            text, "hybrid", budget, with_parents(bench, hybrid, hybrid_rows), source, counter
        ),
        "auto-merging": fill_in_order(
            text, "hybrid", budget, auto_merged(bench, hybrid, hybrid_rows), source, counter
        ),
        "windows 256/64": fill_in_order(text, "windows", budget, window_pieces, source, counter),
        **enclosing,
        # The flat ranking has no file ranking of its own here: its module rule never fires.
        "context pack (flat)": assemble_pack(text, "flat", budget, flat, source, counter, policy),
        PACK: assemble_pack(text, "hybrid", budget, hybrid, source, counter, policy, *ranked),
        "ceiling (perfect ranking)": assemble_pack(
            text, "perfect", budget, perfect_hits(bench, query), source, counter, policy, *ranked
        ),
    }


def score_all(bench: Bench, params: Parameters, budgets: tuple[int, ...]) -> dict[str, Any]:
    """Per system and budget: the summary, and the per-query scores."""
    per: dict[str, dict[int, list[dict[str, Any]]]] = {}
    started = time.perf_counter()
    for query, target in enumerate(bench.prepared.targets):
        lines = set(range(target.start_line, target.end_line + 1))
        for budget in budgets:
            for name, pack in packs_for(bench, query, budget, params).items():
                scores = score_pack(pack, target.path, lines, bench.gold[query])
                scores["names"] = names_shown(pack, target.path, bench.source)
                per.setdefault(name, {}).setdefault(budget, []).append(scores)
    seconds = time.perf_counter() - started
    table = {
        name: {str(b): summarise_packs(s) for b, s in by_budget.items()}
        for name, by_budget in per.items()
        if not name.startswith(FILE_OUTLINE) and name != NO_OUTLINE  # measured on the side (below)
    }
    intervals = {
        str(budget): {
            metric: paired_interval(
                [float(s[metric]) for s in per[PACK][budget]],
                [float(s[metric]) for s in per[SHIPPED][budget]],
            )
            for metric in ("full", "hit")
        }
        for budget in budgets
    }
    # Each enclosing-class variant of the pack against the pack at the run's parameters (hsc.params
    # context_enclosing_tokens), on the share of the target shown, the hit and the full context.
    enclosing = {
        f"{name} @{budget}": {
            metric: paired_interval(
                [float(s[metric]) for s in per[name][budget]], [float(s[metric]) for s in per[PACK][budget]]
            )
            for metric in ("target", "hit", "full")
        }
        for name in per
        if name.startswith("context pack, enclosing")
        for budget in budgets
    }
    outline = outline_intervals(per, budgets, PACK)
    module = module_figures(
        [t.path for t in bench.prepared.targets],
        lambda q: bench.hits("hybrid", q),
        bench.ranked,
        policy_of(params),
    )
    return {
        "table": table,
        "intervals": intervals,
        "enclosing_intervals": enclosing,
        "file_outline_intervals": outline,
        "file_names_shown": {
            f"{name} @{budget}": round(float(np.mean([s["names"] for s in per[name][budget]])), 3)
            for name in per
            if name == PACK or name.startswith(FILE_OUTLINE)
            for budget in budgets
        },
        **module,
        "assembly_seconds": round(seconds, 1),
        "per_query": per_query_scores(
            [query_id(t.path, t.start_line, t.query) for t in bench.prepared.targets], per
        ),
    }


def sweep_policy(bench: Bench, budget: int, report: Report) -> list[dict[str, Any]]:
    """The pack on the hybrid ranking at ``budget`` for every point of SWEEP."""
    rows = []
    counter = get_counter()
    names = list(SWEEP)
    for values in itertools.product(*(SWEEP[name] for name in names)):
        knobs = dict(zip(names, values))
        policy = policy_of(dataclasses.replace(Parameters(), **knobs))
        scores = []
        for query, target in enumerate(bench.prepared.targets):
            pack = assemble_pack(
                target.query, "hybrid", budget, bench.hits("hybrid", query), bench.source, counter, policy
            )
            lines = set(range(target.start_line, target.end_line + 1))
            scores.append(score_pack(pack, target.path, lines, bench.gold[query]))
        rows.append({**knobs, **summarise_packs(scores)})
        report(f"sweep {knobs}: {rows[-1]}")
    return rows


def bench_context(
    packages: tuple[str, ...] | None = None,
    queries: int | None = None,
    seed: int = 0,
    out: Path = Path(".hsc/context"),
    sweep: bool = False,
    report: Report = print,
    overrides: dict[str, str] | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    query_kind: str = "docstring",
    enclosing: bool = False,
    against: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``embedder``: a model already loaded (default: the settings' model); ``progress`` hears
    the corpus being indexed (fraction, message), as in :func:`hsc.quality.sweep.prepare`;
    ``query_kind``: as ``bench quality``'s (class: the target is the class, module: the file);
    ``enclosing``: also the packs with enclosing definitions (always for class questions);
    ``against``: an earlier run (its context-run.json) to pair this one against, query by query."""
    if against is not None and "per_query" not in against:  # before the work, so a bad file costs nothing
        raise ValueError("the earlier context run keeps no per-query scores: rerun it with this version")
    options = Options(
        query_kind=query_kind,
        packages=packages or corpus_module.STDLIB_PACKAGES,
        queries=queries,
        seed=seed,
        out=out,
        sweep=False,
        overrides=dict(overrides or {}),
    )
    bench = build_bench(options, report, embedder, progress)
    bench.enclosing = enclosing or query_kind == "class"
    try:
        params = bench.prepared.params
        with_dependencies = sum(1 for gold in bench.gold if gold)
        result: dict[str, Any] = {
            "suite": "context",
            "corpus": {**bench.prepared.corpus_info, "with_dependencies": with_dependencies},
            "dependencies": where_dependencies_lie(bench),
            "parameters": {k: v for k, v in dataclasses.asdict(params).items() if k.startswith("context_")},
            "overrides": dict(overrides or {}),
            **score_all(bench, params, BUDGETS),
        }
        if sweep:
            result["sweep"] = sweep_policy(bench, 2048, report)
    finally:
        bench.prepared.corpus.store.close()
    if against is not None:
        result["against"] = paired_against(against, result)
    out.mkdir(parents=True, exist_ok=True)
    (out / "context-run.json").write_text(run_json(result))
    return result


def run_json(result: dict[str, Any]) -> str:
    """The run as JSON, indented, with the per-query lists on one line (thousands of numbers)."""
    long = [k for k in ("module_signals", "per_query") if k in result]
    rest = {k: v for k, v in result.items() if k not in long}
    if not long:
        return json.dumps(rest, indent=1)
    tail = ",\n".join(f" {json.dumps(k)}: {json.dumps(result[k], separators=(',', ':'))}" for k in long)
    return json.dumps(rest, indent=1)[:-2] + f",\n{tail}\n}}"


def _intervals_text(intervals: dict[str, dict[str, float]]) -> str:
    """Paired differences as "metric +d [low, high]", comma-separated."""
    return ", ".join(
        f"{metric} {i['difference']:+.3f} [{i['low']:+.3f}, {i['high']:+.3f}]"
        for metric, i in intervals.items()
    )


def _against_lines(against: dict[str, Any] | None) -> list[str]:
    """This run minus the earlier one, per system and budget (see paired_against)."""
    if not against:
        return []
    lines = [
        f"this run - the earlier one, {against['queries']} queries both asked "
        f"({against['parameters_before']} -> {against['parameters_after']}):"
    ]
    for name, by_budget in against["paired"].items():
        for budget, row in by_budget.items():
            test, shown = (
                row["hit_test"],
                {m: row[m] for m in PER_QUERY if row.get(m)},
            )  # None: no such queries
            lines.append(
                f"  {name} @{budget}: {_intervals_text(shown)}; "
                f"hit only now / only before {test['only_after']} / {test['only_before']}, p {test['p']:.4f}"
            )
    return lines


def format_context(result: dict[str, Any]) -> str:
    budgets = list(next(iter(result["table"].values())))
    head = "| system | " + " | ".join(f"hit / target / deps / full / prec @{b}" for b in budgets) + " |"
    lines = [head, "|---|" + "---|" * len(budgets)]
    for name, by_budget in result["table"].items():
        cells = [
            f"{s['hit']:.3f} / {s.get('target', 0.0):.3f} / {s['coverage']:.3f} / {s['full']:.3f} / "
            f"{s['precision']:.3f}"
            for s in by_budget.values()
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for budget, intervals in result["intervals"].items():
        lines.append(f"pack - shipped leaves @{budget}: {_intervals_text(intervals)}")
    for name, intervals in result.get("file_outline_intervals", {}).items():
        lines.append(f"{name} - the pack without a file outline: {_intervals_text(intervals)}")
    if "module_rule_fires" in result:
        lines.append(f"module questions by the rule: {result['module_rule_fires']:.3f} of the queries")
    for name, rates in result.get("module_rules", {}).items():
        lines.append(f"  rule {name}: fires {rates['fires']:.3f}, right file {rates['right_file']:.3f}")
    for name, intervals in result.get("enclosing_intervals", {}).items():
        lines.append(f"{name} - pack: {_intervals_text(intervals)}")
    lines.extend(_against_lines(result.get("against")))
    corpus = result["corpus"]
    lines.append(
        f"{corpus['queries']} queries ({corpus['with_dependencies']} with dependencies), "
        f"{corpus['leaves']} leaves"
    )
    if "saved" in result:
        lines.append(f"saved as run #{result['saved']['run']} in {result['saved']['db']}")
    return "\n".join(lines)
