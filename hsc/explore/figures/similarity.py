"""The similarity curve (one file, or a window of a repository) and the
overview of a whole repository above it: the Similarity page, the
walkthrough's stage 3 and the HTML report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hsc.explore.explain import FileWalkthrough
from hsc.explore.figures.style import (
    BAND_COLOURS,
    LIMIT_COLOUR,
    MAX_FILE_LABELS,
    RAW_COLOUR,
    SMOOTHED_COLOUR,
    WEBGL_POINTS,
    _fast_figure,
    plot_text,
)
from hsc.explore.views import keep_end, min_max_envelope
from hsc.hierarchy.boundaries import smooth
from hsc.hierarchy.groups import HierarchyPlan


def _band_path(starts: np.ndarray, ends: np.ndarray, low: float, top: float) -> tuple[np.ndarray, np.ndarray]:
    """Rectangles from x = start to end, y = low to top, as one closed path
    (x and y of the corners, NaN between rectangles)."""
    count = len(starts)
    xs = np.column_stack([starts, ends, ends, starts, starts, np.full(count, np.nan)])
    ys = np.tile([low, low, top, top, low, np.nan], (count, 1))
    return xs.reshape(-1), ys.reshape(-1)


@dataclass(frozen=True)
class SimilarityView:
    """A similarity chart and what it shows, for the caption beside it."""

    figure: go.Figure
    pairs: int
    topic_boundaries: int
    groups: int


# The seed's smoothing window, drawn faintly when the shipped window (1) leaves the curve unsmoothed.
SEED_WINDOW = 3
# The overview's one curve: the lowest and the highest raw similarity of each pixel column.
OVERVIEW_CURVE = "raw similarity, lowest to highest per column"
SEED_WINDOW_COLOUR = "rgba(148, 103, 189, 0.85)"
# A file name's width along the top, for placing them: the chart's plotting width is about this
# many pixels on the app's wide layout, and an 11 px name about this many pixels a character.
PLOT_WIDTH_PX = 1000
LABEL_PX_PER_CHARACTER = 6.6


def _unsmoothed_comparison(kind: str, x: np.ndarray, similarities: np.ndarray, window: int) -> list[dict]:
    """At window 1 the smoothed curve is the raw one, so what smoothing would do is not seen:
    the curve at the seed's window, faint and dotted, shows it (it decides nothing)."""
    if window != 1 or len(similarities) < SEED_WINDOW:
        return []
    return [
        {
            "type": kind,
            "x": x,
            "y": np.round(smooth(similarities, SEED_WINDOW), 4).astype(np.float32),
            "name": f"window {SEED_WINDOW} (the seed's), for comparison only",
            "mode": "lines",
            "hovertemplate": "%{fullData.name}: %{y:.3f}<extra></extra>",
            "line": {"color": SEED_WINDOW_COLOUR, "width": 2, "dash": "dot"},
        }
    ]


def _placed_labels(
    labels: Sequence[tuple[float, str]], span: int, rows: int = 2
) -> list[tuple[int, tuple[float, str]]]:
    """(row, label) of those ``labels`` (x in leaves, name) that fit on one of ``rows`` rows
    without touching a neighbour, placed left to right on the first row with room."""
    per_leaf = PLOT_WIDTH_PX / max(span, 1)
    right_edge = [-np.inf] * rows
    placed: list[tuple[int, tuple[float, str]]] = []
    for position, name in labels:
        half = len(name) * LABEL_PX_PER_CHARACTER / 2 + 4
        centre = position * per_leaf
        row = next((r for r in range(rows) if right_edge[r] <= centre - half), None)
        if row is not None:
            right_edge[row] = centre + half
            placed.append((row, (position, name)))
    return placed


