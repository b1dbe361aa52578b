"""Similarity: where the topic changes between neighbouring leaves."""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

import ui
from ui.charts import similarity_figure

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
repository_id = int(repository["id"])

sliders = st.columns([3, 3, 2], gap="large")
with sliders[0]:
    ui.parameter_input("similarity_drop_threshold", "similarity", slider=True, slider_range=(0.0, 1.0))
with sliders[1]:
    ui.parameter_input("smoothing_window_size", "similarity", slider=True, slider_range=(1, 10))
with sliders[2]:
    ui.parameter_input("boundary_rule", "similarity")

params = ui.current_parameters()
started = time.perf_counter()
# Cached vectors, numpy only: a new threshold or window costs milliseconds, no database write.
plan = index.preview(repository_id, params)
preview_ms = (time.perf_counter() - started) * 1000
if len(plan.table) < 2:
    st.info("This repository has fewer than two leaves, so there are no neighbours to compare.")
    st.stop()

saved = next((h for h in index.hierarchies(repository_id) if h["name"] == "default"), None)
boundaries = plan.segmentation.topic_boundary_count
metrics = st.columns(4)
metrics[0].metric(
    "Topic boundaries",
    boundaries,
    delta=None if saved is None else boundaries - int(saved["topic_boundaries"]),
    delta_color="off",
    delta_description="vs the saved default set",
    help="Boundaries from a similarity valley; file edges are boundaries too but are not counted here.",
)
metrics[1].metric(
    "Mid-level groups",
    plan.group_count,
    delta=None if saved is None else plan.group_count - int(saved["group_count"]),
    delta_color="off",
    delta_description="vs the saved default set",
)
metrics[2].metric("Leaves per group", f"{len(plan.table) / max(plan.group_count, 1):.1f}")
metrics[3].metric(
    "Preview took", f"{preview_ms:.0f} ms", help="index.preview(): rebuilt from cached vectors."
)

table = plan.table
WHOLE = "Whole repository, in document order"
views = [WHOLE, *table.paths]
view = st.selectbox("Show", views, key="similarity:view")
if view == WHOLE:
    leaf_start, leaf_end = 0, len(table)
    title = f"All {len(table.paths)} files, {len(table)} leaves"
else:
    rows = np.flatnonzero(table.file_index == table.paths.index(view))
    leaf_start, leaf_end = int(rows[0]), int(rows[-1]) + 1
    title = f"{ui.plot_text(view)}: {leaf_end - leaf_start} leaves"

if leaf_end - leaf_start < 2:
    st.info("This file has a single leaf, so there is nothing to compare inside it.")
else:
    chart = similarity_figure(plan, leaf_start, leaf_end, title)
    st.plotly_chart(chart.figure, key="similarity:chart")
    note = "" if chart.bands_shown else " Too many groups to shade them all; zoom into a file."
    st.caption(
        f"{chart.pairs} adjacent pairs, {chart.topic_boundaries} boundaries from valleys, "
        f"{chart.groups} groups in view. Hover a point for the two leaves it compares.{note}"
    )

from ui.tuning import current_against_saved  # noqa: E402

current_against_saved(index, repository, params)
