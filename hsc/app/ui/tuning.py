"""Tuning views appended to the Similarity, Hierarchy and Query pages: the
current grouping against a saved set, two saved sets diffed, one query
answered under two sets. Data from :mod:`hsc.explore.tuning`; drawing only here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from hsc import Index, Parameters
from hsc.app.ui.context import chunk_limits
from hsc.app.ui.text import line_range, md, signed
from hsc.explore.explain import hierarchy_plan
from hsc.explore.figures import MAX_STRIP_LEAVES, chart_config, group_strips
from hsc.explore.tuning import (
    HierarchyDiff,
    SetExists,
    block_rows,
    compare_rankings,
    diff_plans,
    leaves_at_maximum,
    oversized_groups,
    save_set,
)
from hsc.hierarchy.groups import HierarchyPlan
from hsc.params import with_values

# The diff table lists at most this many changed blocks (largest first).
MAX_DIFF_ROWS = 200
PENDING_REPLACE = "tuning:pending_replace"
SAVED_MESSAGE = "tuning:saved_message"


def _set_names(index: Index, repository_id: int) -> dict[str, int]:
    return {h["name"]: int(h["id"]) for h in index.hierarchies(repository_id)}


def _pick_set(label: str, names: list[str], key: str, preferred: str = "default") -> str:
    return st.selectbox(label, names, index=names.index(preferred) if preferred in names else 0, key=key)


def diff_summary(diff: HierarchyDiff, before: str, after: str) -> None:
    """Counts of what changed from set ``before`` to ``after``."""
    numbers = st.columns(5)
    numbers[0].metric(
        f"Groups: {md(before)} → {md(after)}",
        f"{diff.first_group_count} → {diff.second_group_count}",
    )
    numbers[1].metric(
        "Split", diff.count("split"), help=md(f"Groups of {before} cut into several in {after}.")
    )
    numbers[2].metric(
        "Merged", diff.count("merged"), help=md(f"Groups of {after} made of several of {before}.")
    )
    numbers[3].metric("Moved", diff.count("moved"), help="Runs of groups whose inner boundaries moved.")
    numbers[4].metric(
        "Unchanged",
        diff.count("unchanged"),
        help=f"Groups identical in both; {diff.changed_leaves} leaves lie in groups that changed.",
    )


def diff_table(diff: HierarchyDiff, plan: HierarchyPlan, key: str) -> None:
    changed = diff.changed_blocks()
    if not len(changed):
        st.caption("Both sets group every leaf the same way.")
        return
    rows = block_rows(diff, plan.table, changed[:MAX_DIFF_ROWS])
    frame = pd.DataFrame(rows).drop(columns=["first_row"])
    frame.insert(2, "lines", [line_range(r["start_line"], r["end_line"]) for r in rows])
    frame = frame.drop(columns=["start_line", "end_line"])
    st.dataframe(frame, hide_index=True, key=key, height=min(38 + 35 * len(frame), 320))
    if len(changed) > MAX_DIFF_ROWS:
        st.caption(f"The {MAX_DIFF_ROWS} largest of {len(changed)} changes.")


def _changed_leaves_per_file(diff: HierarchyDiff, plan: HierarchyPlan) -> np.ndarray:
    table = plan.table
    changed = np.repeat(diff.kinds != "unchanged", diff.block_ends - diff.block_starts)
    return np.bincount(table.file_index, weights=changed, minlength=len(table.paths)).astype(int)


def strips_for_a_file(diff: HierarchyDiff, plans: list[tuple[str, HierarchyPlan]], key: str) -> None:
    """Both groupings of one file as strips, the file with most changes first."""
    table = plans[0][1].table
    per_file = _changed_leaves_per_file(diff, plans[0][1])
    order = np.argsort(-per_file, kind="stable")
    path_number = st.selectbox(
        "File",
        order.tolist(),
        # A new diff starts again from the file that changed most (a kept choice would stick).
        key=f"{key}:{diff.first_group_count}:{diff.second_group_count}:{diff.changed_leaves}",
        format_func=lambda n: f"{table.paths[n]} ({per_file[n]} leaves in changed groups)",
        help="Files with the most leaves in changed groups come first.",
    )
    rows = np.flatnonzero(table.file_index == path_number)
    start, end = int(rows[0]), min(int(rows[-1]) + 1, int(rows[0]) + MAX_STRIP_LEAVES)
    name = f"groups-{table.paths[path_number]}"
    st.plotly_chart(group_strips(plans, start, end), key=f"{key}:chart", config=chart_config(name))


def flags(plan: HierarchyPlan, maximum_chunk_token_length: int) -> None:
    over = oversized_groups(plan)
    at_maximum = leaves_at_maximum(plan.table, maximum_chunk_token_length)
    limit = plan.parameters.maximum_merged_chunk_token_length
    st.caption(
        f"{len(over)} of {plan.group_count} groups are over maximum_merged_chunk_token_length = {limit} "
        f"(outlined in red: they get a summary). {len(at_maximum)} of {len(plan.table)} leaves are at "
        f"maximum_chunk_token_length = {maximum_chunk_token_length} (within 10%): pieces of a split node, "
        "most likely."
    )
    if len(at_maximum):
        table = plan.table
        with st.expander(f"Leaves at the maximum size ({len(at_maximum)})"):
            shown = at_maximum[:MAX_DIFF_ROWS]
            st.dataframe(
                pd.DataFrame(
                    {
                        "path": [table.paths[table.file_index[r]] for r in shown],
                        "scope": [table.scopes[r] for r in shown],
                        "lines": [
                            line_range(int(table.start_lines[r]), int(table.end_lines[r])) for r in shown
                        ],
                        "tokens": table.token_counts[shown],
                    }
                ),
                hide_index=True,
            )


def save_form(index: Index, repository_id: int, params: Parameters, key: str, label: str = "Save") -> None:
    """Save ``params`` as a named set; replacing an existing set asks first."""
    saved = st.session_state.pop(SAVED_MESSAGE, None)
    if saved:
        st.success(saved)
    cells = st.columns([2, 1], vertical_alignment="bottom")
    name = cells[0].text_input("Save the current parameters as", value="tuned", key=f"{key}:name").strip()
    if cells[1].button(label, key=f"{key}:save", type="primary"):
        _save(index, repository_id, params, name, replace=False)
    if st.session_state.get(PENDING_REPLACE) == (repository_id, name):
        st.warning(
            md(f"A parameter set named {name} exists already. Replace it with the current parameters?")
        )
        answer = st.columns([1, 1, 4])
        if answer[0].button("Replace it", key=f"{key}:replace"):
            _save(index, repository_id, params, name, replace=True)
        if answer[1].button("Keep it", key=f"{key}:keep"):
            st.session_state.pop(PENDING_REPLACE, None)
            st.rerun()


def _save(index: Index, repository_id: int, params: Parameters, name: str, replace: bool) -> None:
    try:
        with st.spinner(md(f"Building and summarising {name}…")):
            info = save_set(index, repository_id, params, name, replace=replace)
    except SetExists:
        st.session_state[PENDING_REPLACE] = (repository_id, name)
        return
    except ValueError as error:
        st.warning(md(str(error)))
        return
    st.session_state.pop(PENDING_REPLACE, None)
    # Shown after the rerun, which redraws the page without the question.
    st.session_state[SAVED_MESSAGE] = md(
        f"Saved {name}: {info['group_count']} groups in {info['document_count']} files."
    )
    st.rerun()


def current_against_saved(index: Index, repository: dict[str, Any], params: Parameters) -> None:
    """For the Similarity page: the sliders' grouping next to a saved set."""
    repository_id = int(repository["id"])
    _, maximum = chunk_limits(repository) or (0, params.maximum_chunk_token_length)
    st.subheader("Current grouping against a saved set")
    # Off until asked for: re-planning the saved set too costs each slider step time on a large repository.
    if not st.toggle("Compare with a saved set, and save", key="tuning:similarity:on"):
        return
    names = _set_names(index, repository_id)
    if not names:
        return
    saved_name = _pick_set("Saved set", list(names), "tuning:similarity:set")
    saved = hierarchy_plan(index, names[saved_name])
    current = index.preview(repository_id, params)
    diff = diff_plans(saved, current)
    diff_summary(diff, saved_name, "current")
    strips_for_a_file(diff, [(saved_name, saved), ("current", current)], "tuning:similarity:file")
    flags(current, maximum)
    diff_table(diff, current, "tuning:similarity:diff")
    save_form(index, repository_id, params, "tuning:similarity")


