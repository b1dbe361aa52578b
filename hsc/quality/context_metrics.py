"""How good a context pack is for one benchmark target, and paired bootstrap intervals.

A pack *hits* the target when its code lines hold at least half of the target's lines (its *target
coverage*: the share of the target's lines it holds, what a class question measures); its
*dependency coverage* is the share of the gold dependency lines it holds; it gives the *full
context* when it hits and holds at least 80 % of the dependency lines (a target without
dependencies: when it hits); its *precision* is the share of its code lines that are gold.
Outlines stand for lines without showing them, so they count as none of these lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from hsc.quality.metrics import mcnemar
from hsc.search.context import ContextPack

HIT_SHARE = 0.5
FULL_DEPENDENCY_SHARE = 0.8
BOOTSTRAP_SAMPLES = 2000
# The paired intervals compare the pack with the leaves in rank order, both on the hybrid ranking.
SHIPPED = "leaves (hybrid)"
PACK = "context pack (hybrid)"


def returned_lines(pack: ContextPack) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for span in pack.spans:
        if span.role != "outline":
            out.setdefault(span.path, set()).update(range(span.start_line, span.end_line + 1))
    return out


def score_pack(
    pack: ContextPack, target_path: str, target_lines: set[int], dependencies: dict[str, set[int]]
) -> dict[str, Any]:
    """hit, dependency coverage (None without dependencies), full, precision and tokens of one pack."""
    returned = returned_lines(pack)
    held = len(target_lines & returned.get(target_path, set()))
    hit = held >= HIT_SHARE * len(target_lines)
    wanted = sum(len(lines) for lines in dependencies.values())
    covered = sum(len(lines & returned.get(path, set())) for path, lines in dependencies.items())
    coverage = covered / wanted if wanted else None
    gold = {path: set(lines) for path, lines in dependencies.items()}
    gold.setdefault(target_path, set()).update(target_lines)
    total = sum(len(lines) for lines in returned.values())
    good = sum(len(lines & gold.get(path, set())) for path, lines in returned.items())
    return {
        "hit": hit,
        "target": held / len(target_lines) if target_lines else 0.0,  # the share of the target shown
        "coverage": coverage,
        "full": hit and (coverage is None or coverage >= FULL_DEPENDENCY_SHARE),
        "precision": good / total if total else 0.0,
        "tokens": pack.tokens,
    }


def summarise_packs(scores: Sequence[dict[str, Any]]) -> dict[str, float]:
    covered = [s["coverage"] for s in scores if s["coverage"] is not None]
    n = max(len(scores), 1)
    return {
        "hit": round(sum(s["hit"] for s in scores) / n, 3),
        "target": round(sum(s.get("target", 0.0) for s in scores) / n, 3),
        "coverage": round(float(np.mean(covered)), 3) if covered else 0.0,
        "full": round(sum(s["full"] for s in scores) / n, 3),
        "precision": round(float(np.mean([s["precision"] for s in scores])) if scores else 0.0, 3),
        "tokens": round(float(np.mean([s["tokens"] for s in scores])) if scores else 0.0, 1),
    }


def paired_interval(first: Sequence[float], second: Sequence[float], seed: int = 0) -> dict[str, float]:
    """Mean of ``first - second`` over the same queries and its 95 % paired bootstrap interval."""
    differences = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
    if not len(differences):
        return {"difference": 0.0, "low": 0.0, "high": 0.0}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(differences), size=(BOOTSTRAP_SAMPLES, len(differences)))
    means = differences[draws].mean(axis=1)
    return {
        "difference": round(float(differences.mean()), 3),
        "low": round(float(np.percentile(means, 2.5)), 3),
        "high": round(float(np.percentile(means, 97.5)), 3),
    }


# The per-query scores a run keeps, so that two runs can be paired by query (``--against``).
# ``target``: the share of the target shown, what a class question measures (it has no dependencies).
PER_QUERY = ("hit", "full", "coverage", "target")


def query_id(path: str, start_line: int, query: str) -> str:
    """A query's identity across runs: its target's place and a digest of its text (what
    :func:`hsc.quality.runs.target_key` keys on, kept short)."""
    return f"{path}:{start_line}:{hashlib.sha1(query.encode()).hexdigest()[:10]}"


def per_query_scores(ids: Sequence[str], per: dict[str, dict[int, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Per system and budget, each query's hit and full (0/1), dependency coverage (None without
    dependencies) and share of the target shown, as lists in the order of ``ids``."""

    def column(scores: list[dict[str, Any]], metric: str) -> list[float | int | None]:
        if metric in ("coverage", "target"):
            return [None if s[metric] is None else round(float(s[metric]), 3) for s in scores]
        return [int(bool(s[metric])) for s in scores]

    return {
        "ids": list(ids),
        "systems": {
            name: {str(b): {m: column(scores, m) for m in PER_QUERY} for b, scores in by_budget.items()}
            for name, by_budget in per.items()
        },
    }


def paired_against(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after`` minus ``before`` (two ``bench context`` runs, e.g. indexed at other parameters)
    per system and budget, on the queries both asked (by :func:`query_id`): the paired interval of
    hit, full, dependency coverage (on the queries with dependencies in both; None when there are
    none, as for class and module questions) and the share of the target shown, and
    McNemar's exact test on hit (the queries only ``after`` hits, only ``before`` hits, p)."""
    if "per_query" not in before:
        raise ValueError("the earlier context run keeps no per-query scores: rerun it with this version")
    earlier = before["per_query"]
    where = {query: i for i, query in enumerate(earlier["ids"])}
    pairs = [(where[query], i) for i, query in enumerate(after["per_query"]["ids"]) if query in where]
    paired: dict[str, dict[str, Any]] = {}
    for name, by_budget in after["per_query"]["systems"].items():
        for budget, scores in by_budget.items():
            old = earlier["systems"].get(name, {}).get(budget)
            if old is None:
                continue
            row: dict[str, Any] = {}
            for metric in PER_QUERY:
                now, then = scores.get(metric), old.get(metric)  # a run may predate a metric
                both = (
                    [(now[a], then[b]) for b, a in pairs if now[a] is not None and then[b] is not None]
                    if now is not None and then is not None
                    else []
                )
                row[metric] = (
                    paired_interval([a for a, _ in both], [b for _, b in both]) | {"queries": len(both)}
                    if both
                    else None
                )
            # McNemar on hit through the rank form hsc.quality.metrics reads (a hit: rank 1).
            ranks_after = [1 if scores["hit"][a] else None for b, a in pairs]
            ranks_before = [1 if old["hit"][b] else None for b, a in pairs]
            test = mcnemar(ranks_after, ranks_before, k=1)
            row["hit_test"] = {
                "only_after": test["only_first"],
                "only_before": test["only_second"],
                "p": test["p"],
            }
            paired.setdefault(name, {})[budget] = row
    return {
        "queries": len(pairs),
        "queries_before": len(earlier["ids"]),
        "queries_after": len(after["per_query"]["ids"]),
        "parameters_before": before.get("overrides"),
        "parameters_after": after.get("overrides"),
        "paired": paired,
    }
