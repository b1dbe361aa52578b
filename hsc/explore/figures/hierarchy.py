"""Leaves and groups: each leaf's size against the limits, the PCA map of
the leaf vectors, and groupings side by side as strips."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from hsc.explore.explain import LeafMap
from hsc.explore.figures.style import (
    FLAG_COLOURS,
    LIMIT_COLOUR,
    MAX_STRIP_LEAVES,
    PALETTE,
    SMOOTHED_COLOUR,
    STRIP_COLOURS,
    _compact,
    plot_text,
)
from hsc.hierarchy.groups import HierarchyPlan


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
