"""How good a context pack is for one benchmark target, and paired bootstrap intervals.

A pack *hits* the target when its code lines hold at least half of the target's lines (its *target
coverage*: the share of the target's lines it holds, what a class question measures); its
*dependency coverage* is the share of the gold dependency lines it holds; it gives the *full
context* when it hits and holds at least 80 % of the dependency lines (a target without
dependencies: when it hits); its *precision* is the share of its code lines that are gold.
Outlines stand for lines without showing them, so they count as none of these lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

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
