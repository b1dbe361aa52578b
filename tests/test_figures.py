"""The Similarity page's figures, on a synthetic table of a few thousand leaves:
what a slider step changes, and what it leaves alone (so it is not resent)."""

from __future__ import annotations

import dataclasses

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
    assert len(curves) == 2
    assert all(len(trace.x) <= 800 < len(TABLE) for trace in curves)
