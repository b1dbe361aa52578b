"""The Walkthrough page's sections: one file through the five stages, then
what a model would be given for the query.

Each function draws one stage from :mod:`hsc.explore.explain` data; the page only
chooses the set, the file and the query. :class:`WalkthroughData` computes
that data once per state of the index, not once per visit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from hsc import Index, Parameters
from hsc.app.ui.context import database_path, index_lock
from hsc.app.ui.pack import PACK_TITLE, budget_input, context_pack, show_pack
from hsc.app.ui.text import WHY_NO_SMOOTHING, code_language, line_range, md
from hsc.explore.explain import (
    MAP_SAMPLE,
    FileWalkthrough,
    LeafMap,
    QueryTrace,
    hierarchy_plan,
    hierarchy_stamp,
    leaf_map,
    source_stamp,
    suggest_query,
    trace_query,
    walk_file,
)
from hsc.explore.figures import chart_config, file_similarity_curve, leaf_map_figure, leaf_size_figure
from hsc.explore.report import build_report
from hsc.hierarchy.groups import HierarchyPlan
from hsc.params import with_values
from hsc.search.context import ContextPack
from hsc.search.two_stage import EXACT_STAGE1_SHARE, LEXICAL_MODES, stage_one_is_exact

MAP_TITLE = "Leaf vectors on their two main axes (PCA)"

# -- computed once per state of the index, shared by every session ------------------------------------
# Keyed by the database, the hierarchy and its stamp (the hierarchy's build and its repository's leaves,
# see hierarchy_stamp), so a rebuilt set or a re-indexed file is computed afresh. Read-only for the page.


@st.cache_resource(max_entries=4, show_spinner="Planning the hierarchy…")
def _plan(_index: Index, database: str, hierarchy_id: int, stamp: str) -> HierarchyPlan:
    return hierarchy_plan(_index, hierarchy_id)


@st.cache_resource(max_entries=16, show_spinner=False)
def _walk(
    _index: Index, database: str, hierarchy_id: int, stamp: str, path: str, source: str
) -> FileWalkthrough:
    return walk_file(_index, hierarchy_id, path, _plan(_index, database, hierarchy_id, stamp))


@st.cache_resource(max_entries=32, show_spinner="Running the query through both stages…")
def _trace(_index: Index, database: str, hierarchy_id: int, stamp: str, text: str, mode: str) -> QueryTrace:
    return trace_query(_index, text, hierarchy_id, _plan(_index, database, hierarchy_id, stamp), mode)


@st.cache_resource(max_entries=4, show_spinner="Projecting the leaf vectors…")
def _leaf_map(_index: Index, database: str, hierarchy_id: int, stamp: str) -> LeafMap:
    return leaf_map(_plan(_index, database, hierarchy_id, stamp))


@st.cache_resource(max_entries=8, show_spinner=False)
def _map_figure(
    _index: Index, database: str, hierarchy_id: int, stamp: str, path: str
) -> tuple[LeafMap, go.Figure]:
    plan = _plan(_index, database, hierarchy_id, stamp)
    rows = np.flatnonzero(plan.table.file_index == plan.table.paths.index(path))
    mapped = _leaf_map(_index, database, hierarchy_id, stamp).including(plan, rows)
    table = plan.table
    labels = [f"{table.scopes[r]} · {table.paths[table.file_index[r]]}" for r in mapped.rows]
    return mapped, leaf_map_figure(mapped, labels, rows, MAP_TITLE)


class WalkthroughData:
    """The walkthrough of one saved hierarchy, each part computed once for the
    state the index is in now (read-only: shared with other sessions)."""

    def __init__(self, index: Index, hierarchy_id: int) -> None:
        self._index = index
        self._key = (str(database_path()), hierarchy_id)
        with index_lock():  # a few small reads, not interleaved with another session's write
            self.stamp = hierarchy_stamp(index, hierarchy_id)

    @property
    def plan(self) -> HierarchyPlan:
        return _plan(self._index, *self._key, self.stamp)

    def walk(self, path: str) -> FileWalkthrough:
        with index_lock():
            source = source_stamp(self._index, self._key[1], path)
        return _walk(self._index, *self._key, self.stamp, path, source)

    def trace(self, text: str, mode: str) -> QueryTrace:
        return _trace(self._index, *self._key, self.stamp, text, mode)

    @property
    def parameters(self) -> Parameters:
        """The saved set's parameters (its query stage included: what a query of it runs with)."""
        with index_lock():
            return with_values(Parameters(), self._index.hierarchy(self._key[1])["parameters"])

    def pack(self, text: str, budget: int) -> ContextPack:
        """The context pack of ``text`` at ``budget`` tokens, in the hierarchy's own retrieval mode."""
        return context_pack(self._index, self._key[1], text, None, budget, self.stamp)

    def leaf_map(self, path: str) -> tuple[LeafMap, go.Figure]:
        """The hierarchy's map with ``path``'s leaves on it, and its figure."""
        return _map_figure(self._index, *self._key, self.stamp, path)


