"""A ``bench context`` run shaped for reading: its table of systems by budget, the pack-minus-
leaves intervals, and full context by budget as a chart. Pure functions of the run's dict (as
``bench context`` returns it and ``Index.quality_run`` gives it back)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from hsc.explore.figures.style import PALETTE, plot_text

# The summary's keys (hsc.quality.context_metrics.summarise_packs) and their headings.
CONTEXT_COLUMNS = {
    "hit": "hit",
    "coverage": "dependency coverage",
    "full": "full context",
    "precision": "precision",
    "tokens": "tokens",
}


def context_budgets(result: dict[str, Any]) -> list[int]:
    """The run's budgets, smallest first."""
    return sorted({int(budget) for by_budget in result["table"].values() for budget in by_budget})


def context_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per system and budget, in the run's system order then by budget: system, budget
    and every CONTEXT_COLUMNS heading."""
    rows = []
    for system, by_budget in result["table"].items():
        for budget in sorted(by_budget, key=int):
            summary = by_budget[budget]
            rows.append(
                {"system": system, "budget": int(budget)}
                | {heading: summary.get(key) for key, heading in CONTEXT_COLUMNS.items()}
            )
    return rows


def context_intervals(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per budget and metric: the pack's mean minus the leaves' (PACK minus SHIPPED), its 95 %
    paired bootstrap interval, and what the interval says (better, worse, or no difference shown)."""
    rows = []
    for budget in sorted(result.get("intervals", {}), key=int):
        for metric, interval in result["intervals"][budget].items():
            low, high = interval["low"], interval["high"]
            verdict = "pack better" if low > 0 else "pack worse" if high < 0 else "no difference shown"
            rows.append(
                {
                    "budget": int(budget),
                    "metric": CONTEXT_COLUMNS.get(metric, metric),
                    "difference": interval["difference"],
                    "low": low,
                    "high": high,
                    "reading": verdict,
                }
            )
    return rows


def context_figure(result: dict[str, Any]) -> go.Figure:
    """Full context (the target and at least the share of its dependencies the metric asks for)
    by budget, one line per system."""
    budgets = context_budgets(result)
    figure = go.Figure()
    for number, (system, by_budget) in enumerate(result["table"].items()):
        shown = [b for b in budgets if str(b) in by_budget]
        name = plot_text(system)
        figure.add_trace(
            go.Scatter(
                x=shown,
                y=[by_budget[str(b)]["full"] for b in shown],
                mode="lines+markers",
                name=name,
                line={
                    "color": PALETTE[number % len(PALETTE)],
                    "dash": "dot" if "ceiling" in system else "solid",  # the ceiling is no system
                },
                hovertemplate=f"{name}<br>%{{x:,}} tokens<br>full context %{{y:.3f}}<extra></extra>",
            )
        )
    corpus = result.get("corpus", {})
    figure.update_layout(
        title=f"Full context by budget: {plot_text(corpus.get('source', ''))}, "
        f"{corpus.get('queries', '?')} queries",
        xaxis={"title": "token budget", "type": "log", "tickvals": budgets, "tickformat": ","},
        yaxis={"title": "full context (share of queries)", "range": [0, 1.02]},
        height=420,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        template="plotly_white",
    )
    return figure
