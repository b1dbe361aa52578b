"""Walkthrough: one file through the five stages, with its real data, for teaching."""

from __future__ import annotations

import streamlit as st

import ui
from hsc.explain import hierarchy_plan, suggest_file, suggest_query, trace_query, walk_file
from ui.walkthrough import (
    neighbourhood_map,
    report_download,
    stage_embeddings,
    stage_groups,
    stage_leaves,
    stage_query,
    stage_similarity,
)

index = ui.page_setup("Walkthrough")
st.title("Walkthrough")
st.caption(
    "**The whole method on one file.** Pick a file and follow it: cut into leaves along its syntax tree, "
    "embedded, split into topics where neighbouring leaves stop being alike, grouped and summarised, then "
    "searched. Every number below is the index's own, for the parameter set chosen here."
)

repository = ui.require_repository(index)
repository_id = int(repository["id"])
hierarchies = ui.saved_hierarchies(index, repository_id)
by_name = {h["name"]: h for h in hierarchies}
names = list(by_name)

choose = st.columns([1, 3, 1], vertical_alignment="bottom")
chosen_name = choose[0].selectbox(
    "Parameter set", names, index=names.index("default") if "default" in names else 0, key="walk:set"
)
hierarchy_id = int(by_name[chosen_name]["id"])
plan = hierarchy_plan(index, hierarchy_id)
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
walk = walk_file(index, hierarchy_id, path, plan)
for problem in walk.problems:
    st.warning(ui.md(problem))

stage_leaves(walk)
stage_embeddings(walk, int(plan.table.vectors.shape[1]))
stage_similarity(walk)
stage_groups(walk, ui.summariser_text(index))

st.subheader("5 · One query, two stages")
text = st.text_input(
    "Query", value=suggest_query(walk), key=f"walk:query:{path}", help="Describe in words what code you want."
)
if text.strip():
    stage_query(trace_query(index, text, hierarchy_id, plan))
else:
    st.info("Type a query to follow it through stage 1 and stage 2.")

neighbourhood_map(plan, walk)