def plotly(figure: object, name: str, key: str) -> None:
    """A chart whose camera button saves it as ``name``.png."""
    st.plotly_chart(figure, key=key, config=chart_config(name))


def stage_leaves(walk: FileWalkthrough) -> None:
    st.subheader("1 · The syntax tree, cut into leaves")
    st.caption(
        "tree-sitter parses the file. Walking down from the root, a node whose whole text fits in one leaf "
        "stops the walk: it *became* that leaf (several small neighbours can share one: they were merged, "
        "because each was under minimum_chunk_token_length). A node too long for maximum_chunk_token_length "
        "is *split*: the walk goes on into its children."
    )
    tree, leaves = st.columns([3, 4], gap="large")
    with tree:
        if walk.outline:
            st.dataframe(
                pd.DataFrame(
                    {
                        "node": ["\u2003" * n.depth + n.node_type for n in walk.outline],
                        "lines": [line_range(n.start_line, n.end_line) for n in walk.outline],
                        "became": [f"leaf {n.leaf}" if n.role == "leaf" else "split" for n in walk.outline],
                    }
                ),
                hide_index=True,
                height=420,
                key="walk:tree",
                column_config={
                    "lines": st.column_config.Column(width=84),
                    "became": st.column_config.Column(width=70),
                },
            )
        if walk.outline_note:
            st.caption(md(f"Syntax tree: {walk.outline_note}."))
    with leaves:
        flags = walk.size_flags()
        st.dataframe(
            pd.DataFrame(
                {
                    "leaf": range(len(walk.leaves)),
                    "scope": [leaf["scope"] for leaf in walk.leaves],
                    "node type": [leaf["node_type"] for leaf in walk.leaves],
                    "lines": [line_range(x["start_line"], x["end_line"]) for x in walk.leaves],
                    "tokens": [int(x["token_count"]) for x in walk.leaves],
                    "size": [flag or "within limits" for flag in flags],
                }
            ),
            hide_index=True,
            height=420,
            column_config={
                "leaf": st.column_config.Column(width=44),
                "scope": st.column_config.Column(width=150),
                "node type": st.column_config.Column(width=140),
                "lines": st.column_config.Column(width=84),
                "tokens": st.column_config.Column(width=56),
                "size": st.column_config.Column(width=130),
            },
            key="walk:leaves",
        )
    st.markdown("**Each leaf's size against the limits**")
    plotly(
        leaf_size_figure(
            [int(x["token_count"]) for x in walk.leaves],
            flags,
            walk.minimum,
            walk.maximum,
            walk.leaf_labels(),
        ),
        f"leaf-sizes-{walk.path}",
        "walk:sizes",
    )
    counts = {flag: flags.count(flag) for flag in ("under minimum", "at maximum", "over maximum")}
    st.caption(
        f"{len(walk.leaves)} leaves. Under the minimum: {counts['under minimum']} (a leaf alone, or between "
        f"two large ones, has nothing to merge with). At the maximum (within 10% of it, so most likely a "
        f"piece of a split node): {counts['at maximum']}. Over it: {counts['over maximum']}."
    )