def similarity_curve(
    similarities: np.ndarray,
    smoothed: np.ndarray,
    boundaries: np.ndarray,
    threshold: float,
    window: int,
    rule: str,
    leaf_labels: Sequence[str] | None = None,
    title: str = "",
    *,
    groups: tuple[np.ndarray, np.ndarray] | None = None,
    file_labels: Sequence[tuple[float, str]] = (),
    height: int = 420,
) -> SimilarityView:
    """The raw and smoothed similarity of adjacent leaves (pair ``i`` sits at
    x = i + 0.5, between leaf ``i`` and leaf ``i + 1``), the threshold, the
    pairs below it and the boundaries chosen; the groups as alternating bands
    (one trace, whatever their number); NaN pairs (file edges) as dotted lines.

    ``groups``: the (starts, ends) leaf positions of the groups in view, when
    they are known (a plan's); else they are read off ``boundaries``.
    ``file_labels``: (x, name) of files to name along the top.
    """
    pairs = len(similarities)
    x = np.arange(pairs) + 0.5
    labels = [plot_text(label) for label in leaf_labels] if leaf_labels is not None else None
    custom = np.array(
        [[labels[i], labels[i + 1]] for i in range(pairs)]
        if labels
        else [[str(i), str(i + 1)] for i in range(pairs)]
    ).reshape(-1, 2)
    hover = "%{customdata[0]}<br>→ %{customdata[1]}<br>%{fullData.name}: %{y:.3f}<extra></extra>"
    kind = "scattergl" if pairs > WEBGL_POINTS else "scatter"
    filled = ~np.isnan(similarities)
    low = min(0.0, threshold, float(np.nanmin(similarities)) if filled.any() else 0.0) - 0.05
    top = 1.05
    if groups is None:
        starts = np.concatenate(([0], np.flatnonzero(boundaries) + 1))
        groups = (starts, np.append(starts[1:], pairs + 1))
    starts, ends = groups
    band_x, band_y = _band_path(starts[::2] - 0.5, ends[::2] - 0.5, low, top)
    below = ~np.isnan(smoothed) & (smoothed < threshold)
    topic = boundaries & filled
    # The valley rule places each boundary at the dip's lowest raw similarity, the
    # threshold rule at every smoothed pair below: mark it on the curve that decided.
    # Four decimals are all a hover shows (and a third of the bytes of a full float).
    shown_raw, shown_smoothed = np.round(similarities, 4), np.round(smoothed, 4)
    decided_by = shown_raw if rule == "valley" else shown_smoothed
    value_only = "%{fullData.name}: %{y:.3f}<extra></extra>"
    edges = x[~filled]
    data: list[dict[str, Any]] = [
        {
            # Every other group shaded, all in one filled path: one SVG element for the browser to
            # draw at each step, where a bar per group made a hundred.
            "type": "scatter",
            "x": band_x,
            "y": band_y,
            "fill": "toself",
            "fillcolor": BAND_COLOURS[0],
            "line": {"width": 0},
            "mode": "lines",
            "name": "groups (every other one shaded)",
            "hoverinfo": "skip",
        },
        {
            "type": kind,
            "x": x,
            "y": shown_raw,
            "name": "raw similarity",
            # A marker per point only where they can be told apart: each is an SVG element redrawn
            # at every step. The line's points still hover and click.
            "mode": "lines+markers" if pairs <= 100 else "lines",
            "customdata": custom,
            "hovertemplate": hover,
            "line": {"color": RAW_COLOUR, "width": 1},
            "marker": {"size": 5},
        },
        {
            "type": kind,
            "x": x,
            "y": shown_smoothed,
            "name": f"smoothed (window {window})",
            "mode": "lines",
            # The leaves' names ride on the raw curve only: each more time would add to every step.
            "hovertemplate": value_only,
            "line": {"color": SMOOTHED_COLOUR, "width": 2.5},
        },
        *_unsmoothed_comparison(kind, x, similarities, window),
        {
            "type": kind,
            "x": x[below],
            "y": shown_smoothed[below],
            "name": "smoothed below threshold (a valley)",
            "mode": "markers",
            "hovertemplate": value_only,
            "marker": {"color": LIMIT_COLOUR, "size": 6, "opacity": 0.5},
        },
        {
            "type": kind,
            "x": x[topic],
            "y": decided_by[topic],
            "name": f"boundary ({rule} rule)",
            "mode": "markers",
            "hovertemplate": value_only,
            "marker": {"color": LIMIT_COLOUR, "size": 11, "symbol": "x"},
        },
    ]
    if len(edges):
        data.append(
            {
                "type": "scatter",
                "x": np.repeat(edges, 3),
                "y": np.tile([low, top, np.nan], len(edges)),
                "mode": "lines",
                "line": {"color": "#555", "dash": "dot", "width": 1},
                "hoverinfo": "skip",
                "name": "file edges",
            }
        )
    annotations: list[dict[str, Any]] = [
        {
            "x": 0,
            "xref": "paper",
            "y": threshold,
            "yanchor": "bottom",
            "xanchor": "left",
            "showarrow": False,
            "text": f"similarity_drop_threshold = {threshold:.2f}",
            "font": {"color": LIMIT_COLOUR},
        }
    ]
    # File names along the top, on two rows; a name with no room on either is left to the hover.
    for row, (position, name) in _placed_labels(file_labels, pairs + 1):
        annotations.append(
            {
                "x": position,
                "y": 1.0,
                "yref": "paper",
                "yanchor": "bottom",
                "yshift": 16 * row,
                "showarrow": False,
                "text": plot_text(name),
                "font": {"size": 11, "color": "#444"},
            }
        )
    layout = {
        "title": {"text": plot_text(title), "y": 0.97},
        "xaxis": {
            "title": {"text": "leaf (a point sits between the two leaves it compares; dotted: file edges)"},
            "range": [-0.5, pairs + 0.5],
        },
        "yaxis": {"title": {"text": "cosine similarity"}, "range": [low, top]},
        "shapes": [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": threshold,
                "y1": threshold,
                "line": {"color": LIMIT_COLOUR, "dash": "dash", "width": 1.5},
            }
        ],
        "annotations": annotations,
        "legend": {"orientation": "h", "y": -0.3},
        "hovermode": "closest",
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 95 if file_labels else 40, "b": 10},
    }
    return SimilarityView(
        figure=_fast_figure(data, layout),
        pairs=pairs,
        topic_boundaries=int(np.count_nonzero(topic)),
        groups=len(starts),
    )


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
    ).figure


