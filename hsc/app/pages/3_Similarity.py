"""Similarity: where the topic changes between neighbouring leaves."""

from __future__ import annotations

import time

import streamlit as st

from hsc.app import ui
from hsc.app.ui.similarity import retrieval_effect, threshold_effect
from hsc.app.ui.tuning import current_against_saved
from hsc.explore.figures import chart_config, overview_curve, plan_similarity_curve
from hsc.explore.views import DETAIL_LEAVES, file_rows, leaf_window, pair_at, pair_label
from hsc.hierarchy.groups import HierarchyPlan

SLIDERS = ("similarity_drop_threshold", "smoothing_window_size", "boundary_rule")
index = ui.page_setup("Similarity", own_parameters=SLIDERS)
st.title("Similarity")
st.caption(
    "**Stage 3: topic boundaries.** Each leaf is compared with the next one in the file (cosine similarity "
    "of their embeddings). The curve is smoothed over smoothing_window_size pairs so one odd leaf does not "
    "split a topic; where it dips below similarity_drop_threshold the topic changes, and a boundary falls "
    "there (boundary_rule *valley*: once per dip, at its lowest raw similarity; *threshold*: at every pair "
    "below). The leaves between boundaries form the mid-level groups, shaded; groups never cross a file."
)

repository = ui.require_repository(index)
WINDOW = "similarity:window_start"
OVERVIEW = "similarity:overview"
VIEW = "similarity:view"


def counts(plan: HierarchyPlan, preview_ms: float) -> None:
    """Boundaries and groups now, against the saved default set."""
    saved = next((h for h in index.hierarchies(repository["id"]) if h["name"] == "default"), None)
    boundaries = plan.segmentation.topic_boundary_count
    metrics = st.columns(4)
    metrics[0].metric(
        "Topic boundaries",
        boundaries,
        delta=None if saved is None else ui.signed(boundaries - int(saved["topic_boundaries"])),
        delta_arrow="off",
        delta_color="off",
        delta_description="vs the saved default set",
        help=(
            "Boundaries from a similarity valley; file edges are boundaries too but are not counted here. "
            "With the valley rule a higher threshold can give fewer boundaries: dips that were apart join "
            "into one run below the threshold, and a run gets one boundary."
        ),
    )
    metrics[1].metric(
        "Mid-level groups",
        plan.group_count,
        delta=None if saved is None else ui.signed(plan.group_count - int(saved["group_count"])),
        delta_arrow="off",
        delta_color="off",
        delta_description="vs the saved default set",
    )
    metrics[2].metric("Leaves per group", f"{len(plan.table) / max(plan.group_count, 1):.1f}")
    metrics[3].metric(
        "Preview took", f"{preview_ms:.0f} ms", help="index.preview(): rebuilt from cached vectors."
    )