def stage_embeddings(walk: FileWalkthrough, dimension: int) -> None:
    st.subheader("2 · Each leaf becomes a vector")
    st.caption(
        "The embedding model reads each leaf (its scope name, then its code) and returns "
        f"{dimension} numbers, scaled to length 1. Leaves about the same thing point the same way, "
        "so the cosine of two vectors (their dot product) says how alike two leaves are. "
        "The map at the bottom of the page shows them."
    )


def stage_similarity(walk: FileWalkthrough) -> None:
    st.subheader("3 · Where the topic changes")
    params = walk.parameters
    st.caption(
        "Each leaf is compared with the next one (grey: the raw cosine). One odd leaf should not cut a topic "
        f"in two, so the curve is averaged over smoothing_window_size = {params.smoothing_window_size} pairs "
        f"(blue). Where the smoothed curve dips below similarity_drop_threshold = "
        f"{params.similarity_drop_threshold:.2f}, there is a valley; the boundary_rule = "
        f"{params.boundary_rule} puts "
        + (
            "one boundary in each valley, at its lowest raw similarity (×)."
            if params.boundary_rule == "valley"
            else "a boundary at every pair below the threshold (×)."
        )
        + (f" {WHY_NO_SMOOTHING}" if params.smoothing_window_size == 1 else "")
    )
    if len(walk.similarities) == 0:
        st.info("This file has a single leaf: there is no neighbour to compare it with, and it is one group.")
        return
    labels = walk.leaf_labels()
    plotly(
        file_similarity_curve(walk),
        f"similarity-{walk.path}",
        "walk:curve",
    )
    cuts = np.flatnonzero(walk.boundaries)
    if len(cuts) == 0:
        st.caption(
            "No valley dips below the threshold here: the whole file is one group. Raise the threshold "
            "(in a saved set) to cut it."
        )
        return
    st.dataframe(
        pd.DataFrame(
            {
                "boundary after leaf": cuts,
                "between": [f"{labels[i]} → {labels[i + 1]}" for i in cuts],
                "raw": np.round(walk.similarities[cuts], 3),
                "smoothed": np.round(walk.smoothed[cuts], 3),
            }
        ),
        hide_index=True,
        key="walk:boundaries",
        column_config={
            "boundary after leaf": st.column_config.Column(width=130),
            "between": st.column_config.Column(width="large"),
            "raw": st.column_config.Column(width=64),
            "smoothed": st.column_config.Column(width=76),
        },
    )


def stage_groups(walk: FileWalkthrough, summariser: str) -> None:
    """``summariser``: who writes the summaries (and why, when not as asked)."""
    st.subheader("4 · Groups, and their summaries")
    limit = walk.parameters.maximum_merged_chunk_token_length
    st.caption(
        "The leaves between two boundaries form a mid-level group; its vector is the mean of its leaves'. "
        f"A group longer than maximum_merged_chunk_token_length = {limit} tokens gets a summary that stands "
        "in for its text. The file itself is the top-level node above its groups."
    )
    st.caption(md(f"Summariser: {summariser}"))
    for number, group in enumerate(walk.groups):
        title = (
            f"Group {number + 1}: leaves {group.first_leaf}–{group.last_leaf}, "
            f"{line_range(group.start_line, group.end_line)}, {group.token_count} tokens"
            + (" · summarised" if group.needs_summary else "")
        )
        with st.expander(md(title), expanded=number == 0):
            scopes = [walk.leaves[i]["scope"] for i in range(group.first_leaf, group.last_leaf + 1)]
            st.text("Leaves: " + ", ".join(scope or "(file level)" for scope in scopes))
            if group.summary:
                st.caption(f"Over {limit} tokens, so this summary is what stage 1 reads as its text:")
                st.code(group.summary, language=None, wrap_lines=True)
            elif group.needs_summary:
                st.caption(
                    "Over the limit, but the saved hierarchy holds no summary for it: rebuild the set."
                )
            else:
                st.caption(f"Within {limit} tokens: the group's own code is its text; no summary needed.")
    if walk.document_summary:
        with st.expander("The file's own summary (the top-level node)"):
            st.code(walk.document_summary, language=None, wrap_lines=True)