def plan_similarity_curve(plan: HierarchyPlan, leaf_start: int, leaf_end: int, title: str) -> SimilarityView:
    """:func:`similarity_curve` of rows ``[leaf_start, leaf_end)`` of a plan's
    table (one file, or a window across several): the plan's own groups as
    bands, file edges dotted, and the files named when a few are in view."""
    table, seg, params = plan.table, plan.segmentation, plan.parameters
    pair_rows = np.arange(leaf_start, max(leaf_start, leaf_end - 1))
    rows = np.arange(leaf_start, leaf_end)
    paths = table.paths
    # Short: the files are named along the top and in the title; the end of a scope tells it apart.
    names_of = [path.rsplit("/", 1)[-1] for path in paths]
    labels = [
        f"{keep_end(table.scopes[r], 48)} · {names_of[table.file_index[r]]} "
        f"L{int(table.start_lines[r])}–{int(table.end_lines[r])}"
        for r in rows
    ]
    in_view = np.flatnonzero((plan.group_ends > leaf_start) & (plan.group_starts < leaf_end))
    groups = (
        np.maximum(plan.group_starts[in_view], leaf_start) - leaf_start,
        np.minimum(plan.group_ends[in_view], leaf_end) - leaf_start,
    )
    files = table.file_index[leaf_start:leaf_end]
    names: list[tuple[float, str]] = []
    if 1 < len(np.unique(files)) <= MAX_FILE_LABELS:
        firsts = np.flatnonzero(np.diff(files, prepend=-1))
        lasts = np.append(firsts[1:], len(files)) - 1
        names = [
            ((first + last) / 2, paths[files[first]].rsplit("/", 1)[-1]) for first, last in zip(firsts, lasts)
        ]
    return similarity_curve(
        seg.similarities[pair_rows],
        seg.smoothed[pair_rows],
        seg.boundaries[pair_rows],
        params.similarity_drop_threshold,
        params.smoothing_window_size,
        params.boundary_rule,
        labels,
        title,
        groups=groups,
        file_labels=names,
        height=460,
    )


