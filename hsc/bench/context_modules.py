"""A module question's file outline in ``bench context``: which signal tells a question about a whole
file, and what the outline does to each query kind's packs.

The file ranking and the region list are made per query as :meth:`hsc.api.Index.query` makes them
(hsc.search.regions.answer_regions over the hybrid's best ``region_candidates`` leaves), once, and
handed to every pack that reads them, as ``Index.context`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from hsc.quality.catalog import Prepared
from hsc.quality.context_metrics import paired_interval
from hsc.quality.systems import TwoStage
from hsc.search.assemble import top_level
from hsc.search.context import ContextPack
from hsc.search.contexts import StoreSource
from hsc.search.module_rule import MODULE_TOP, file_lead, file_margin, file_over_leaf, module_question
from hsc.search.region_table import Region, build_regions
from hsc.search.region_terms import listed_region_lexical, stored_region_terms
from hsc.search.regions import answer_regions

# The outline variants packed beside the run's own pack (at the defaults: file-over-leaf -0.04, 100
# tokens): (rule, margin, tokens).
FILE_OUTLINE_VARIANTS: tuple[tuple[str, float, int], ...] = (
    ("top-hits", 0.0, 150),
    ("region-first", 0.0, 150),
    ("file-over-leaf", -0.05, 150),
    ("file-over-leaf", -0.04, 150),
    ("file-over-leaf", -0.03, 150),
    ("file-over-leaf", -0.04, 75),
)
FILE_OUTLINE = "context pack, file outline"
NO_OUTLINE = "context pack, no file outline"
# The thresholds whose firing rates a run reports (the signal measured before any pack).
TOP_HITS = (3, 4, 5)
MARGINS = (0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12)
POOLED_OVER_LEAF = (-0.15, -0.10, -0.05, 0.0)
LEADS = (-0.02, -0.01, 0.0, 0.01, 0.02, 0.04)
OVER_LEAF = (-0.08, -0.06, -0.05, -0.04, -0.03, -0.02, 0.0)


def names_shown(pack: ContextPack, path: str, source: StoreSource) -> float:
    """The share of ``path``'s top-level definitions the pack shows, whole, in part or as an outline
    (what a module question asks: what the file holds)."""
    definitions = top_level(source.definitions(path))
    if not definitions:
        return 0.0
    spans = [(s.start_line, s.end_line) for s in pack.spans if s.path == path]
    shown = sum(1 for d in definitions if any(a <= d.end_line and b >= d.start_line for a, b in spans))
    return shown / len(definitions)


def outline_intervals(
    per: dict[str, dict[int, list[dict[str, Any]]]], budgets: tuple[int, ...], pack: str
) -> dict[str, Any]:
    """Each file-outline variant (and the run's own ``pack`` when it has an outline) against the pack
    without one (``pack`` itself when it has none), per budget: the file's definitions shown
    (names), the share of the target shown, the hit and the full context, paired by query."""
    base = NO_OUTLINE if NO_OUTLINE in per else pack
    return {
        f"{name} @{budget}": {
            metric: paired_interval(
                [float(s[metric]) for s in per[name][budget]], [float(s[metric]) for s in per[base][budget]]
            )
            for metric in ("names", "target", "hit", "full")
        }
        for name in per
        if name.startswith(FILE_OUTLINE) or (name == pack and base == NO_OUTLINE)
        for budget in budgets
    }


def variant_name(rule: str, margin: float, tokens: int) -> str:
    told = rule if rule == "top-hits" else f"{rule} {margin:g}"
    return f"{FILE_OUTLINE} {tokens}, {told}"


@dataclasses.dataclass
class FileRankings:
    """Per query (the hybrid ranking's): its ranked files and regions, and the best file's pooled
    vector's cosine less its best leaf's (a file that fits as a whole better than any of its parts)."""

    files: list[list[Region]]
    regions: list[list[Region]]
    pooled_over_leaf: list[float]
    scores: list[dict[int, float]]  # leaf row -> its score, as the file ranking drew on it


def rank_files_per_query(prepared: Prepared, hybrid: TwoStage, plan: Any) -> FileRankings:
    corpus, params = prepared.corpus, prepared.params
    table = corpus.table
    regions = build_regions(
        table, corpus.store.definitions(corpus.repository_id), plan.group_starts, plan.group_ends
    )
    terms = None
    if params.region_lexical != "off":
        stored = corpus.store.leaf_term_texts(corpus.repository_id)
        terms = stored_region_terms(regions, table.leaf_ids, stored)
    file_row = {regions.paths[int(r)]: int(r) for r in regions.files}
    out = FileRankings([], [], [], [])
    for target, vector in zip(prepared.targets, prepared.query_vectors):
        found, _ = hybrid.retrieve(vector, target.query, params.region_candidates)
        rows = np.array([h.row for h in found.leaves], dtype=np.int64)
        scores = np.array([h.score for h in found.leaves], dtype=np.float64)
        lexical = None
        if terms is not None:
            lexical = listed_region_lexical(terms, regions, target.query, params.region_lexical)
        listed, files = answer_regions(regions, rows, scores, vector, params, lexical)
        out.files.append(files)
        out.regions.append(listed)
        out.scores.append(dict(zip(rows.tolist(), scores.tolist())))
        gap = 0.0
        if files:
            row = file_row[files[0].path]
            lo, hi = int(regions.lo[row]), int(regions.hi[row])
            pooled = float(regions.vectors[row] @ vector.astype(regions.vectors.dtype))
            gap = pooled - float(np.max(table.vectors[lo:hi] @ vector.astype(table.vectors.dtype)))
        out.pooled_over_leaf.append(round(gap, 4))
    return out


def signals(hits: list[Any], files: list[Region], regions: list[Region], pooled: float) -> dict[str, Any]:
    """What each rule reads of one query."""
    top = hits[:MODULE_TOP]
    return {
        "top_hits": sum(1 for hit in top if hit.path == hits[0].path) if hits else 0,
        "hit_file": hits[0].path if hits else "",
        "file_margin": round(file_margin(files), 4),
        "best_file": files[0].path if files else "",
        "region_file": next((r.path for r in regions if r.level == "file"), ""),
        "region_first": bool(regions) and regions[0].level == "file",
        "file_over_definition": round(file_lead(regions), 4),
        "file_over_leaf": None if (lead := file_over_leaf(hits, files)) is None else round(lead, 4),
        "pooled_over_leaf": pooled,
    }


def rule_rates(per_query: list[dict[str, Any]], targets: list[str]) -> dict[str, dict[str, float]]:
    """Per rule and threshold: the share of queries it calls module questions ("fires") and, of
    those, the share whose chosen file is the target's ("right file": what a module question's
    outline needs)."""
    rules: dict[str, list[tuple[bool, str]]] = {}
    for s in per_query:
        for held in TOP_HITS:
            rules.setdefault(f"top-hits {held} of 5", []).append((s["top_hits"] >= held, s["hit_file"]))
        for margin in MARGINS:
            fires = s["file_margin"] >= margin
            rules.setdefault(f"file-margin {margin:g}", []).append((fires, s["best_file"]))
        for lead in LEADS:
            fires = s["file_over_definition"] >= lead
            rules.setdefault(f"region-first {lead:g}", []).append((fires, s["region_file"]))
        for floor in OVER_LEAF:
            fires = s["file_over_leaf"] is not None and s["file_over_leaf"] >= floor
            rules.setdefault(f"file-over-leaf {floor:g}", []).append((fires, s["best_file"]))
        for floor in POOLED_OVER_LEAF:
            fires = s["pooled_over_leaf"] >= floor
            rules.setdefault(f"pooled - leaf {floor:g}", []).append((fires, s["best_file"]))
    out = {}
    for name, calls in rules.items():
        fired = [path == target for (fires, path), target in zip(calls, targets) if fires]
        out[name] = {
            "fires": round(len(fired) / max(len(calls), 1), 3),
            "right_file": round(sum(fired) / len(fired), 3) if fired else 0.0,
        }
    return out


def module_figures(
    targets: list[str], hits_of: Callable[[int], list[Any]], ranked: FileRankings | None, policy: Any
) -> dict[str, Any]:
    """How often the run's module rule (``policy``, a PackPolicy) fires on the hybrid hits
    (``hits_of(query)``), every rule's firing rate at each threshold tried and its right-file share
    (``targets``: each query's target file), and each query's signals (what the rules read)."""
    per_query, fired = [], []
    for query in range(len(targets)):
        hits = hits_of(query)
        files = ranked.files[query] if ranked else []
        regions = ranked.regions[query] if ranked else []
        per_query.append(signals(hits, files, regions, ranked.pooled_over_leaf[query] if ranked else 0.0))
        told = module_question(hits, policy.module_rule, files, regions, policy.module_margin)
        fired.append(told is not None)
    return {
        "module_rule_fires": round(sum(fired) / max(len(fired), 1), 3),
        "module_rules": rule_rates(per_query, targets),
        "module_signals": per_query,
    }
