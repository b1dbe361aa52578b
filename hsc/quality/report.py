"""Write a quality run: JSON, CSV of the table and of the sweep, and the frontier
(Recall@10 against the share of leaves scored) as HTML and PNG.

The HTML carries plotly.js inline, so it opens offline. The PNG is the HTML
rendered by the installed Chromium through Playwright (kaleido is not needed).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

TABLE_COLUMNS = (
    "system",
    "recall_at_1",
    "recall_at_5",
    "recall_at_10",
    "mrr_at_10",
    "ndcg_at_10",
    "leaves_scored_mean",
    "leaves_scored_share",
    "latency_p50_ms",
    "latency_p95_ms",
    "build_s",
    "groups",
    "group_size_median",
)
# Per-query lists of a row, kept in the JSON only.
PER_QUERY = ("ranks", "queries")


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    columns = list(dict.fromkeys(key for row in rows for key in row if key not in PER_QUERY))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def frontier_figure(result: dict[str, Any], current: dict[str, Any] | None = None) -> Any:
    """Recall@10 against leaves scored: the sweep's configurations, the table's
    systems, and (when given) the current parameters' point marked."""
    import plotly.graph_objects as go

    figure = go.Figure()
    by_system: dict[str, list[dict[str, Any]]] = {}
    for row in result.get("sweep", []):
        by_system.setdefault(row["system"], []).append(row)
    for name, rows in sorted(by_system.items()):
        figure.add_trace(
            go.Scatter(
                x=[r["leaves_scored_share"] for r in rows],
                y=[r["recall_at_10"] for r in rows],
                mode="markers",
                name=f"sweep: {name}",
                text=[_label(r) for r in rows],
                hovertemplate="%{text}<br>scored %{x:.1%}<br>R@10 %{y:.3f}<extra></extra>",
                marker={"size": 7, "opacity": 0.6},
            )
        )
    symbols = ("diamond", "square", "triangle-up", "cross", "x", "pentagon", "hexagon", "star-diamond")
    shown = [r for r in result.get("systems", []) if r.get("leaves_scored_share") is not None]
    for number, row in enumerate(shown):
        figure.add_trace(
            go.Scatter(
                x=[row["leaves_scored_share"]],
                y=[row["recall_at_10"]],
                mode="markers",
                name=row["system"],
                hovertemplate=f"{row['system']}<br>scored %{{x:.1%}}<br>R@10 %{{y:.3f}}<extra></extra>",
                marker={"size": 12, "symbol": symbols[number % len(symbols)], "line": {"width": 1}},
            )
        )
    if current:
        figure.add_trace(
            go.Scatter(
                x=[current["leaves_scored_share"]],
                y=[current["recall_at_10"]],
                mode="markers",
                name="current parameters",
                marker={"size": 18, "symbol": "star", "color": "crimson"},
            )
        )
    corpus = result.get("corpus", {})
    figure.update_layout(
        title=f"Recall@10 against leaves scored: {corpus.get('source', '')}, "
        f"{corpus.get('queries', '?')} queries, {corpus.get('leaves', '?')} leaves",
        xaxis={
            "title": "share of leaves scored per query",
            "type": "log",
            "tickformat": ".1%",
            "tickvals": [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
        },
        yaxis={"title": "Recall@10"},
        width=1100,
        height=700,
        template="plotly_white",
    )
    return figure


def stage1_settings(result: dict[str, Any]) -> list[tuple[str, str, float]]:
    """The sweep's stage-1 settings tried at every threshold and window:
    (system, knob, value), e.g. ("two-stage", "mid_level_top_k", 5)."""
    seen: dict[tuple[str, str, float], None] = {}
    for row in result.get("sweep", []):
        knob = "leaf_share" if row.get("leaf_share") else "mid_level_top_k"
        if row.get("group_weight") or row.get("lexical_weight"):
            continue  # a fusion variant, tried at the run's own hierarchy only
        seen[(row["system"], knob, row[knob])] = None
    return list(seen)


def sweep_heatmap(result: dict[str, Any], system: str, knob: str, value: float, rule: str = "valley") -> Any:
    """Recall@10 over similarity_drop_threshold x smoothing_window_size for one
    stage-1 setting of the sweep (``rule``: the boundary rule's rows only); each
    cell also says the share of leaves scored."""
    import plotly.graph_objects as go

    rows = [
        r
        for r in result.get("sweep", [])
        if r["system"] == system and r.get(knob) == value and r.get("boundary_rule") == rule
    ]
    thresholds = sorted({r["similarity_drop_threshold"] for r in rows})
    windows = sorted({r["smoothing_window_size"] for r in rows})
    cell = {(r["similarity_drop_threshold"], r["smoothing_window_size"]): r for r in rows}
    recall = [[cell[(t, w)]["recall_at_10"] if (t, w) in cell else None for t in thresholds] for w in windows]
    notes = [
        [
            f"{cell[(t, w)]['recall_at_10']:.3f}<br>{cell[(t, w)]['leaves_scored_share']:.0%} scored"
            if (t, w) in cell
            else ""
            for t in thresholds
        ]
        for w in windows
    ]
    figure = go.Figure(
        go.Heatmap(
            x=[str(t) for t in thresholds],
            y=[str(w) for w in windows],
            z=recall,
            text=notes,
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar={"title": "R@10"},
            hovertemplate="threshold %{x}, window %{y}<br>R@10 %{z:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        title=f"Recall@10 by threshold and window: {system}, {knob} = {value} ({rule} boundaries)",
        xaxis={"title": "similarity_drop_threshold", "type": "category"},
        yaxis={"title": "smoothing_window_size", "type": "category"},
        height=360,
        template="plotly_white",
    )
    return figure


def _label(row: dict[str, Any]) -> str:
    keys = (
        "similarity_drop_threshold",
        "smoothing_window_size",
        "mid_level_top_k",
        "leaf_share",
        "group_weight",
        "lexical_weight",
        "lexical_candidates",
    )
    return ", ".join(f"{k}={row[k]}" for k in keys if row.get(k) not in (None, 0, 0.0))


def render_png(html: Path, png: Path) -> None:
    """Screenshot the HTML in headless Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1120, "height": 720})
            page.goto(html.resolve().as_uri())
            page.wait_for_selector(".main-svg", timeout=30_000)
            page.screenshot(path=str(png))
        finally:
            browser.close()


def write_run(result: dict[str, Any], out: Path, png: bool = True) -> dict[str, str]:
    """Every file of a run under ``out``; returns their paths by kind."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / "quality.json",
        "table_csv": out / "systems.csv",
        "sweep_csv": out / "sweep.csv",
        "html": out / "frontier.html",
    }
    paths["json"].write_text(json.dumps(result, indent=1))
    write_csv(result["systems"], paths["table_csv"])
    write_csv(result["sweep"], paths["sweep_csv"])
    frontier_figure(result).write_html(paths["html"], include_plotlyjs=True)
    if png:
        paths["png"] = out / "frontier.png"
        render_png(paths["html"], paths["png"])
    return {kind: str(path) for kind, path in paths.items()}


def format_table(result: dict[str, Any]) -> str:
    """The systems as a Markdown table."""
    lines = ["| " + " | ".join(TABLE_COLUMNS) + " |", "|" + "---|" * len(TABLE_COLUMNS)]
    for row in result["systems"]:
        lines.append("| " + " | ".join(_cell(row.get(c)) for c in TABLE_COLUMNS) + " |")
    corpus = result["corpus"]
    for test in result.get("mcnemar", []):
        lines.append(
            f"{test['default']} against {test['system']}: found by {test['default']} only "
            f"{test['only_first']}, by {test['system']} only {test['only_second']}, McNemar p "
            f"{'< 0.0001' if test['p'] < 0.0001 else test['p']}"
        )
    regions = ""
    if result.get("regions"):
        from hsc.quality.regions import format_regions

        regions = "\nregions and files:\n" + format_regions(result["regions"])
        if result.get("region_misses"):
            causes = ", ".join(f"{cause} {count}" for cause, count in result["region_misses"].items())
            regions += f"\nstrict misses of the regions (hsc defaults) at 10, by cause: {causes}"
    return (
        f"quality: {corpus['source']} ({corpus.get('query_kind', 'docstring')}): {corpus['queries']} "
        f"queries, {corpus['leaves']} leaves, index {result['index_s']} s\n" + "\n".join(lines) + regions
    )


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:.0f}"
    return str(value)