def _envelope_band(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The area between ``low`` and ``high`` as closed outlines, one per run of columns where
    both have a value (NaN between outlines)."""
    filled = ~(np.isnan(low) | np.isnan(high))
    edges = np.flatnonzero(np.diff(np.concatenate(([0], filled.astype(np.int8), [0]))))
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    for start, end in zip(edges[::2], edges[1::2]):
        run = slice(start, end)
        xs += [x[run], x[run][::-1], [np.nan]]
        ys += [high[run], low[run][::-1], [np.nan]]
    if not xs:
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    # float32: the figure is sent as typed arrays, and a float64 band doubled the overview's bytes.
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.float32)


def overview_curve(plan: HierarchyPlan, window: tuple[int, int]) -> go.Figure:
    """The whole repository's raw similarity of adjacent leaves, reduced to
    the lowest and highest value per pixel column (every dip stays visible),
    with the detail ``window`` of leaves shaded.

    Raw, not smoothed, and without the threshold or the boundaries: it
    depends on the vectors and the detail window only, so a threshold or
    smoothing step sends the same figure, which Streamlit neither sends nor
    draws again (a changed chart is mounted and drawn twice in the browser,
    most of a step's time there). The smoothed curve, the threshold, the
    boundaries and the counts are in the detail chart and the metrics."""
    envelope = min_max_envelope(plan.segmentation.similarities)
    filled = envelope.low[~np.isnan(envelope.low)]
    bottom, top = min(0.0, float(filled.min()) if len(filled) else 0.0) - 0.05, 1.05
    width = window[1] - window[0]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": window[0] - 0.5 + np.array([0, width, width, 0, 0]),
            "y": [bottom, bottom, top, top, bottom],
            "fill": "toself",
            "fillcolor": "rgba(255, 127, 14, 0.18)",
            "line": {"color": "rgba(255, 127, 14, 0.9)", "width": 1},
            "mode": "lines",
            "hoverinfo": "skip",
            "name": "detail window (below)",
        }
    ]
    # The lowest and highest value of each column as one filled outline per run of columns with a
    # value: its edges are the two curves. A fill between two traces joined the two sides of a gap
    # (columns of file edges only) with a diagonal across the chart, and sent every point twice.
    # SVG: a few hundred points draw faster than starting WebGL (software-rendered without a GPU).
    band_x, band_y = _envelope_band(envelope.starts, envelope.low, envelope.high)
    data.append(
        {
            "type": "scatter",
            "x": band_x,
            "y": band_y,
            "mode": "lines",
            "name": OVERVIEW_CURVE,
            "line": {"color": SMOOTHED_COLOUR, "width": 1},
            "fill": "toself",
            "fillcolor": "rgba(31, 119, 180, 0.25)",
            "hoveron": "points",
            "hovertemplate": "leaves from %{x:.0f}: raw similarity %{y:.3f}<extra></extra>",
        }
    )
    layout = {
        "xaxis": {
            "title": {"text": "leaves in document order (click to move the window there)"},
            "range": [0, len(plan.table)],
        },
        "yaxis": {"title": {"text": "raw similarity"}, "range": [bottom, top]},
        "legend": {"orientation": "h", "y": 1.2},
        "clickmode": "event",
        "height": 220,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return _fast_figure(data, layout)