def rows_in_view(plan: HierarchyPlan) -> tuple[int, int, str]:
    """The rows ``[start, end)`` of the leaf table to draw, and a title: a file,
    the whole of a small repository, or (in a large one) a window under an
    overview, so no chart holds more points than it can show."""
    table = plan.table
    total = len(table)
    large = total > DETAIL_LEAVES
    whole = (
        f"Overview, and a window of {DETAIL_LEAVES} leaves"
        if large
        else "Whole repository, in document order"
    )

    def window_to_file() -> None:
        """Choosing a file also moves the window there, for when the overview comes back."""
        chosen = st.session_state[VIEW]
        if chosen != whole:
            st.session_state[WINDOW] = file_rows(table, table.paths.index(chosen))[0]

    view = st.selectbox(
        "Show",
        [whole, *table.paths],
        key=VIEW,
        on_change=window_to_file,
        help="A file, or (in a large repository) the overview with a window you can move.",
    )
    if view != whole:
        start, end = file_rows(table, table.paths.index(view))
        return start, end, f"{ui.plot_text(view)}: {end - start} leaves"
    if not large:
        return 0, total, f"All {len(table.paths)} files, {total} leaves"
    # A click on the overview moves the window there (once per click: the selection stays in the state).
    clicked = st.session_state.get(OVERVIEW)
    points = clicked.selection.points if clicked else []
    if points and points[0].get("x") != st.session_state.get("similarity:clicked_x"):
        st.session_state["similarity:clicked_x"] = points[0].get("x")
        st.session_state[WINDOW] = int(points[0]["x"]) - DETAIL_LEAVES // 2
    start, end = leaf_window(total, int(st.session_state.get(WINDOW, 0)))
    st.session_state[WINDOW] = start
    st.plotly_chart(
        overview_curve(plan, (start, end)),
        key=OVERVIEW,
        on_select="rerun",
        selection_mode="points",
        config=chart_config("similarity-overview"),
    )
    st.slider(
        "Window starts at leaf",
        0,
        total - DETAIL_LEAVES,
        step=max(1, DETAIL_LEAVES // 4),
        key=WINDOW,
        help="Or click the overview where you want to look.",
    )
    first_file, last_file = table.file_index[start], table.file_index[end - 1]
    title = (
        f"Leaves {start + 1}–{end} of {total} · "
        f"{ui.plot_text(table.paths[first_file])} … {ui.plot_text(table.paths[last_file])}"
    )
    return start, end, title


def pair_detail(plan: HierarchyPlan, pair: int, start: int) -> None:
    """The two leaves a clicked point compares, side by side (numbered as the chart's axis is)."""
    seg, group_of_leaf, table = plan.segmentation, plan.group_of_leaf(), plan.table
    first, second = pair_label(pair, start)
    st.markdown(
        f"**Leaves {first} and {second} on the chart:** raw similarity "
        f"{seg.similarities[pair]:.3f}, "
        f"smoothed {seg.smoothed[pair]:.3f}"
        + (" · a boundary falls here" if seg.boundaries[pair] else " · same group")
    )
    for column, row in zip(st.columns(2), (pair, pair + 1)):
        leaf = index.node(f"leaf:{int(table.leaf_ids[row])}")
        column.caption(
            ui.md(
                f"group {int(group_of_leaf[row]) + 1} · {leaf.path} "
                f"{ui.line_range(leaf.start_line, leaf.end_line)} · {leaf.token_count} tokens · "
                f"{leaf.scope}"
            )
        )
        column.code(leaf.text, language=ui.code_language(leaf.language), wrap_lines=True)


@st.fragment
def live_view() -> None:
    """Sliders, counts and charts. A fragment: moving a slider reruns only
    this, not the page around it nor the sidebar, so a step sends and the
    browser redraws only what changed."""
    ui.take_moved_widgets()  # a fragment's run starts here, not in page_setup
    if ui.editor_label_is_stale():
        # The first change from the defaults (or the last one back): the sidebar says so too. Only
        # then is the whole page rerun; the steps after it rerun this fragment alone.
        st.rerun(scope="app")
    sliders = st.columns([3, 3, 2], gap="large")
    with sliders[0]:
        ui.parameter_input("similarity_drop_threshold", "similarity", slider=True, slider_range=(0.0, 1.0))
    with sliders[1]:
        ui.parameter_input("smoothing_window_size", "similarity", slider=True, slider_range=(1, 10))
    with sliders[2]:
        ui.parameter_input("boundary_rule", "similarity")

    params = ui.current_parameters()
    ui.publish_view(index, repository)  # a slider step reruns only this fragment: the URL follows here
    started = time.perf_counter()
    # Cached vectors, numpy only: a new threshold or window costs milliseconds, no database write.
    plan = index.preview(int(repository["id"]), params)
    preview_ms = (time.perf_counter() - started) * 1000
    if len(plan.table) < 2:
        st.info("This repository has fewer than two leaves, so there are no neighbours to compare.")
        return
    counts(plan, preview_ms)
    st.caption(threshold_effect(index, repository, params, plan.segmentation.topic_boundary_count))
    retrieval_effect(index, repository, plan, params)
    start, end, title = rows_in_view(plan)
    if end - start < 2:
        st.info("This file has a single leaf, so there is nothing to compare inside it.")
    else:
        chart = plan_similarity_curve(plan, start, end, title)
        event = st.plotly_chart(
            chart.figure,
            key="similarity:chart",
            on_select="rerun",
            selection_mode="points",
            config=chart_config("similarity-" + title.split(":")[0].split(" · ")[0]),
        )
        st.caption(
            f"{chart.pairs} adjacent pairs, {chart.topic_boundaries} boundaries from valleys, "
            f"{chart.groups} groups in view. Hover a point for the two leaves it compares; "
            "click it to open them."
            + (f" {ui.WHY_NO_SMOOTHING}" if params.smoothing_window_size == 1 else "")
        )
        points = event.selection.points if event else []
        pair = pair_at(start, end, points[0].get("x")) if points else None
        if pair is not None:
            pair_detail(plan, pair, start)
    current_against_saved(index, repository, params)


live_view()
