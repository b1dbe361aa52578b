"""The Hierarchy page's structural levels: folder → file → definition container → group → leaf,
with the groups of either boundary rule made from the stored vectors (nothing is indexed again).
The tree and the counts come from :mod:`hsc.explore.structure`; this module only draws them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from hsc.api import Index
from hsc.app.ui.charts import hierarchy_figure
from hsc.app.ui.context import database_path
from hsc.app.ui.params import parameters_from
from hsc.app.ui.text import md
from hsc.explore.figures import chart_config
from hsc.explore.structure import STRUCTURE_DEPTH, STRUCTURE_NODES, rule_count, structural_tree
from hsc.model import Definition

RULES = ("valley", "structure")
RULE_TEXT = {
    "valley": "one boundary per dip of the smoothed similarity (the seed's, the default)",
    "structure": "the valleys, and every edge of a top-level container",
}


@st.cache_resource(max_entries=4, show_spinner=False)
def _definitions(
    _index: Index, database: str, repository_id: int, indexed_at: float
) -> dict[str, list[Definition]]:
    return _index.store.definitions(repository_id)


def structure_section(
    index: Index, repository: dict[str, Any], hierarchy: dict[str, Any], scope: str, leave_out: list[str]
) -> None:
    """The section: a rule picker, what each rule makes of the scope, and the icicle."""
    repository_id = int(repository["id"])
    built = parameters_from(hierarchy["parameters"])
    st.subheader("Structural levels")
    st.caption(
        "Folder → file → definition container (a class, impl or trait block, namespace, module object: "
        "a top-level definition split into leaves of its own, as the chunker's scopes say, the edges "
        "boundary_rule = structure cuts at; a class small enough to be one leaf is that leaf) → groups → "
        "leaves. "
        "The groups below are made again from the stored vectors with either boundary_rule, so the two "
        "can be compared without indexing again."
    )
    picked = st.radio(
        "Groups by boundary_rule",
        RULES,
        index=RULES.index(built.boundary_rule) if built.boundary_rule in RULES else 0,
        horizontal=True,
        key="hierarchy:rule",
        format_func=lambda rule: rule + (" (this set's)" if rule == built.boundary_rule else ""),
        help="valley: " + RULE_TEXT["valley"] + "; structure: " + RULE_TEXT["structure"] + ".",
    )
    plans = {rule: index.preview(repository_id, replace(built, boundary_rule=rule)) for rule in RULES}
    definitions = _definitions(
        index, str(database_path()), repository_id, float(repository.get("indexed_at") or 0.0)
    )
    view = structural_tree(
        repository["name"], plans[picked], definitions, scope, max_nodes=STRUCTURE_NODES, leave_out=leave_out
    )
    counts = [rule_count(plans[rule], scope, leave_out) for rule in RULES]
    st.markdown(
        md(
            f"In view: {view.files} files, {view.containers} definition containers, {view.groups} groups, "
            f"{view.leaves} leaves."
        )
        + " "
        + " ".join(
            f"**{c.rule}** makes {c.groups} groups, {c.crossing} of them crossing a container edge"
            + (" (hung under their file)." if c.crossing else ".")
            for c in counts
        )
    )
    st.plotly_chart(
        hierarchy_figure(view, kind="icicle", depth=STRUCTURE_DEPTH),
        key="hierarchy:structure",
        config=chart_config(f"structure-{repository['name']}-{picked}-{scope or 'all'}"),
    )
    st.caption(
        f"Left to right: folders, files, definition containers, groups, leaves, {STRUCTURE_DEPTH} columns at "
        "a time (click a box to go down, the left column to go back; hover for each one's kind). "
        "A group that crosses a container edge, or lies at a file's top level, hangs straight under its file."
    )
    if view.deepest != "leaf":
        st.caption(f"Drawn down to the {view.deepest} level: open a folder or file above to see deeper.")