def saved_sets_diff(index: Index, repository_id: int) -> None:
    """For the Hierarchy page: two saved sets, group by group."""
    names = _set_names(index, repository_id)
    if len(names) < 2:
        return
    st.subheader("Group by group: what changed between two sets")
    if not st.toggle("Show which groups were split, merged or moved", key="tuning:hierarchy:on"):
        return
    pick = st.columns(2)
    with pick[0]:
        before = _pick_set("From", list(names), "tuning:hierarchy:before")
    others = [n for n in names if n != before]
    after = pick[1].selectbox("To", others, key="tuning:hierarchy:after") if others else before
    first, second = hierarchy_plan(index, names[before]), hierarchy_plan(index, names[after])
    diff = diff_plans(first, second)
    diff_summary(diff, before, after)
    strips_for_a_file(diff, [(before, first), (after, second)], "tuning:hierarchy:file")
    diff_table(diff, second, "tuning:hierarchy:diff")


def dual_query(index: Index, repository_id: int) -> None:
    """For the Query page: one query, two saved sets, rankings side by side."""
    names = _set_names(index, repository_id)
    if len(names) < 2:
        return
    st.subheader("One query, two parameter sets")
    ask = st.columns([3, 1, 1])
    text = ask[0].text_input("Query for both sets", key="tuning:query:text")
    first = ask[1].selectbox("First set", list(names), index=0, key="tuning:query:first")
    second = ask[2].selectbox("Second set", list(names), index=1, key="tuning:query:second")
    if not text.strip():
        st.caption("Each set answers with its own groups and its own mid_level_top_k and leaf_level_top_k.")
        return
    ranking = compare_rankings(index, text, names[first], names[second])
    numbers = st.columns(3)
    numbers[0].metric(f"Leaves scored, {md(first)}", ranking.first.leaves_compared)
    numbers[1].metric(f"Leaves scored, {md(second)}", ranking.second.leaves_compared)
    numbers[2].metric("Same leaves in both", f"{ranking.overlap} of {len(ranking.first.results)}")
    frame = pd.DataFrame(ranking.rows())
    frame = frame.rename(
        columns={
            "first": first,
            "second ranks it": f"{second} ranks it",
            "second": second,
            "first ranks it": f"{first} ranks it",
        }
    )
    for column in frame.columns:
        if column.endswith("ranks it"):
            frame[column] = pd.array(frame[column], dtype="Int64")
    st.dataframe(frame, hide_index=True, key="tuning:query:table")
    modes = " and ".join(dict.fromkeys(f"`{r.mode}`" for r in (ranking.first, ranking.second)))
    st.caption(f"Answered in {modes} mode. An empty “ranks it” cell: the other set did not return that leaf.")


