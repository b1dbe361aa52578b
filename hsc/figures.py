"""Plotly figures shared by the app's teaching and tuning views and the HTML
report. Pure functions of library data (no Streamlit).

Sized for real repositories: each figure is a handful of traces whatever the
number of groups (group bands are one bar trace, not one shape each), large
point sets go through WebGL, and callers pass a window, not a repository.
Every string that came from a repository is escaped (:func:`plot_text`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hsc.explain import FileWalkthrough, LeafMap
from hsc.hierarchy import HierarchyPlan

RAW_COLOUR = "#9aa5b1"
SMOOTHED_COLOUR = "#1f77b4"
LIMIT_COLOUR = "#d62728"
BAND_COLOURS = ("rgba(31, 119, 180, 0.13)", "rgba(255, 127, 14, 0.16)")
STRIP_COLOURS = ("#6baed6", "#fdae6b")
FLAG_COLOURS = {
    "": SMOOTHED_COLOUR,
    "under minimum": "#ff7f0e",
    "at maximum": "#d62728",
    "over maximum": "#7b1fa2",
}
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
)  # fmt: skip
# Past this many points a trace is drawn with WebGL.
WEBGL_POINTS = 1500
# Past this many leaves a strip window is refused: a screen shows no more.
MAX_STRIP_LEAVES = 3000


def plot_text(text: object) -> str:
    """``text`` for plotly labels and hovers: its tags shown, not interpreted."""
    return html.escape(str(text), quote=False)


def chart_config(name: str) -> dict[str, Any]:
    """Plotly's ``config`` for a chart: the modebar's camera saves a PNG (drawn
    in the browser, so it works offline) under a file name that says what it is."""
    filename = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "chart"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2},
    }


def _compact(figure: go.Figure, height: int, top: int = 40) -> go.Figure:
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": top, "b": 10})
    return figure


def _scatter(points: int) -> type[go.Scatter] | type[go.Scattergl]:
    return go.Scattergl if points > WEBGL_POINTS else go.Scatter


def similarity_curve(
    similarities: np.ndarray,
    smoothed: np.ndarray,
    boundaries: np.ndarray,
    threshold: float,
    window: int,
    rule: str,
    leaf_labels: Sequence[str] | None = None,
    title: str = "",
) -> go.Figure:
    """The raw and smoothed similarity of adjacent leaves (pair ``i`` sits at
    x = i + 0.5, between leaf ``i`` and leaf ``i + 1``), the threshold, the
    pairs below it and the boundaries chosen; the groups between boundaries
    as alternating bands (one trace)."""
    pairs = len(similarities)
    x = np.arange(pairs) + 0.5
    labels = list(leaf_labels) if leaf_labels is not None else [str(i) for i in range(pairs + 1)]
    custom = np.array([[plot_text(labels[i]), plot_text(labels[i + 1])] for i in range(pairs)]).reshape(-1, 2)
    hover = "%{customdata[0]}<br>→ %{customdata[1]}<br>%{fullData.name}: %{y:.3f}<extra></extra>"
    scatter = _scatter(pairs)
    figure = go.Figure()
    starts = np.concatenate(([0], np.flatnonzero(boundaries) + 1))
    ends = np.append(starts[1:], pairs + 1)
    low = float(np.nanmin(np.concatenate((similarities, [threshold])))) - 0.05 if pairs else -0.05
    figure.add_trace(
        go.Bar(
            x=(starts + ends - 1) / 2,
            y=np.full(len(starts), 1.05 - low),
            base=low,
            width=ends - starts,
            marker={"color": [BAND_COLOURS[i % 2] for i in range(len(starts))], "line": {"width": 0}},
            name="groups (bands)",
            hoverinfo="skip",
        )
    )
    figure.add_trace(
        scatter(
            x=x,
            y=similarities,
            name="raw similarity",
            mode="lines+markers",
            customdata=custom,
            hovertemplate=hover,
            line={"color": RAW_COLOUR, "width": 1},
            marker={"size": 5},
        )
    )
    figure.add_trace(
        scatter(
            x=x,
            y=smoothed,
            name=f"smoothed (window {window})",
            mode="lines",
            customdata=custom,
            hovertemplate=hover,
            line={"color": SMOOTHED_COLOUR, "width": 2.5},
        )
    )
    below = ~np.isnan(smoothed) & (smoothed < threshold)
    figure.add_trace(
        scatter(
            x=x[below],
            y=smoothed[below],
            name="smoothed below threshold (a valley)",
            mode="markers",
            customdata=custom[below],
            hovertemplate=hover,
            marker={"color": LIMIT_COLOUR, "size": 7, "opacity": 0.5},
        )
    )
    topic = boundaries & ~np.isnan(similarities)
    decided_by = similarities if rule == "valley" else smoothed
    figure.add_trace(
        scatter(
            x=x[topic],
            y=decided_by[topic],
            name=f"boundary ({rule} rule)",
            mode="markers",
            customdata=custom[topic],
            hovertemplate=hover,
            marker={"color": LIMIT_COLOUR, "size": 12, "symbol": "x"},
        )
    )
    figure.add_hline(
        y=threshold,
        line={"color": LIMIT_COLOUR, "dash": "dash", "width": 1.5},
        annotation_text=f"similarity_drop_threshold = {threshold:.2f}",
        annotation_position="bottom left",
    )
    figure.update_layout(
        title=plot_text(title),
        xaxis={
            "title": "leaf (a point sits between the two leaves it compares)",
            "range": [-0.5, pairs + 0.5],
        },
        yaxis={"title": "cosine similarity", "range": [low, 1.05]},
        legend={"orientation": "h", "y": -0.3},
        bargap=0,
        hovermode="closest",
    )
    return _compact(figure, 420)


def file_similarity_curve(walk: FileWalkthrough) -> go.Figure:
    """:func:`similarity_curve` of one file under the set it was walked with."""
    params = walk.parameters
    return similarity_curve(
        walk.similarities,
        walk.smoothed,
        walk.boundaries,
        params.similarity_drop_threshold,
        params.smoothing_window_size,
        params.boundary_rule,
        walk.leaf_labels(),
        f"{walk.path}: similarity of each leaf with the next",
    )


def leaf_size_figure(
    tokens: Sequence[int], flags: Sequence[str], minimum: int, maximum: int, labels: Sequence[str]
) -> go.Figure:
    """Each leaf's length in tokens, in file order, against the two limits."""
    figure = go.Figure(
        go.Bar(
            x=np.arange(len(tokens)),
            y=list(tokens),
            marker={"color": [FLAG_COLOURS.get(flag, SMOOTHED_COLOUR) for flag in flags]},
            customdata=[
                [plot_text(label), flag or "within the limits"] for label, flag in zip(labels, flags)
            ],
            hovertemplate="leaf %{x}: %{customdata[0]}<br>%{y} tokens · %{customdata[1]}<extra></extra>",
        )
    )
    for value, name, position in (
        (minimum, "minimum_chunk_token_length", "bottom right"),
        (maximum, "maximum_chunk_token_length", "top right"),
    ):
        figure.add_hline(
            y=value,
            line={"color": LIMIT_COLOUR, "dash": "dash", "width": 1.5},
            annotation_text=f"{name} = {value}",
            annotation_position=position,
        )
    figure.update_layout(
        xaxis_title="leaf, in file order",
        yaxis={"title": "tokens", "range": [0, max([maximum, *tokens]) * 1.1]},
        showlegend=False,
    )
    return _compact(figure, 300)