@st.fragment
def query_section(data: WalkthroughData, walk: FileWalkthrough) -> None:
    """Stage 5, run when asked (embedding a query and ranking every group
    costs more than the four stages above together), then kept for this file."""
    st.subheader("5 · One query, two stages")
    asked = f"walk:asked:{walk.path}"  # not a widget's key: kept when the page is left
    with st.form(f"walk:query-form:{walk.path}", border=False):
        text = st.text_input(
            "Query",
            value=st.session_state.get(asked) or suggest_query(walk),
            key=f"walk:query:{walk.path}",
            help="Describe in words what code you want. Suggested: its longest definition's name.",
        )
        if st.form_submit_button("Follow it through both stages", icon=":material/search:"):
            st.session_state[asked] = text.strip()
    shipped = Parameters().retrieval_mode
    modes = list(dict.fromkeys([shipped, "two-stage"]))
    mode = st.segmented_control(
        "Trace in mode",
        modes,
        default=shipped,
        required=True,
        key=f"walk:mode:{walk.path}",
        format_func=lambda m: f"{m} (shipped)" if m == shipped else f"{m} (the hierarchy alone)",
        help="The shipped mode is what the Query page, the command line and step 6 use; two-stage leaves "
        "out BM25, so only the groups stage 1 opens decide what is reached.",
    )
    if st.session_state.get(asked):
        stage_query(data.trace(st.session_state[asked], str(mode)), data.parameters)
    else:
        st.caption(
            "Run a query to follow it through stage 1 and stage 2, and compare it with the flat search."
        )
    stage_pack(data, walk, st.session_state.get(asked) or "")


def stage_pack(data: WalkthroughData, walk: FileWalkthrough, text: str) -> None:
    """Step 6: the query's hits become what a model reads, within a budget."""
    st.subheader(f"6 · {PACK_TITLE}")
    st.caption(
        "A model does not read a ranking: it reads at most so many tokens. The context pack fills that "
        "budget from the hits above: a hit that is one piece of a split definition brings the rest of it, "
        "each hit brings the definitions it uses (resolved through its imports, from the facts read off the "
        "syntax tree in stage 1), and a definition too long to fit comes as its signature and first doc "
        "sentence (an outline). No line is given twice, and the tokens are counted exactly."
    )
    if not text:
        st.caption("Run the query above to see the pack it gives.")
        return
    pack = data.pack(text, budget_input(f"walk:budget:{walk.path}"))
    here = [span for span in pack.spans if span.path == walk.path]
    st.caption(
        f"{len(pack.spans)} spans from {len({span.path for span in pack.spans})} files; "
        f"{len(here)} of them from this file."
    )
    show_pack(pack, "walk:pack")


