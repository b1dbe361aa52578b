"""Plotly figures for the pages. Pure functions of library data (no
Streamlit), so each can be built and checked on its own.

Every string that came from a repository goes through :func:`plot_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hsc.app.ui.text import line_range
from hsc.explore.figures import LIMIT_COLOUR, SMOOTHED_COLOUR, plot_text
from hsc.explore.structure import StructureView
from hsc.explore.views import TreeView

SELECTED_COLOUR = LIMIT_COLOUR
FOLDER_COLOUR = "#c9d3de"
FILE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
OTHER_COLOUR = "#9aa5b1"


def _compact(figure: go.Figure, height: int) -> go.Figure:
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return figure


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
    for value, name, side in (
        (minimum, "minimum_chunk_token_length", "left"),
        (maximum, "maximum_chunk_token_length", "right"),
    ):
        figure.add_vline(x=value, line={"color": LIMIT_COLOUR, "dash": "dash", "width": 2})
        # Named above the plot, beside its line: inside, the tallest bars (often at the maximum) cover it.
        figure.add_annotation(
            x=value,
            y=1.0,
            yref="paper",
            yanchor="bottom",
            xanchor=side,
            showarrow=False,
            text=f"{name} = {value}",
            font={"color": LIMIT_COLOUR, "size": 11},
        )
    figure.update_layout(
        xaxis={"title": "tokens per leaf", "range": [0, max(float(edges[-1]), maximum) * 1.03]},
        yaxis_title="leaves",
        bargap=0.05,
        showlegend=False,
    )
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


def hierarchy_figure(tree: TreeView | StructureView, kind: str = "sunburst", depth: int = 3) -> go.Figure:
    """Repository → folders → files → (definitions →) groups → leaves (as deep as
    ``tree`` goes), sized by tokens; ``depth`` rings or levels at a time, click to go down."""
    nodes = tree.nodes
    # A colour per file, paler for its groups and leaves; folders stay grey, so files stand out.
    colours: dict[str, str] = {}
    files_seen = 0
    for node in nodes:
        if node.kind == "file":
            colours[node.id] = FILE_COLOURS[files_seen % len(FILE_COLOURS)]
            files_seen += 1
        elif node.kind in ("definition", "group", "leaf"):
            colours[node.id] = colours.get(node.parent, FOLDER_COLOUR)
        else:
            colours[node.id] = "#ffffff" if node.kind == "repository" or not node.parent else FOLDER_COLOUR
    opacity = {"definition": "e6", "group": "cc", "leaf": "99"}
    trace_type = {"treemap": go.Treemap, "icicle": go.Icicle}.get(kind, go.Sunburst)
    trace = trace_type(
        ids=[n.id for n in nodes],
        labels=[plot_text(n.label) for n in nodes],
        parents=[n.parent for n in nodes],
        values=[n.tokens for n in nodes],
        branchvalues="total",
        customdata=[plot_text(n.detail) for n in nodes],
        hovertemplate="%{customdata}<br>%{value} tokens<extra></extra>",
        maxdepth=depth,
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


def folder_leaves_figure(paths: Sequence[str], leaf_counts: Sequence[int], limit: int = 20) -> go.Figure:
    """Leaves per top-level folder (files at the top count as "(top level)"),
    the ``limit`` largest, as horizontal bars: where the bulk of a repository is."""
    totals: dict[str, int] = {}
    for path, leaves in zip(paths, leaf_counts):
        head = path.split("/", 1)[0] + "/" if "/" in path else "(top level)"
        totals[head] = totals.get(head, 0) + int(leaves)
    largest = sorted(totals.items(), key=lambda item: -item[1])[:limit][::-1]
    figure = go.Figure(
        go.Bar(
            y=[plot_text(name) for name, _ in largest],
            x=[leaves for _, leaves in largest],
            orientation="h",
            marker={"color": SMOOTHED_COLOUR},
            hovertemplate="%{y}: %{x} leaves<extra></extra>",
        )
    )
    figure.update_layout(xaxis={"title": {"text": "leaves", "standoff": 6}}, showlegend=False)
    # Room under the tick labels for the axis title, which a 10 px margin drew over them.
    return _compact(figure, 90 + 22 * len(largest)).update_layout(margin={"b": 45})
