"""Query: two-stage retrieval beside the flat search it replaces."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

import ui
from hsc import QueryResponse, QueryResult
from hsc.api import check_query
from ui.pack import context_pack_section

index = ui.page_setup("Query")
st.title("Query")
st.caption(
    "**Stage 5: two-stage retrieval.** Stage 1 finds the mid_level_top_k groups closest to the query "
    "(an HNSW index over group vectors); stage 2 scores only the leaves inside them and keeps "
    "leaf_level_top_k. The flat search scores every leaf: it is the exact answer the two-stage search "
    "tries to match while reading far fewer leaves."
)

repository = ui.require_repository(index)
repository_id = int(repository["id"])
hierarchies = ui.saved_hierarchies(index, repository_id)
by_name = {h["name"]: h for h in hierarchies}
names = list(by_name)
RESPONSE = "query:response"
ONLY_IN_ONE_LIST = "background-color: rgba(255, 127, 14, 0.18)"
# Numbers get just their width, so the scope (what a result is) and the path keep the rest.
NUMBER_WIDTHS = {"rank": 44, "score": 56, "flat rank": 68, "group": 52, "two-stage rank": 100, "lines": 84}
NARROW_COLUMNS = {name: st.column_config.Column(width=pixels) for name, pixels in NUMBER_WIDTHS.items()}


def short_scope(scope: str, shared: str) -> str:
    """``scope`` without the dotted prefix ``shared`` (kept whole if that is all it is)."""
    return scope[len(shared) + 1 :] if shared and scope.startswith(shared + ".") else scope


def shared_folder(paths: list[str]) -> str:
    """The folder ("a/b/") every path is inside, or ""."""
    parts = ui.common_prefix([path.split("/")[:-1] for path in paths])
    return "/".join(parts) + "/" if parts else ""


def tint_rows(frame: pd.DataFrame, mask: pd.Series) -> Styler:
    """``frame`` with the rows where ``mask`` holds tinted (rankings that differ)."""
    styled = frame.style.apply(lambda row: [ONLY_IN_ONE_LIST if mask[row.name] else ""] * len(row), axis=1)
    return styled.format(precision=3, na_rep="")


ask = st.columns([4, 2, 1], vertical_alignment="bottom")
text = ask[0].text_input("Query", key="query:text", placeholder="e.g. take a percentage off a price")
chosen_name = ask[1].selectbox(
    "Parameter set", names, index=names.index("default") if "default" in names else 0, key="query:set"
)
search = ask[2].button("Search", type="primary", key="query:search", width="stretch")
params = ui.current_parameters()
st.caption(
    f"retrieval_mode = {params.retrieval_mode}, mid_level_top_k = {params.mid_level_top_k}, "
    f"leaf_level_top_k = {params.leaf_level_top_k} (from the sidebar)."
)

hierarchy_id = int(by_name[chosen_name]["id"])
previous: QueryResponse | None = st.session_state.get(RESPONSE)
# Pressing Enter in the box reruns the page too: search then as well, but only
# when something changed, since every query is recorded in the history.
asked_again = previous is None or (previous.query, previous.hierarchy_id) != (text, hierarchy_id)
# A click on Search with nothing (or only spaces) typed, or spaces sent with Enter, gets the
# library's one-line message; an empty box on arrival says nothing.
if search or (text and asked_again):
    try:
        st.session_state[RESPONSE] = index.query(
            check_query(text), repository_id=repository_id, hierarchy_id=hierarchy_id, params=params
        )
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

    # The scope tells a result apart; what all of them share only takes room.
    shared = ui.common_scope([r.scope for r in (*response.results, *response.flat)])
    shown_scope = {r.leaf_id: short_scope(r.scope, shared) for r in (*response.results, *response.flat)}
    folder = shared_folder([g.path for g in response.groups])

    stage1, stage2, flat = st.columns([3, 5, 5], gap="medium")
    with stage1:
        st.markdown("**Stage 1 · groups**")
        if response.groups_shown():
            st.caption(response.groups_shown())
        st.dataframe(
            pd.DataFrame(
                {
                    "rank": [g.rank for g in response.groups],
                    "score": [round(g.score, 3) for g in response.groups],
                    "where": [
                        f"{g.path[len(folder) :]} {ui.line_range(g.start_line, g.end_line)}"
                        for g in response.groups
                    ],
                }
            ),
            hide_index=True,
            column_config=NARROW_COLUMNS,
        )
    with stage2:
        st.markdown("**Stage 2 · leaves in those groups**")
        staged_table = pd.DataFrame(
            {
                "rank": [r.rank for r in response.results],
                "score": [round(r.score, 3) for r in response.results],
                "flat rank": pd.array([flat_rank.get(r.leaf_id) for r in response.results], dtype="Int64"),
                "group": pd.array(
                    [group_rank.get(r.parent_id or "") for r in response.results], dtype="Int64"
                ),
                "scope": [shown_scope[r.leaf_id] for r in response.results],
            }
        )
        st.dataframe(
            tint_rows(staged_table, staged_table["flat rank"].isna()),
            hide_index=True,
            column_config=NARROW_COLUMNS,
        )
    with flat:
        st.markdown("**Flat search · every leaf**")
        flat_table = pd.DataFrame(
            {
                "rank": [r.rank for r in response.flat],
                "score": [round(r.score, 3) for r in response.flat],
                "two-stage rank": pd.array(
                    [staged_rank.get(r.leaf_id) for r in response.flat], dtype="Int64"
                ),
                "scope": [shown_scope[r.leaf_id] for r in response.flat],
            }
        )
        st.dataframe(
            tint_rows(flat_table, flat_table["two-stage rank"].isna()),
            hide_index=True,
            column_config=NARROW_COLUMNS,
        )
    st.caption(
        "Tinted rows are in one list only (their rank in the other list is empty): the flat search found "
        "the leaf but stage 1 did not pick its group, or the other way round. “group” is the stage-1 rank "
        "of the leaf's group."
        + "".join(
            f" {what} are shown without “{ui.md(prefix)}”, which all of them share."
            for what, prefix in (("Scopes", f"{shared}."), ("Paths", folder))
            if prefix not in (".", "")
        )
    )

    context_pack_section(index, response, params)

    st.subheader("Open a result")
    choices: list[tuple[str, QueryResult]] = [("two-stage", r) for r in response.results]
    choices += [("flat", r) for r in response.flat if r.leaf_id not in staged_rank]

    def describe_choice(number: int) -> str:
        stage, result = choices[number]
        lines = ui.line_range(result.start_line, result.end_line)
        return f"{stage} #{result.rank} · {result.scope} · {result.path} {lines}"

    picked = st.selectbox("Result", range(len(choices)), key="query:open", format_func=describe_choice)
    if picked is not None and picked < len(choices):
        _, result = choices[picked]
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
                picked_by_stage1 = group_rank.get(parent.id)
                st.text(
                    f"{parent.id} · {parent.path} {ui.line_range(parent.start_line, parent.end_line)} · "
                    f"{parent.token_count} tokens in {len(parent.children)} leaves"
                )
                st.caption(
                    f"Stage 1 ranked this group #{picked_by_stage1}."
                    if picked_by_stage1
                    else "Stage 1 did not pick this group: only the flat search reached this leaf."
                )
                if parent.summary:
                    st.caption(ui.md(f"Summary by {parent.summariser} ({parent.summary_model}):"))
                    st.code(parent.summary, language=None, wrap_lines=True)
                else:
                    st.caption("No summary (the group is short enough to be used as it is). Its leaves:")
                    siblings = [index.node(child, hierarchy_id) for child in parent.children]
                    st.dataframe(
                        pd.DataFrame(
                            {
                                "scope": [s.scope for s in siblings],
                                "lines": [ui.line_range(s.start_line, s.end_line) for s in siblings],
                                "this one": [s.id == result.leaf_id for s in siblings],
                            }
                        ),
                        hide_index=True,
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

from ui.tuning import dual_query  # noqa: E402

dual_query(index, repository_id)