def stage_query(trace: QueryTrace, params: Parameters) -> None:
    response = trace.response
    sizes = trace.group_sizes
    budget = math.ceil(params.stage1_leaf_share * trace.leaf_count)
    how = (
        f"scores all {trace.group_count} groups exactly (a widened stage 1 past "
        f"{EXACT_STAGE1_SHARE:.0%} of the groups skips the HNSW index)"
        if stage_one_is_exact(sizes, params.mid_level_top_k, budget)
        else f"finds the nearest of the {trace.group_count} groups in an HNSW index over their vectors"
    )
    bm25 = (
        f" BM25 adds the leaves it finds outside them ({response.lexical_candidates} candidates)."
        if response.mode in LEXICAL_MODES
        else ""
    )
    st.caption(
        f"Traced in `{response.mode}` mode. Stage 1 {how} and opens {len(trace.opened)}; stage 2 scores "
        f"{response.leaves_compared} leaves, where the flat search scores all {trace.leaf_count}.{bm25}"
    )
    if not response.results:
        st.info("Nothing was found: the index has no groups.")
        return
    opened, picked = st.columns([2, 3], gap="large")
    with opened:
        st.markdown("**Stage 1 · the groups opened**")
        if response.groups_shown():
            st.caption(response.groups_shown())
        st.dataframe(
            pd.DataFrame(
                {
                    "rank": [g.rank for g in response.groups],
                    "score": [round(g.score, 3) for g in response.groups],
                    "group": [f"{g.path} {line_range(g.start_line, g.end_line)}" for g in response.groups],
                    "leaves": [g.leaf_count for g in response.groups],
                }
            ),
            hide_index=True,
            key="walk:opened",
        )
    with picked:
        st.markdown("**Stage 2 · the leaves in them, and the flat search**")
        rows = []
        for staged, flat in zip(response.results[:5], response.flat[:5]):
            rows.append(
                {
                    "two-stage": f"{staged.scope} ({staged.score:.3f})",
                    "flat": f"{flat.scope} ({flat.score:.3f})",
                    "flat leaf's group rank": trace.flat_group_rank[flat.leaf_id],
                    "reached": "yes" if trace.flat_reached[flat.leaf_id] else "no",
                }
            )
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="walk:rankings")
    winner, best = response.results[0], response.flat[0]
    if trace.same_winner:
        verdict = (
            f"Stage 2's winner is the flat search's winner: {winner.scope} ({winner.path}), found by "
            f"reading {response.leaves_compared} of {trace.leaf_count} leaves."
        )
    else:
        rank = trace.flat_group_rank[best.leaf_id]
        verdict = f"Stage 2's winner is {winner.scope}; the flat search's is {best.scope}, " + (
            "which stage 2 ranked lower."
            if trace.flat_reached[best.leaf_id]
            else f"whose group ranks #{rank} of {trace.group_count}: stage 1 opened only "
            f"{len(trace.opened)}, so it never got there."
        )
    st.success(md(verdict))
    st.code(winner.text, language=code_language(winner.language), wrap_lines=True)


MAP_SHOWN = "walk:map:shown"  # not a widget's key: the choice is kept when the page is left


@st.fragment
def neighbourhood_map(data: WalkthroughData, walk: FileWalkthrough) -> None:
    """The PCA map, drawn when asked (it projects thousands of vectors; once
    drawn it stays on for this session, computed once per hierarchy)."""
    st.subheader("Groups are neighbourhoods")
    shown = st.toggle(
        "Draw the map of the leaf vectors",
        value=bool(st.session_state.get(MAP_SHOWN)),
        key="walk:map:on",
        help=f"Every leaf of the repository (a random {MAP_SAMPLE} when there are more) on two axes.",
    )
    st.session_state[MAP_SHOWN] = shown
    if not shown:
        st.caption(
            "Each leaf's vector on the two axes along which the vectors differ most (PCA), coloured by its "
            "group: leaves of one group lie close together."
        )
        return
    mapped, figure = data.leaf_map(walk.path)
    plotly(figure, "leaf-map", "walk:map")
    sampled = (
        f" (a random {mapped.sample_size} of {len(data.plan.table)}, drawn with seed {mapped.seed}, and this "
        "file's; the axes are the sample's)"
        if mapped.sampled
        else ""
    )
    own, other = mapped.own_group_similarity, mapped.other_group_similarity
    st.caption(
        f"Every leaf{sampled}, coloured by its group (colours repeat every ten groups); this file's leaves "
        f"are large. A leaf's cosine with its own group's vector averages {own:.2f}, with a random other "
        f"group's {other:.2f}: groups gather leaves that lie close together, which is why stage 1 can rank "
        f"groups instead of leaves. Two axes keep only {sum(mapped.explained):.0%} of the variance, so "
        "neighbours on the map are a hint, the cosine the proof."
    )


def report_download(index: Index, hierarchy_id: int, set_name: str, repository_name: str) -> None:
    """A button that writes the one-page HTML report of this set (made when clicked)."""
    st.download_button(
        "Download a report (HTML)",
        data=lambda: build_report(index, hierarchy_id),
        file_name=f"hsc-report-{repository_name}-{set_name}.html",
        mime="text/html",
        on_click="ignore",
        key="walk:report",
        icon=":material/download:",
        help="One page: counts, parameters, similarity, hierarchy and sample queries; opens offline.",
    )
