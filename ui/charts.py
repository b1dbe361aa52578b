"""Plotly figures for the pages. Pure functions of library data (no
Streamlit), so each can be built and checked on its own.

Every string that came from a repository goes through :func:`plot_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hsc.hierarchy import HierarchyPlan
from hsc.views import TreeView, counts_per_bucket, min_max_envelope
from ui.text import line_range, plot_text

RAW_COLOUR = "#9aa5b1"
SMOOTHED_COLOUR = "#1f77b4"
THRESHOLD_COLOUR = "#d62728"
BOUNDARY_COLOUR = "#d62728"
BAND_COLOURS = ("rgba(31, 119, 180, 0.10)", "rgba(255, 127, 14, 0.12)")
SELECTED_COLOUR = "#d62728"
FOLDER_COLOUR = "#c9d3de"
FILE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
OTHER_COLOUR = "#9aa5b1"

# Past this many points, WebGL keeps the chart responsive.
WEBGL_POINTS = 1000
# Past this many files, their names along the top of the chart would overlap.
MAX_FILE_LABELS = 30


def _compact(figure: go.Figure, height: int) -> go.Figure:
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return figure


@dataclass(frozen=True)
class SimilarityView:
    figure: go.Figure
    pairs: int
    topic_boundaries: int
    groups: int


def similarity_figure(plan: HierarchyPlan, leaf_start: int, leaf_end: int, title: str) -> SimilarityView:
    """Raw and smoothed similarity of each adjacent leaf pair in rows
    ``[leaf_start, leaf_end)`` of the plan's table, with the threshold, the
    boundaries that fell in valleys, file edges and the groups as bands.

    Leaf ``r`` sits at x = r - leaf_start; the pair (r, r + 1) sits between
    them at x + 0.5, so a band from a group's first to last leaf is exact.
    """
    table, seg = plan.table, plan.segmentation
    params = plan.parameters
    pair_rows = np.arange(leaf_start, max(leaf_start, leaf_end - 1))
    x = pair_rows - leaf_start + 0.5
    raw = seg.similarities[pair_rows]
    smoothed = seg.smoothed[pair_rows]
    is_topic_boundary = seg.boundaries[pair_rows] & ~np.isnan(raw)
    is_file_edge = np.isnan(raw)

    def describe_leaf(row: int) -> str:
        path = table.paths[table.file_index[row]]
        lines = line_range(int(table.start_lines[row]), int(table.end_lines[row]))
        return plot_text(f"{table.scopes[row] or path} ({path} {lines})")

    left = [describe_leaf(r) for r in pair_rows]
    right = [describe_leaf(r + 1) for r in pair_rows]
    custom = np.column_stack([left, right]) if len(pair_rows) else np.zeros((0, 2))
    scatter = go.Scattergl if len(pair_rows) > WEBGL_POINTS else go.Scatter
    hover = "%{customdata[0]}<br>→ %{customdata[1]}<br>%{fullData.name}: %{y:.3f}<extra></extra>"

    figure = go.Figure()
    figure.add_trace(
        scatter(
            x=x,
            y=raw,
            name="raw similarity",
            mode="lines+markers",
            customdata=custom,
            hovertemplate=hover,
            line={"color": RAW_COLOUR, "width": 1},
            marker={"size": 4},
        )
    )
    figure.add_trace(
        scatter(
            x=x,
            y=smoothed,
            name=f"smoothed (window {params.smoothing_window_size})",
            mode="lines",
            # The leaves' names ride on the raw curve only: sending them twice doubles each step's payload.
            hovertemplate="%{fullData.name}: %{y:.3f}<extra></extra>",
            line={"color": SMOOTHED_COLOUR, "width": 2.5},
        )
    )
    below = ~np.isnan(smoothed) & (smoothed < params.similarity_drop_threshold)
    figure.add_trace(
        scatter(
            x=x[below],
            y=smoothed[below],
            name="smoothed below threshold",
            mode="markers",
            customdata=custom[below],
            hovertemplate=hover,
            marker={"color": BOUNDARY_COLOUR, "size": 5, "opacity": 0.5},
        )
    )
    # The valley rule places each boundary at the dip's lowest raw similarity, the
    # threshold rule at every smoothed pair below: mark it on the curve that decided.
    decided_by = raw if params.boundary_rule == "valley" else smoothed
    figure.add_trace(
        scatter(
            x=x[is_topic_boundary],
            y=decided_by[is_topic_boundary],
            name=f"boundary ({params.boundary_rule} rule)",
            mode="markers",
            customdata=custom[is_topic_boundary],
            hovertemplate=hover,
            marker={"color": BOUNDARY_COLOUR, "size": 10, "symbol": "x"},
        )
    )
    figure.add_hline(
        y=params.similarity_drop_threshold,
        line={"color": THRESHOLD_COLOUR, "dash": "dash", "width": 1.5},
        annotation_text=f"similarity_drop_threshold = {params.similarity_drop_threshold:.2f}",
        annotation_position="top left",
    )

    # Groups wholly or partly inside the view, every other one shaded: one trace of
    # rectangles (a shape per group would cost the browser seconds at a few hundred).
    ordinals = np.flatnonzero((plan.group_ends > leaf_start) & (plan.group_starts < leaf_end))
    bottom, top = _similarity_range(raw)
    band_x: list[float | None] = []
    band_y: list[float | None] = []
    for ordinal in ordinals[::2]:
        start = max(int(plan.group_starts[ordinal]), leaf_start) - leaf_start - 0.5
        end = min(int(plan.group_ends[ordinal]), leaf_end) - leaf_start - 0.5
        band_x += [start, end, end, start, start, None]
        band_y += [bottom, bottom, top, top, bottom, None]
    figure.add_trace(
        go.Scatter(
            x=band_x,
            y=band_y,
            fill="toself",
            fillcolor=BAND_COLOURS[0],
            line={"width": 0},
            mode="lines",
            hoverinfo="skip",
            name="groups (every other one shaded)",
        )
    )
    edges = x[is_file_edge]
    figure.add_trace(
        go.Scatter(
            x=np.repeat(edges, 3),
            y=np.tile([bottom, top, np.nan], len(edges)),
            mode="lines",
            line={"color": "#555", "dash": "dot", "width": 1},
            hoverinfo="skip",
            name="file edges",
        )
    )
    # Name the files along the top when several are in view, on two staggered rows
    # so that the names of short neighbouring files do not run into each other.
    files_in_view = np.unique(table.file_index[leaf_start:leaf_end])
    if 1 < len(files_in_view) <= MAX_FILE_LABELS:
        for number, file_number in enumerate(files_in_view):
            rows = np.flatnonzero(table.file_index[leaf_start:leaf_end] == file_number)
            figure.add_annotation(
                x=(rows[0] + rows[-1]) / 2,
                y=1.0,
                yref="paper",
                yanchor="bottom",
                yshift=16 * (number % 2),
                showarrow=False,
                text=plot_text(table.paths[file_number].rsplit("/", 1)[-1]),
                font={"size": 11, "color": "#444"},
            )

    figure.update_layout(
        title=title,
        xaxis_title="adjacent leaf pairs in document order (dotted lines: file edges; bands: groups)",
        yaxis_title="cosine similarity",
        legend={"orientation": "h", "y": -0.25},
        hovermode="closest",
        yaxis_range=[bottom, top],
        xaxis_range=[-0.5, leaf_end - leaf_start - 0.5],
    )
    figure = _compact(figure, 460)
    figure.update_layout(margin={"t": 95}, title={"y": 0.97})
    return SimilarityView(
        figure=figure,
        pairs=len(pair_rows),
        topic_boundaries=int(np.count_nonzero(is_topic_boundary)),
        groups=len(ordinals),
    )


def _similarity_range(values: np.ndarray) -> tuple[float, float]:
    """A y range that holds every similarity shown (and the usual 0 to 1)."""
    low = float(np.nanmin(values)) if np.any(~np.isnan(values)) else 0.0
    return min(0.0, low) - 0.05, 1.05


def overview_figure(plan: HierarchyPlan, window: tuple[int, int]) -> go.Figure:
    """The whole repository's smoothed similarity, reduced to the lowest and
    highest value per pixel column, with the threshold, the number of
    boundaries per column, and the detail ``window`` of leaves shaded."""
    seg, params = plan.segmentation, plan.parameters
    envelope = min_max_envelope(seg.smoothed)
    boundaries = counts_per_bucket(seg.boundaries & ~np.isnan(seg.similarities), envelope.starts)
    bottom, top = _similarity_range(envelope.low)
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=window[0] - 0.5 + np.array([0, window[1] - window[0], window[1] - window[0], 0, 0]),
            y=[bottom, bottom, top, top, bottom],
            fill="toself",
            fillcolor="rgba(255, 127, 14, 0.18)",
            line={"color": "rgba(255, 127, 14, 0.9)", "width": 1},
            mode="lines",
            hoverinfo="skip",
            name="detail window (below)",
        )
    )
    x = envelope.starts
    for values, name in ((envelope.low, "lowest smoothed"), (envelope.high, "highest smoothed")):
        # SVG: a few thousand points draw faster than starting WebGL (software-rendered without a GPU).
        figure.add_trace(
            go.Scatter(
                x=x,
                y=values,
                mode="lines",
                name=name,
                line={"color": SMOOTHED_COLOUR, "width": 1},
                fill="tonexty" if name.startswith("highest") else None,
                fillcolor="rgba(31, 119, 180, 0.25)",
                hovertemplate="leaves from %{x}: " + name + " %{y:.3f}<extra></extra>",
                showlegend=name.startswith("lowest"),
            )
        )
    figure.add_trace(
        go.Bar(
            x=x,
            y=boundaries,
            yaxis="y2",
            name="boundaries per column",
            marker={"color": BOUNDARY_COLOUR},
            opacity=0.5,
            hovertemplate="leaves from %{x}: %{y} boundaries<extra></extra>",
        )
    )
    figure.add_hline(
        y=params.similarity_drop_threshold, line={"color": THRESHOLD_COLOUR, "dash": "dash", "width": 1}
    )
    figure.update_layout(
        xaxis={
            "title": "leaves in document order (click to move the window there)",
            "range": [0, len(plan.table)],
            "anchor": "y2",
        },
        yaxis={"title": "similarity", "range": [bottom, top], "domain": [0.35, 1]},
        yaxis2={"title": "boundaries", "domain": [0, 0.25], "showgrid": False, "anchor": "x"},
        legend={"orientation": "h", "y": 1.2},
        bargap=0,
        clickmode="event",
    )
    return _compact(figure, 260)


def token_histogram(token_counts: Sequence[int], minimum: int, maximum: int) -> go.Figure:
    """Leaf lengths with the chunking limits as vertical lines (binned here:
    forty bars, not every leaf, go to the browser)."""
    counts, edges = np.histogram(np.asarray(token_counts), bins=40)
    figure = go.Figure(
        go.Bar(
            x=(edges[:-1] + edges[1:]) / 2,
            y=counts,
            width=np.diff(edges),
            marker={"color": SMOOTHED_COLOUR},
            name="leaves",
            customdata=np.column_stack([edges[:-1], edges[1:]]),
            hovertemplate="%{customdata[0]:.0f}–%{customdata[1]:.0f} tokens: %{y} leaves<extra></extra>",
        )
    )
    for value, name, position in (
        (minimum, "minimum_chunk_token_length", "top right"),
        (maximum, "maximum_chunk_token_length", "top left"),
    ):
        figure.add_vline(
            x=value,
            line={"color": THRESHOLD_COLOUR, "dash": "dash", "width": 2},
            annotation_text=f"{name} = {value}",
            annotation_position=position,
        )
    figure.update_layout(xaxis_title="tokens per leaf", yaxis_title="leaves", bargap=0.05, showlegend=False)
    return _compact(figure, 280)


def file_position_figure(file_leaves: list[dict[str, Any]], selected_id: str) -> go.Figure:
    """The leaves of one file as a strip of line ranges, the selected one marked."""
    colours = [SELECTED_COLOUR if leaf["id"] == selected_id else OTHER_COLOUR for leaf in file_leaves]
    figure = go.Figure(
        go.Bar(
            y=["lines"] * len(file_leaves),
            x=[leaf["end_line"] - leaf["start_line"] + 1 for leaf in file_leaves],
            base=[leaf["start_line"] - 0.5 for leaf in file_leaves],
            orientation="h",
            marker={"color": colours, "line": {"color": "white", "width": 1}},
            customdata=[
                [
                    plot_text(leaf["scope"]),
                    line_range(leaf["start_line"], leaf["end_line"]),
                    leaf["token_count"],
                ]
                for leaf in file_leaves
            ],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]} · %{customdata[2]} tokens<extra></extra>",
        )
    )
    last_line = max((leaf["end_line"] for leaf in file_leaves), default=1)
    figure.update_layout(
        xaxis={"title": "line", "range": [0.5, last_line + 0.5]},
        yaxis={"visible": False},
        showlegend=False,
    )
    return _compact(figure, 150)


def hierarchy_figure(tree: TreeView, kind: str = "sunburst") -> go.Figure:
    """Repository → folders → files → groups → leaves (as deep as ``tree``
    goes), sized by tokens; three rings or levels at a time, click to go down."""
    nodes = tree.nodes
    # A colour per file, paler for its groups and leaves; folders stay grey, so files stand out.
    colours: dict[str, str] = {}
    files_seen = 0
    for node in nodes:
        if node.kind == "file":
            colours[node.id] = FILE_COLOURS[files_seen % len(FILE_COLOURS)]
            files_seen += 1
        elif node.kind in ("group", "leaf"):
            colours[node.id] = colours.get(node.parent, FOLDER_COLOUR)
        else:
            colours[node.id] = "#ffffff" if node.kind == "repository" or not node.parent else FOLDER_COLOUR
    opacity = {"group": "cc", "leaf": "99"}
    trace_type = go.Treemap if kind == "treemap" else go.Sunburst
    trace = trace_type(
        ids=[n.id for n in nodes],
        labels=[plot_text(n.label) for n in nodes],
        parents=[n.parent for n in nodes],
        values=[n.tokens for n in nodes],
        branchvalues="total",
        customdata=[plot_text(n.detail) for n in nodes],
        hovertemplate="%{customdata}<br>%{value} tokens<extra></extra>",
        maxdepth=3,
        sort=False,
        marker={"colors": [colours[n.id] + opacity.get(n.kind, "") for n in nodes]},
    )
    figure = go.Figure(trace)
    # Hide labels that would be too small to read (most leaves, until zoomed into).
    figure.update_layout(uniformtext={"minsize": 10, "mode": "hide"})
    return _compact(figure, 620)


def group_size_figure(
    first_name: str, first_sizes: list[int], second_name: str, second_sizes: list[int]
) -> go.Figure:
    """Leaves per group in two hierarchies, overlaid."""
    figure = go.Figure()
    for name, sizes, colour in (
        (first_name, first_sizes, SMOOTHED_COLOUR),
        (second_name, second_sizes, "#ff7f0e"),
    ):
        figure.add_trace(
            go.Histogram(
                x=sizes,
                name=plot_text(name),
                opacity=0.6,
                marker={"color": colour},
                xbins={"size": 1},
                hovertemplate="%{x} leaves per group: %{y} groups<extra></extra>",
            )
        )
    figure.update_layout(
        barmode="overlay",
        xaxis_title="leaves per group",
        yaxis_title="groups",
        legend={"orientation": "h", "y": 1.15},
    )
    return _compact(figure, 300)