def unsaved_preview(
    index: Index, repository: int, shown: dict[str, Any], params: Parameters, sets: list[dict[str, Any]]
) -> None:
    """For the Hierarchy page: when the sidebar's (or the Similarity sliders') hierarchy parameters
    differ from the shown set's, the grouping they make as a preview beside it, and whether a saved
    set (of ``sets``) holds it already."""
    current = params.hierarchy_params()

    def differs(hierarchy: dict[str, Any]) -> dict[str, Any]:
        saved = with_values(Parameters(), hierarchy["parameters"]).hierarchy_params()
        return {name: value for name, value in current.items() if saved.get(name) != value}

    changed = differs(shown)
    if not changed:
        return
    plan = index.preview(repository, params)
    groups, set_groups = plan.group_count, int(shown["group_count"])
    what = ", ".join(f"{name} = {value}" for name, value in changed.items())
    saved_as = [h["name"] for h in sets if not differs(h)]
    with st.container(border=True):
        title = "Saved as " + ", ".join(saved_as) if saved_as else "Unsaved preview"
        st.markdown(f"**{md(title)}: the current parameters ({md(what)})**")
        numbers = st.columns(4)
        numbers[0].metric(
            "Groups (mid), preview",
            groups,
            delta=signed(groups - set_groups),
            delta_arrow="off",
            delta_color="off",
            delta_description=f"vs {shown['name']}",
        )
        numbers[1].metric("Topic boundaries, preview", plan.segmentation.topic_boundary_count)
        numbers[2].metric("Leaves per group, preview", f"{len(plan.table) / max(groups, 1):.1f}")
        numbers[3].metric("Groups to summarise, preview", len(oversized_groups(plan)))
        then = (
            f"choose {saved_as[0]} above to see it here"
            if saved_as
            else "save the current parameters (Parameter sets, below) to build, summarise and show it here"
        )
        st.caption(
            md(
                f"The picture and the tables below show the set {shown['name']} "
                f"({set_groups} groups): {then}."
            )
        )
