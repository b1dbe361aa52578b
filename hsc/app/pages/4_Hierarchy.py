"""Hierarchy: files, groups and leaves; summaries; saved parameter sets compared."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd
import streamlit as st

from hsc import Settings
from hsc.app import ui
from hsc.app.ui.charts import group_size_figure, hierarchy_figure
from hsc.app.ui.structure import structure_section
from hsc.app.ui.tuning import save_form, unsaved_preview
from hsc.explore.figures import chart_config
from hsc.explore.views import folders_of, hierarchy_tree, keep_end, place_counts, without_data
from hsc.hierarchy.summarize import (
    DEFAULT_OLLAMA_HOST,
    DigestSummarizer,
    check_ollama,
    describe_summarizer,
    make_summarizer,
)

index = ui.page_setup("Hierarchy")
st.title("Hierarchy")
st.caption(
    "**Stage 4: three tiers.** Each file is a top-level node; its groups of similar neighbouring leaves "
    "are the mid level; the leaves sit underneath. A group longer than maximum_merged_chunk_token_length "
    "gets a summary that stands in for its text. Queries first pick groups, then leaves inside them, "
    "so a search reads a few groups instead of every leaf."
)

repository = ui.require_repository(index)
repository_id = int(repository["id"])
hierarchies = ui.saved_hierarchies(index, repository_id)
by_name = {h["name"]: h for h in hierarchies}


def parameters_label(values: dict[str, Any]) -> str:
    changed = ui.differing_from_defaults(values)
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "defaults"


names = list(by_name)
chosen_name = ui.set_picker(
    st,
    names,
    key="hierarchy:set",
    format_func=lambda n: f"{n} — {parameters_label(by_name[n]['parameters'])}",
)
hierarchy = by_name[chosen_name]
hierarchy_id = int(hierarchy["id"])

documents, all_groups = ui.hierarchy_tiers(index, hierarchy)
data_files = index.data_files(repository_id)
if data_files and not st.toggle(
    f"Include {len(data_files)} data files",
    key="hierarchy:with_data",
    help="Files of literal tables, generated or minified text: indexed and searchable, "
    "left out of these figures by default (they would drown them).",
):
    documents, all_groups = without_data(documents, data_files), without_data(all_groups, data_files)
leaves_by_id = {leaf["id"]: leaf for leaf in ui.leaf_rows(index, repository)}
if not all_groups:
    st.info("This parameter set has no groups: the repository has no leaves. See the Repository page.")
    st.stop()

counts = st.columns(4)
counts[0].metric("Files (top)", len(documents))
counts[1].metric("Groups (mid)", len(all_groups))
counts[2].metric("Leaves", sum(len(g.children) for g in all_groups))
counts[3].metric("Summarised groups", sum(1 for g in all_groups if g.summary))
unsaved_preview(index, repository_id, hierarchy, ui.current_parameters(), hierarchies)

# Drill down to a folder or a file: the picture goes as deep as stays readable there.
paths = [d.path for d in documents]
groups_in = place_counts([g.path for g in all_groups])
places = ["", *folders_of(paths), *paths]


def describe_place(place: str) -> str:
    if not place:
        return f"the whole repository ({len(all_groups)} groups)"
    kind = "file" if place in paths else "folder"
    return f"{kind} {place} ({groups_in[place]} groups)"


CHART = "hierarchy:chart"
OPENED_GROUP = "hierarchy:opened_group"
TABLE_GENERATION = "hierarchy:table_generation"


def take_chart_click() -> None:
    """A click on the picture opens what was clicked: a folder or file becomes
    the scope (the selectbox below follows), a group or leaf opens its group
    in the table's detail. Once per click: the chart keeps its selection."""
    clicked = st.session_state.get(CHART)
    points = clicked.selection.points if clicked else []
    node_id = points[0].get("id") if points else None  # a sunburst's or treemap's point is a node
    if not isinstance(node_id, str) or node_id == st.session_state.get("hierarchy:clicked"):
        return
    st.session_state["hierarchy:clicked"] = node_id

    def open_place(place: str) -> None:
        if place in places:
            st.session_state["hierarchy:scope"] = place

    group_by_id = {g.id: g for g in all_groups}
    if node_id.startswith("leaf:"):
        node_id = next((g.id for g in all_groups if node_id in g.children), node_id)
    if node_id.startswith("folder:"):
        open_place(node_id.removeprefix("folder:"))
    elif node_id in group_by_id:
        open_place(group_by_id[node_id].path)
        st.session_state[OPENED_GROUP] = node_id
        # A new table (its row selection cleared), so the clicked group is what opens.
        st.session_state[TABLE_GENERATION] = st.session_state.get(TABLE_GENERATION, 0) + 1
    else:
        path = next((d.path for d in documents if d.id == node_id), None)
        if path is not None:
            open_place(path)


