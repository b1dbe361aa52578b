"""The Similarity page's figures, on a synthetic table of a few thousand leaves:
what a slider step changes, and what it leaves alone (so it is not resent)."""

from __future__ import annotations

import dataclasses

import numpy as np
import plotly.io as pio

from hsc.bench.perf import synthetic_table
from hsc.explore.figures import overview_curve, plan_similarity_curve
from hsc.explore.views import DETAIL_LEAVES
from hsc.hierarchy.groups import plan_hierarchy
from hsc.params import Parameters

TABLE = synthetic_table(3000, seed=3)


def plan_with(**changes: object):
    return plan_hierarchy(TABLE, dataclasses.replace(Parameters(), **changes))


def spec(figure) -> str:
    """The figure as Streamlit sends it to the browser."""
    return pio.to_json(figure, validate=False)


def test_a_threshold_step_leaves_the_overview_as_it_was_and_redraws_the_detail():
    low, high = plan_with(similarity_drop_threshold=0.3), plan_with(similarity_drop_threshold=0.62)
    assert low.group_count < high.group_count  # the step changed the grouping
    window = (0, DETAIL_LEAVES)
    assert spec(overview_curve(low, window)) == spec(overview_curve(high, window))
    detail_low = plan_similarity_curve(low, *window, "window")
    detail_high = plan_similarity_curve(high, *window, "window")
    assert detail_low.topic_boundaries < detail_high.topic_boundaries
    assert spec(detail_low.figure) != spec(detail_high.figure)


def test_a_smoothing_step_leaves_the_overview_too_and_only_the_detail_window_moves_it():
    one, three = plan_with(smoothing_window_size=1), plan_with(smoothing_window_size=3)
    assert spec(overview_curve(one, (0, DETAIL_LEAVES))) == spec(overview_curve(three, (0, DETAIL_LEAVES)))
    assert spec(overview_curve(one, (0, DETAIL_LEAVES))) != spec(overview_curve(one, (800, 1200)))
    window = (0, DETAIL_LEAVES)
    assert spec(plan_similarity_curve(one, *window, "w").figure) != spec(
        plan_similarity_curve(three, *window, "w").figure
    )


def test_the_overview_sends_one_point_per_column_whatever_the_repository_size():
    figure = overview_curve(plan_with(), (0, DETAIL_LEAVES))
    curves = [trace for trace in figure.data if trace.name.endswith("per column")]
    assert len(curves) == 1  # the lowest and the highest of each column, one outline
    x = curves[0].x[~np.isnan(curves[0].x)]
    assert len(x) <= 2 * 800 < 2 * len(TABLE) and len(np.unique(x)) <= 800


def test_at_window_one_the_seeds_smoothing_is_drawn_for_comparison_and_decides_nothing():
    from hsc.hierarchy.boundaries import smooth

    window = (0, DETAIL_LEAVES)
    shipped = plan_with(smoothing_window_size=1)
    ghosts = [t for t in plan_similarity_curve(shipped, *window, "w").figure.data if "the seed's" in t.name]
    assert len(ghosts) == 1
    raw = shipped.segmentation.similarities[: DETAIL_LEAVES - 1]
    # The curve at window 3, not the raw one it would otherwise repeat (file edges stay gaps).
    expected = smooth(raw, 3).round(4)
    shown = ghosts[0].y.astype(float)
    assert np.allclose(shown, expected, atol=1e-4, equal_nan=True)
    assert (shown[raw == raw] != raw[raw == raw].round(4)).any()
    # The boundaries are the shipped rule's alone: drawing it changed none.
    assert plan_similarity_curve(shipped, *window, "w").topic_boundaries == int(
        shipped.segmentation.boundaries[: DETAIL_LEAVES - 1].sum() - (raw != raw).sum()
    )
    smoothed = plan_with(smoothing_window_size=3)
    names = [t.name for t in plan_similarity_curve(smoothed, *window, "w").figure.data]
    assert not [name for name in names if "the seed's" in name]  # smoothing shows by itself there


def test_the_overview_band_never_spans_a_gap_between_files():
    import numpy as np

    from hsc.explore.figures.similarity import OVERVIEW_CURVE, _envelope_band

    # Columns holding only file edges (runs of one-leaf files) have no value: a fill between the
    # lowest and highest traces joined the two sides of such a gap with a diagonal across the chart.
    x = np.arange(12, dtype=float)
    low = np.array([0.5, 0.4, 0.6, np.nan, np.nan, 0.3, 0.2, 0.5, np.nan, 0.7, 0.6, 0.5])
    high = low + 0.2
    xs, ys = _envelope_band(x, low, high)
    outlines = [part[~np.isnan(part)] for part in np.split(xs, np.flatnonzero(np.isnan(xs)))]
    outlines = [part for part in outlines if len(part)]
    assert [(part.min(), part.max()) for part in outlines] == [(0, 2), (5, 7), (9, 11)]
    names = {t.name: t.fill for t in overview_curve(plan_with(), (0, DETAIL_LEAVES)).data}
    assert names[OVERVIEW_CURVE] == "toself"  # the overview draws its band so, and no fill between traces
    assert "tonexty" not in names.values()


def test_file_names_along_the_top_never_overlap():
    from hsc.explore.figures.similarity import LABEL_PX_PER_CHARACTER, PLOT_WIDTH_PX, _placed_labels

    # Forty small files side by side in a window of 400 leaves: the names would pile into a smear.
    labels = [(5 + 10 * n, f"module_{n:02d}.py") for n in range(40)]
    placed = _placed_labels(labels, 400)
    assert 0 < len(placed) < len(labels)
    for row in (0, 1):
        spans = sorted(
            (
                x * PLOT_WIDTH_PX / 400 - len(name) * LABEL_PX_PER_CHARACTER / 2,
                x * PLOT_WIDTH_PX / 400 + len(name) * LABEL_PX_PER_CHARACTER / 2,
            )
            for r, (x, name) in placed
            if r == row
        )
        assert all(left >= right for (_, right), (left, _) in zip(spans, spans[1:]))
    wide = [(100, "a.py"), (300, "b.py")]
    assert [label for _, label in _placed_labels(wide, 400)] == wide  # room: every name kept


def test_the_limits_are_named_above_the_histogram_and_axis_titles_clear_their_ticks():
    from hsc.app.ui.charts import folder_leaves_figure, token_histogram

    # The tallest bars sit at the maximum (split pieces): a name inside the plot was cut by them.
    figure = token_histogram([12, 30, 250, 256, 256, 256], 24, 256)
    names = {a.text: a for a in figure.layout.annotations}
    assert set(names) == {"minimum_chunk_token_length = 24", "maximum_chunk_token_length = 256"}
    assert all(a.yref == "paper" and a.y >= 1 and a.yanchor == "bottom" for a in names.values())
    assert names["maximum_chunk_token_length = 256"].xanchor == "right"  # ends at its line, inside
    assert figure.layout.xaxis.range[1] > 256
    folders = folder_leaves_figure(["a/x.py", "b.py"], [3, 4])
    assert folders.layout.margin.b >= 40 and folders.layout.xaxis.title.standoff
