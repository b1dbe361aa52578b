"""Ranking metrics over the rank of each query's first hit (pure functions).

A query has one answer, the target function; a function cut into several
leaves is found when any of them is retrieved, so only the first hit counts
(binary relevance, ideal DCG 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

K = 10  # the cut-off of MRR and nDCG


def first_hit(hits: Sequence[bool]) -> int | None:
    """1-based rank of the first hit, or None."""
    return next((rank for rank, hit in enumerate(hits, start=1) if hit), None)


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / max(len(ranks), 1)


def mrr_at(ranks: Sequence[int | None], k: int = K) -> float:
    return sum(1.0 / r for r in ranks if r is not None and r <= k) / max(len(ranks), 1)


def ndcg_at(ranks: Sequence[int | None], k: int = K) -> float:
    return sum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= k) / max(len(ranks), 1)


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def summarise(
    ranks: Sequence[int | None], scored: Sequence[int], latencies_ms: Sequence[float], leaves: int
) -> dict[str, float]:
    """The table row of one system: quality, work per query and latency."""
    mean_scored = float(np.mean(scored)) if len(scored) else float("nan")
    return {
        "recall_at_1": round(recall_at(ranks, 1), 4),
        "recall_at_5": round(recall_at(ranks, 5), 4),
        "recall_at_10": round(recall_at(ranks, 10), 4),
        "mrr_at_10": round(mrr_at(ranks), 4),
        "ndcg_at_10": round(ndcg_at(ranks), 4),
        "leaves_scored_mean": round(mean_scored, 1),
        "leaves_scored_share": round(mean_scored / leaves, 4) if leaves else float("nan"),
        "latency_p50_ms": round(percentile(latencies_ms, 50), 3),
        "latency_p95_ms": round(percentile(latencies_ms, 95), 3),
    }


def paired_bootstrap(
    first: Sequence[int | None],
    second: Sequence[int | None],
    k: int = K,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Recall@k and MRR@k of ``second`` minus ``first`` over the same queries, with
    95% intervals from resampling the queries (both systems' answers kept together)."""
    if len(first) != len(second):
        raise ValueError(f"paired runs need the same queries ({len(first)} against {len(second)})")

    def columns(ranks: Sequence[int | None]) -> tuple[np.ndarray, np.ndarray]:
        found = np.array([r is not None and r <= k for r in ranks], dtype=float)
        reciprocal = np.array([1.0 / r if r is not None and r <= k else 0.0 for r in ranks])
        return found, reciprocal

    (hit_a, rr_a), (hit_b, rr_b) = columns(first), columns(second)
    draws = np.random.default_rng(seed).integers(0, len(first), size=(resamples, len(first)))
    out = {}
    for name, a, b in ((f"recall_at_{k}", hit_a, hit_b), (f"mrr_at_{k}", rr_a, rr_b)):
        difference = b - a
        means = difference[draws].mean(axis=1)
        low, high = np.percentile(means, [2.5, 97.5])
        out[name] = round(float(difference.mean()), 4)
        out[f"{name}_ci"] = [round(float(low), 4), round(float(high), 4)]
    return out


def mcnemar(first: Sequence[int | None], second: Sequence[int | None], k: int = K) -> dict[str, Any]:
    """McNemar's exact test on hit@k over the same queries: the queries only ``first`` finds,
    those only ``second`` finds, and the two-sided p of that split under no difference
    (a binomial with p = 1/2 over the discordant queries)."""
    if len(first) != len(second):
        raise ValueError(f"paired runs need the same queries ({len(first)} against {len(second)})")
    hit_a = [r is not None and r <= k for r in first]
    hit_b = [r is not None and r <= k for r in second]
    only_first = sum(1 for a, b in zip(hit_a, hit_b) if a and not b)
    only_second = sum(1 for a, b in zip(hit_a, hit_b) if b and not a)
    discordant = only_first + only_second
    tail = sum(math.comb(discordant, i) for i in range(min(only_first, only_second) + 1))
    p = min(1.0, 2 * tail / 2**discordant) if discordant else 1.0
    return {"only_first": only_first, "only_second": only_second, "p": round(p, 4)}