def leaf_map_figure(
    leaf_map: LeafMap, labels: Sequence[str], highlight: np.ndarray | None = None, title: str = ""
) -> go.Figure:
    """The PCA map: every projected leaf coloured by its group (colours repeat
    every ten groups), the rows in ``highlight`` drawn large with a rim."""
    colours = np.array(PALETTE)[leaf_map.group % len(PALETTE)]
    hover = "%{customdata[0]}<br>group %{customdata[1]}<extra></extra>"
    custom = np.column_stack([[plot_text(label) for label in labels], leaf_map.group])
    marked = (
        np.isin(leaf_map.rows, highlight) if highlight is not None else np.zeros(len(leaf_map.rows), bool)
    )
    figure = go.Figure()
    figure.add_trace(
        go.Scattergl(
            x=leaf_map.x[~marked],
            y=leaf_map.y[~marked],
            mode="markers",
            name="leaves",
            customdata=custom[~marked],
            hovertemplate=hover,
            marker={"color": colours[~marked], "size": 6, "opacity": 0.45 if marked.any() else 0.8},
        )
    )
    if marked.any():
        figure.add_trace(
            go.Scattergl(
                x=leaf_map.x[marked],
                y=leaf_map.y[marked],
                mode="markers",
                name="this file's leaves",
                customdata=custom[marked],
                hovertemplate=hover,
                marker={"color": colours[marked], "size": 13, "line": {"color": "black", "width": 1.5}},
            )
        )
    first, second = leaf_map.explained
    figure.update_layout(
        title=plot_text(title),
        xaxis_title=f"first principal axis ({first:.0%} of the variance)",
        yaxis_title=f"second principal axis ({second:.0%})",
        legend={"orientation": "h", "y": -0.2},
        hovermode="closest",
    )
    return _compact(figure, 480)


