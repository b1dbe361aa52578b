"""Walkthrough: one file through the five stages, with its real data, for teaching."""

from __future__ import annotations

import streamlit as st

from hsc.app import ui
from hsc.app.ui.walk_levels import stage_levels
from hsc.app.ui.walkthrough import (
    WalkthroughData,
    neighbourhood_map,
    query_section,
    report_download,
    stage_embeddings,
    stage_groups,
    stage_leaves,
    stage_similarity,
)
from hsc.explore.explain import suggest_file

index = ui.page_setup("Walkthrough")
st.title("Walkthrough")
st.caption(
    "**The whole method on one file.** Pick a file and follow it: cut into leaves along its syntax tree, "
    "embedded, split into topics where neighbouring leaves stop being alike, grouped and summarised, then "
    "searched, and what was found packed for a model within a token budget. Every number below is the "
    "index's own, for the parameter set chosen here."
)

repository = ui.require_repository(index)
repository_id = int(repository["id"])
hierarchies = ui.saved_hierarchies(index, repository_id)
by_name = {h["name"]: h for h in hierarchies}
names = list(by_name)

choose = st.columns([1, 2.6, 1.4], vertical_alignment="bottom")
chosen_name = ui.set_picker(choose[0], names, key="walk:set")
hierarchy_id = int(by_name[chosen_name]["id"])
data = WalkthroughData(index, hierarchy_id)
plan = data.plan
if not len(plan.table):
    st.info("This repository has no leaves: none of its files could be parsed. See the Repository page.")
    st.stop()
paths = plan.table.paths
suggested = suggest_file(plan)
path = choose[1].selectbox(
    "File to follow",
    paths,
    index=paths.index(suggested) if suggested in paths else 0,
    key="walk:file",
    help="Suggested: a file of readable length with the most topic boundaries.",
)
with choose[2]:
    report_download(index, hierarchy_id, chosen_name, str(repository["name"]))
walk = data.walk(path)
for problem in walk.problems:
    st.warning(ui.md(problem))

stage_leaves(walk)
stage_embeddings(walk, int(plan.table.vectors.shape[1]))
stage_similarity(walk)
stage_groups(walk, ui.summariser_text(index))

query_section(data, walk)
stage_levels(index, hierarchy_id, data.stamp, path)
neighbourhood_map(data, walk)