take_chart_click()
look, picture_column = st.columns([3, 1], vertical_alignment="bottom")
scope = look.selectbox(
    "Open",
    places,
    format_func=describe_place,
    key="hierarchy:scope",
    help="A folder or file: the picture and the table below show only what is inside it.",
)
picture = picture_column.radio(
    "Picture",
    ["sunburst", "treemap"],
    horizontal=True,
    key="hierarchy:picture",
    help="Click a folder or file to open it, a group to open it below; the centre (or top bar) zooms out.",
)
leaf_labels = {
    leaf_id: (
        int(leaf["token_count"]),
        f"{leaf['scope']} {ui.line_range(leaf['start_line'], leaf['end_line'])}",
    )
    for leaf_id, leaf in leaves_by_id.items()
}
tree = hierarchy_tree(repository["name"], documents, all_groups, leaf_labels, scope=scope)
st.plotly_chart(
    hierarchy_figure(tree, kind=picture),
    key=CHART,
    on_select="rerun",
    selection_mode="points",
    config=chart_config(f"hierarchy-{repository['name']}-{scope or 'all'}"),
)
deeper = {"file": "groups and leaves", "group": "leaves"}.get(tree.deepest)
st.caption(
    f"{tree.files} files, {tree.groups} groups, {tree.leaves} leaves in view; "
    "three levels are drawn at a time."
    + (f" Too many to draw the {deeper} too: open a folder or file above to see them." if deeper else "")
)

# -- the structural levels, by either boundary rule --------------------------------------------------------
drawn = {d.path for d in documents}
structure_section(index, repository, hierarchy, scope, [path for path in data_files if path not in drawn])

# -- the groups ----------------------------------------------------------------------------------------
st.subheader("Mid-level groups")
groups = [g for g in all_groups if not scope or g.path == scope or g.path.startswith(scope + "/")]
limit = int(hierarchy["parameters"].get("maximum_merged_chunk_token_length", 0))
group_rows = pd.DataFrame(
    [
        {
            "path": path,
            "lines": ui.line_range(g.start_line, g.end_line),
            "tokens": g.token_count,
            "leaves": len(g.children),
            "summary": ui.shorten(g.summary or "", 90),
            "scope": keep_end(ui.scope_in_file(g.scope, g.path), 48),  # less what the path says
            "group": g.id,
        }
        # Each file named once, at its first group.
        for g, path in zip(groups, ui.once_per_run([keep_end(g.path, 48) for g in groups]), strict=True)
    ]
)
table, detail = st.columns([5, 4], gap="large")
with table:
    st.caption(f"{len(groups)} groups in {describe_place(scope).split(' (')[0]} · select a row to open it")
    event = st.dataframe(
        group_rows,
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key=f"hierarchy:groups:{st.session_state.get(TABLE_GENERATION, 0)}",
        height=460,
        column_config={
            "lines": st.column_config.TextColumn(width="small"),
            "tokens": st.column_config.NumberColumn(width="small"),
            "leaves": st.column_config.NumberColumn(width="small"),
            "summary": st.column_config.TextColumn(width="large"),
        },
    )
    picked = [row for row in event.selection.rows if row < len(groups)]
    clicked_row = next((n for n, g in enumerate(groups) if g.id == st.session_state.get(OPENED_GROUP)), None)
    # Until a row is picked, open the group clicked in the picture, else the first summarised
    # group: summaries are what this part explains.
    first_summarised = next((n for n, g in enumerate(groups) if g.summary), 0)
    group = groups[picked[0] if picked else clicked_row if clicked_row is not None else first_summarised]
    if not picked:
        how = "clicked in the picture" if clicked_row is not None else "the first summarised group"
        st.caption(f"Showing {group.id}, {how}. Select a row to open another.")
with detail:
    st.markdown(
        f"**{ui.md(group.id)} · {ui.md(group.path)} {ui.line_range(group.start_line, group.end_line)}**"
    )
    st.text(
        f"{group.token_count} tokens in {len(group.children)} leaves · scope {group.scope or '(file level)'}"
    )
    if group.summary:
        made_by = f"{group.summariser or 'unknown'} ({group.summary_model or 'no model'})"
        st.caption(
            f"Summary, made by {ui.md(made_by)}; it stands in for the text because the group is "
            f"longer than maximum_merged_chunk_token_length = {limit}."
        )
        st.code(group.summary, language=None, wrap_lines=True)
    else:
        st.caption(
            f"No summary: at {group.token_count} tokens the group is within "
            f"maximum_merged_chunk_token_length = {limit}, so its full text is used."
        )
    children = [leaves_by_id[c] for c in group.children if c in leaves_by_id]
    st.dataframe(
        pd.DataFrame(
            {
                "scope": [keep_end(c["scope"], 60) for c in children],
                "lines": [ui.line_range(c["start_line"], c["end_line"]) for c in children],
                "tokens": [c["token_count"] for c in children],
                "leaf": [c["id"] for c in children],
            }
        ),
        hide_index=True,
    )
    with st.expander("The group's code"):
        full = index.node(group.id)
        st.code(full.text, language=ui.code_language(full.language))