def group_strips(
    named_plans: Sequence[tuple[str, HierarchyPlan]], leaf_start: int, leaf_end: int
) -> go.Figure:
    """Each plan's groups over leaves ``[leaf_start, leaf_end)`` as one strip
    (one bar trace per plan): alternating colours, groups over
    maximum_merged_chunk_token_length outlined in red, file edges dotted."""
    if leaf_end - leaf_start > MAX_STRIP_LEAVES:
        raise ValueError(f"show at most {MAX_STRIP_LEAVES} leaves at once, not {leaf_end - leaf_start}")
    figure = go.Figure()
    for name, plan in named_plans:
        ordinals = np.flatnonzero((plan.group_ends > leaf_start) & (plan.group_starts < leaf_end))
        starts = np.maximum(plan.group_starts[ordinals], leaf_start)
        ends = np.minimum(plan.group_ends[ordinals], leaf_end)
        over = plan.needs_summary[ordinals]
        limit = plan.parameters.maximum_merged_chunk_token_length
        figure.add_trace(
            go.Bar(
                y=[plot_text(name)] * len(ordinals),
                x=ends - starts,
                base=starts - 0.5,
                orientation="h",
                name=plot_text(name),
                marker={
                    "color": [STRIP_COLOURS[i % 2] for i in range(len(ordinals))],
                    "line": {
                        "color": np.where(over, LIMIT_COLOUR, "white").tolist(),
                        "width": np.where(over, 2.5, 1),
                    },
                },
                customdata=np.column_stack(
                    [
                        ordinals,
                        plan.group_ends[ordinals] - plan.group_starts[ordinals],
                        plan.group_tokens[ordinals],
                        np.where(over, f"over {limit}: summarised", "full text"),
                    ]
                ),
                hovertemplate=(
                    "group %{customdata[0]}: %{customdata[1]} leaves, %{customdata[2]} tokens "
                    "(%{customdata[3]})<extra>%{y}</extra>"
                ),
                showlegend=False,
            )
        )
    table = named_plans[0][1].table if named_plans else None
    if table is not None and leaf_end - leaf_start > 1:
        edges = np.flatnonzero(np.diff(table.file_index[leaf_start:leaf_end])) + leaf_start + 0.5
        if len(edges):
            figure.add_trace(
                go.Scatter(
                    x=np.repeat(edges, 3),
                    y=np.tile([-0.5, len(named_plans) - 0.5, np.nan], len(edges)),
                    mode="lines",
                    line={"color": "#333", "dash": "dot", "width": 1},
                    name="file edge",
                    hoverinfo="skip",
                )
            )
    figure.update_layout(
        barmode="overlay",
        xaxis={
            "title": "leaf, in document order (red outline: group over maximum_merged_chunk_token_length)"
        },
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": -0.4},
    )
    return _compact(figure, 120 + 60 * len(named_plans))
