"""Query: two-stage retrieval beside the flat search it replaces."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from hsc import QueryResponse
from hsc.api import check_query
from hsc.app import ui
from hsc.app.ui import query_view
from hsc.app.ui.pack import context_pack_section

index = ui.page_setup("Query")
st.title("Query")
st.caption(query_view.mode_explanation(ui.current_parameters()))

repository = ui.require_repository(index)
repository_id = int(repository["id"])
hierarchies = ui.saved_hierarchies(index, repository_id)
by_name = {h["name"]: h for h in hierarchies}
names = list(by_name)
RESPONSE = "query:response"
ASKED_WITH = "query:parameters"
ASKED_ROLES = "query:asked_roles"

ask = st.columns([4, 2, 2, 1], vertical_alignment="bottom")
text = ask[0].text_input("Query", key="query:text", placeholder="e.g. take a percentage off a price")
chosen_name = ui.set_picker(ask[1], names, key="query:set")
# What each file is for (hsc.chunk.roles): like the agents' tools, the page asks the project's own
# code first when it has some; docs, tests and changelogs are a choice away.
present = sorted(set(index.store.file_roles(repository_id).values()))
roles = tuple(
    ask[2].multiselect(
        "Roles",
        present,
        default=ui.opening_roles(present),
        key="query:roles",
        placeholder="every file",
        help="Search only files of these roles: code, test, docs, changelog, example, config, generated.",
    )
)
search = ask[3].button("Search", type="primary", key="query:search", width="stretch")
params = ui.current_parameters()
st.caption(query_view.parameters_line(params))

hierarchy_id = int(by_name[chosen_name]["id"])
previous: QueryResponse | None = st.session_state.get(RESPONSE)
# Pressing Enter in the box reruns the page too: search then as well, but only
# when something changed, since every query is recorded in the history.
asked_again = previous is None or (
    previous.query,
    previous.hierarchy_id,
    st.session_state.get(ASKED_ROLES),
) != (
    text,
    hierarchy_id,
    roles,
)
# A click on Search with nothing (or only spaces) typed, or spaces sent with Enter, gets the
# library's one-line message; an empty box on arrival says nothing.
if search or (text and asked_again):
    try:
        st.session_state[RESPONSE] = index.query(
            check_query(text),
            repository_id=repository_id,
            hierarchy_id=hierarchy_id,
            params=params,
            roles=roles or None,
        )
        st.session_state[ASKED_ROLES] = roles
        st.session_state[ASKED_WITH] = params  # explained with these, whatever the sidebar says later
    except ValueError as error:
        st.warning(ui.md(str(error)))
response: QueryResponse | None = st.session_state.get(RESPONSE)
if response is not None and response.hierarchy_id not in {int(h["id"]) for h in hierarchies}:
    response = None  # asked of another repository, or of a parameter set rebuilt since

if response is not None and response.query.strip():
    flat_rank = {r.leaf_id: r.rank for r in response.flat}
    staged_rank = {r.leaf_id: r.rank for r in response.results}
    group_rank = {g.node_id: g.rank for g in response.groups}
    overlap = len(set(flat_rank) & set(staged_rank))

    numbers = st.columns(4)
    numbers[0].metric(f"Leaves scored, {response.mode}", response.leaves_compared)
    numbers[1].metric("Leaves scored, flat", response.flat_leaves_compared)
    numbers[2].metric("Same leaves in both top lists", f"{overlap} of {len(response.flat)}")
    numbers[3].metric(
        "Retrieval",
        f"{response.elapsed_ms:.1f} ms",
        help=f"Without embedding the query ({response.embedding_ms:.0f} ms).",
    )
    asked_with = st.session_state.get(ASKED_WITH, params)
    st.markdown(query_view.what_this_query_did(response, asked_with))
    if agreement := query_view.stages_agree(response, asked_with):
        st.markdown(agreement)

    # The scope tells a result apart; what all of them share only takes room.
    shared = ui.common_scope([r.scope for r in (*response.results, *response.flat)])
    shown_scope = {
        r.leaf_id: query_view.short_scope(r.scope, shared) for r in (*response.results, *response.flat)
    }
    folder = query_view.shared_folder([r.path for r in (*response.results, *response.flat, *response.groups)])
    columns = query_view.column_config()

    st.markdown(query_view.answer_heading(response))
    st.dataframe(
        query_view.staged_table(response, shown_scope, folder, asked_with.mid_level_top_k),
        hide_index=True,
        column_config=columns,
    )
    st.markdown("**Flat search · every leaf scored**")
    st.dataframe(query_view.flat_table(response, shown_scope, folder), hide_index=True, column_config=columns)
    st.caption(query_view.caption_tables(shared, folder))
    if response.regions:
        st.markdown(query_view.regions_heading(asked_with))
        st.caption(query_view.regions_note(response, asked_with))
        region_columns = st.columns(2, gap="large")
        region_columns[0].dataframe(query_view.regions_table(response.regions, folder), hide_index=True)
        region_columns[1].dataframe(query_view.regions_table(response.files, folder), hide_index=True)
    with st.expander(f"Stage 1 · the {len(response.opened_group_ids):,} groups opened", expanded=False):
        if response.groups_shown():
            st.caption(response.groups_shown())
        st.dataframe(
            query_view.groups_table(response, folder, shared),
            hide_index=True,
            column_config=columns,
            height=min(38 + 35 * len(response.groups), 400),
        )

    context_pack_section(index, response, params, st.session_state.get(ASKED_ROLES) or None)

    st.subheader("Open a result")
    result = query_view.pick_result(response)
    if result is not None:
        parent = result.parent or (index.node(result.parent_id) if result.parent_id else None)
        code, context = st.columns([3, 2], gap="large")
        with code:
            language = index.node(result.leaf_id).language
            lines = ui.line_range(result.start_line, result.end_line)
            st.text(f"{result.path} · {lines} · score {result.score:.3f}")
            st.code(result.text, language=ui.code_language(language), wrap_lines=True)
        with context:
            st.markdown("**Its parent group**")
            if parent is None:
                st.caption("This leaf has no parent group in the chosen parameter set.")
            else:
                st.text(
                    f"{parent.id} · {parent.path} {ui.line_range(parent.start_line, parent.end_line)} · "
                    f"{parent.token_count} tokens in {len(parent.children)} leaves"
                )
                st.caption(query_view.parent_note(result, group_rank, result.leaf_id in staged_rank))
                if parent.summary:
                    st.caption(ui.md(f"Summary by {parent.summariser} ({parent.summary_model}):"))
                    st.code(parent.summary, language=None, wrap_lines=True)
                else:
                    st.caption("No summary (the group is short enough to be used as it is). Its leaves:")
                    siblings = [index.node(child, hierarchy_id) for child in parent.children]
                    st.dataframe(
                        pd.DataFrame(
                            {
                                "scope": [
                                    query_view.short_scope(
                                        s.scope, ui.common_scope([x.scope for x in siblings])
                                    )
                                    for s in siblings
                                ],
                                "lines": [ui.line_range(s.start_line, s.end_line) for s in siblings],
                                "this one": [s.id == result.leaf_id for s in siblings],
                            }
                        ),
                        hide_index=True,
                        column_config={
                            "lines": st.column_config.Column(width=96),
                            "this one": st.column_config.Column(width=72),
                        },
                    )
else:
    st.info("Type a query and press Enter or Search: describe in words what the code you want does.")

st.subheader("Query history")
history = index.query_history(repository_id)
if history:
    names_by_id = {int(h["id"]): h["name"] for h in hierarchies}
    st.dataframe(
        pd.DataFrame(
            {
                "when": [datetime.fromtimestamp(q["created_at"]).strftime("%Y-%m-%d %H:%M") for q in history],
                "query": [q["text"] for q in history],
                "mode": [q["mode"] for q in history],
                "parameter set": [
                    names_by_id.get(int(q["hierarchy_id"] or 0), "(rebuilt or deleted)") for q in history
                ],
                "leaves scored": [q["leaves_compared"] for q in history],
                "ms": [round(q["elapsed_ms"], 2) for q in history],
            }
        ),
        hide_index=True,
    )
else:
    st.caption("No queries yet.")

from hsc.app.ui.tuning import dual_query  # noqa: E402

dual_query(index, repository_id)
