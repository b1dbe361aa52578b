"""Leaves: the smallest retrievable units, their sizes, and where each sits."""

from __future__ import annotations

import streamlit as st

from hsc.app import ui
from hsc.app.ui.charts import file_position_figure, token_histogram
from hsc.explore.figures import chart_config
from hsc.explore.views import keep_end, leaf_class

# The first page of the table: filters reach the rest. More rows cost the browser time at every visit.
MAX_ROWS = 500


index = ui.page_setup("Leaves")
st.title("Leaves")
st.caption(
    "**Stage 1: leaves.** A leaf is one node of the syntax tree — a function, a method, a class header, "
    "a paragraph of prose. Nodes longer than maximum_chunk_token_length are split along their children and "
    "neighbours shorter than minimum_chunk_token_length are merged, so every leaf is a self-contained unit "
    "of a size the embedding model reads well."
)

repository = ui.require_repository(index)
repository_id = int(repository["id"])
leaves = ui.leaf_rows(index, repository)
if not leaves:
    st.info("This repository has no leaves: none of its files could be parsed. See the Repository page.")
    st.stop()

frame = ui.leaf_frame(index, repository)
frame = frame.assign(**{"class": frame["chunker"].map(leaf_class)})
data_leaves = int((frame["class"] == "data").sum())
everything = frame
if 0 < data_leaves < len(frame):
    # Data and generated files are indexed and searchable, but left out of the figures by default.
    frame = frame[frame["class"] != "data"].reset_index(drop=True)
    st.caption(
        f"{data_leaves} leaves of data or generated files (class data) are left out of the figures; "
        "choose class data below to browse them."
    )

cut_with = ui.chunk_limits(repository)
params = ui.current_parameters()
minimum, maximum = cut_with or (params.minimum_chunk_token_length, params.maximum_chunk_token_length)

stats = st.columns(5)
stats[0].metric("Leaves", len(frame))
stats[1].metric("Files", frame["path"].nunique())
stats[2].metric("Median tokens", int(frame["token_count"].median()))
stats[3].metric(
    "Below the minimum",
    int((frame["token_count"] < minimum).sum()),
    help="Leaves that could not be merged: alone in their file, or between large neighbours.",
)
stats[4].metric(
    "Above the maximum",
    int((frame["token_count"] > maximum).sum()),
    help="Leaves that could not be split further, e.g. one very long line.",
)

st.plotly_chart(
    token_histogram(frame["token_count"].tolist(), minimum, maximum),
    key="leaves:histogram",
    config=chart_config(f"leaf-sizes-{repository['name']}"),
)
if cut_with and cut_with != (params.minimum_chunk_token_length, params.maximum_chunk_token_length):
    st.caption(
        f"The lines show the limits these leaves were cut with. The sidebar holds "
        f"{params.minimum_chunk_token_length} and {params.maximum_chunk_token_length}: re-index on the "
        "Repository page to cut with those."
    )

st.subheader("Browse the leaves")
filters = st.columns([2, 1, 1, 1, 1])
classes = filters[3].multiselect(
    "Class", sorted(everything["class"].unique()), key="leaves:classes", placeholder="code, prose, text"
)
if classes:
    frame = everything[everything["class"].isin(classes)].reset_index(drop=True)
# What each file is for (hsc.chunk.roles): the table opens on the project's own code when it has
# some, as agents' tools search it; docs, tests and changelogs are a choice away.
present = sorted(frame["role"].unique()) if "role" in frame else []
roles = filters[4].multiselect(
    "Role",
    present,
    default=ui.opening_roles(present),
    key="leaves:roles",
    placeholder="every role",
    help="code, test, docs, changelog, example, config or generated, from the file's path",
)
paths = filters[0].multiselect(
    "Path", sorted(frame["path"].unique()), key="leaves:paths", placeholder="all files"
)
node_types = filters[1].multiselect(
    "Node type", sorted(frame["node_type"].unique()), key="leaves:types", placeholder="all types"
)
scope_text = filters[2].text_input("Scope contains", key="leaves:scope", placeholder="e.g. PriceBook")

shown = frame
if roles:
    shown = shown[shown["role"].isin(roles)]
if paths:
    shown = shown[shown["path"].isin(paths)]
if node_types:
    shown = shown[shown["node_type"].isin(node_types)]
if scope_text.strip():
    shown = shown[shown["scope"].str.contains(scope_text.strip(), case=False, regex=False)]
shown = shown.reset_index(drop=True)
if shown.empty:
    st.info("No leaf matches these filters.")
    st.stop()
matching = len(shown)
# A table of tens of thousands of rows costs the browser seconds and shows no more than a filter would.
shown = shown.head(MAX_ROWS)

table, detail = st.columns([5, 4], gap="large")
with table:
    more = f" (the first {MAX_ROWS}: filter to see others)" if matching > MAX_ROWS else ""
    st.caption(f"{matching} of {len(frame)} leaves{more} · select a row to open it")
    event = st.dataframe(
        # The file once per run of its rows; the scope without the module its path already says.
        shown[["path", "lines", "token_count", "scope", "node_type", "role", "class"]].assign(
            path=ui.once_per_run([keep_end(p, 40) for p in shown["path"]]),
            scope=[ui.scope_in_file(s, p) for s, p in zip(shown["scope"], shown["path"], strict=True)],
        ),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="leaves:table",
        height=520,
        column_config={
            "node_type": st.column_config.TextColumn("node type", width="small"),
            "lines": st.column_config.TextColumn(width="small"),
            "token_count": st.column_config.NumberColumn("tokens", width="small"),
            "scope": st.column_config.TextColumn("scope in its file", width="large"),
            "role": st.column_config.TextColumn(width="small"),
        },
    )
    selected_rows = [row for row in event.selection.rows if row < len(shown)]
    leaf = shown.iloc[selected_rows[0] if selected_rows else 0]

with detail:
    st.markdown(f"**{ui.md(leaf['scope'] or leaf['path'])}**")
    st.text(
        f"{leaf['path']} · {leaf['role']} · {leaf['lines']} · {leaf['node_type']} · "
        f"{leaf['token_count']} tokens · cut by {leaf['chunker']} · {leaf['id']}"
    )
    file_leaves = frame[frame["path"] == leaf["path"]].to_dict("records")
    position = next(i for i, row in enumerate(file_leaves) if row["id"] == leaf["id"]) + 1
    st.caption(f"Leaf {position} of {len(file_leaves)} in its file (red below); hover for the others.")
    st.plotly_chart(
        file_position_figure(file_leaves, str(leaf["id"])),
        key="leaves:position",
        config=chart_config(f"leaves-of-{leaf['path']}"),
    )
    if selected_rows:
        st.code(index.node(leaf["id"]).text, language=ui.code_language(leaf["language"]), wrap_lines=True)
    else:
        # The code is read (and the highlighter, a large script, loaded) once a row is chosen:
        # opening the page stays quick on a large repository.
        st.caption("Select a row in the table to read that leaf's code.")