# -- summaries with Ollama -----------------------------------------------------------------------------
st.subheader("Summaries")
st.text(f"Summariser in use: {ui.summariser_text(index)}")
ollama = st.columns([2, 1, 1], vertical_alignment="bottom")
host = ollama[0].text_input(
    "Ollama host", value=index.settings.ollama_host or DEFAULT_OLLAMA_HOST, key="hierarchy:ollama_host"
)
model = ollama[1].text_input("Ollama model", value=index.settings.ollama_model, key="hierarchy:ollama_model")
if ollama[2].button("Summarise with Ollama", key="hierarchy:ollama"):
    with st.spinner("Asking the Ollama server…"):
        answers, message = check_ollama(host)
    if not answers:
        st.warning(
            ui.md(
                f"No Ollama server answers: {message}. Nothing was changed: the summaries stay as they are, "
                f"made by {index.summariser_description()}."
            )
        )
    else:
        # "auto" picks Ollama only when the server also has the model; otherwise it says why not.
        settings = Settings(summariser="auto", ollama_host=host, ollama_model=model)
        summarizer = make_summarizer(settings, index.counter)
        if isinstance(summarizer, DigestSummarizer):
            st.warning(ui.md(f"{message}. But: {describe_summarizer(summarizer)}"))
        else:
            st.info(ui.md(message))
            index.use_summarizer(summarizer)
            params = ui.parameters_from(hierarchy["parameters"])
            ui.run_build(index, repository_id, params, chosen_name)
            st.success(ui.md(f"Re-summarised {chosen_name} with {index.summariser_description()}."))
if not isinstance(index.summarizer, DigestSummarizer) and st.button(
    "Use the embedded digest again", key="hierarchy:digest"
):
    index.use_summarizer(DigestSummarizer(index.counter))
    st.rerun()

# -- saved parameter sets ------------------------------------------------------------------------------
st.subheader("Parameter sets")
st.caption(
    "Save the sidebar's parameters as a named hierarchy (it is built and summarised now, and queries can "
    "use it), then compare two sets: how many groups each makes, how big they are, which leaves moved."
)
# Asks before replacing a set of that name; "default" only ever holds the default parameters.
save_form(index, repository_id, ui.current_parameters(), "hierarchy", label="Save current parameters")
if st.button(
    "Load this set into the sidebar",
    key="hierarchy:load",
    help=ui.md(f"Copy the parameters of {chosen_name} into the sidebar."),
):
    ui.set_parameters(hierarchy["parameters"])
    st.rerun()

st.dataframe(
    pd.DataFrame(
        [
            {
                "name": h["name"],
                "groups": h["group_count"],
                "files": h["document_count"],
                "topic boundaries": h["topic_boundaries"],
                "differs from defaults in": parameters_label(h["parameters"]),
                "built": datetime.fromtimestamp(h["created_at"]).strftime("%Y-%m-%d %H:%M:%S"),
            }
            for h in hierarchies
        ]
    ),
    hide_index=True,
)

if len(hierarchies) < 2:
    st.info("Save a second parameter set to compare two side by side.")
    st.stop()

pick = st.columns(2)
first_name = pick[0].selectbox("Compare", names, index=0, key="hierarchy:first")
second_name = pick[1].selectbox("with", names, index=1, key="hierarchy:second")
if first_name == second_name:
    st.info("Choose two different parameter sets.")
    st.stop()
comparison = index.compare(int(by_name[first_name]["id"]), int(by_name[second_name]["id"]))
first, second = comparison["first"], comparison["second"]
moved = comparison["moved_leaves"]

side = st.columns(3)
side[0].metric(f"Groups in {ui.md(first_name)}", first["group_count"])
side[1].metric(
    f"Groups in {ui.md(second_name)}",
    second["group_count"],
    delta=ui.signed(second["group_count"] - first["group_count"]),
    delta_arrow="off",
    delta_color="off",
)
side[2].metric(
    "Leaves that moved",
    f"{len(moved)} of {comparison['leaf_count']}",
    help="A leaf moved when its group is not the same run of leaves in both sets.",
)

charts, params_table = st.columns([3, 2], gap="large")
with charts:
    st.plotly_chart(
        group_size_figure(first_name, first["group_sizes"], second_name, second["group_sizes"]),
        key="hierarchy:sizes",
        config=chart_config(f"group-sizes-{first_name}-{second_name}"),
    )
with params_table:
    st.markdown("**Parameters**")
    # The parameters that differ first: they explain everything else in this section.
    rows = [
        {
            "parameter": k,
            "first": str(v),
            "second": str(second["parameters"].get(k, "")),
            "differs": v != second["parameters"].get(k),
        }
        for k, v in first["parameters"].items()
    ]
    rows.sort(key=lambda row: not row["differs"])
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        column_config={
            "first": st.column_config.TextColumn(first_name),
            "second": st.column_config.TextColumn(second_name),
        },
    )
st.markdown("**Leaves that moved**")
if moved:
    st.dataframe(pd.DataFrame(moved), hide_index=True)
else:
    st.caption("None: both sets group the leaves identically.")

from hsc.app.ui.tuning import saved_sets_diff  # noqa: E402

saved_sets_diff(index, repository_id)
