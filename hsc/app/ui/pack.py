"""The context pack in the app: what a model would be given for a query.

The Query page and the Walkthrough both show it: the budget used, the spans by
role with the reason each is there (which hit pulled in which definition), and
the prompt text to copy. A pack is computed once per state of the index, query,
mode and budget, and shared by every session (read-only).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pandas as pd
import streamlit as st

from hsc import Index, Parameters, QueryResponse
from hsc.app.ui.context import database_path, index_lock
from hsc.app.ui.text import line_range
from hsc.explore.explain import hierarchy_stamp
from hsc.integrations.tools import DEFAULT_BUDGET, MAX_BUDGET
from hsc.search.context import SPAN_ROLES, ContextPack

PACK_TITLE = "What a model would be given"
ROLE_MEANING = {
    "hit": "code the query found (a retrieved leaf)",
    "definition": "the rest of a definition a hit is one piece of",
    "uses": "a definition a span uses (functions, class skeletons, methods), found through its imports",
    "outline": "a signature and its doc's first sentence, standing in for a definition too long to fit",
    "parent": "a hit's topic group",
}


@st.cache_resource(max_entries=32, show_spinner="Packing the context…")
def _pack(
    _index: Index,
    database: str,
    hierarchy_id: int,
    stamp: str,
    query: str,
    mode: str | None,
    budget: int,
    overrides: tuple[tuple[str, Any], ...],
    roles: tuple[str, ...] | None = None,
) -> ContextPack:
    return _index.context(query, budget, mode, hierarchy_id=hierarchy_id, roles=roles, **dict(overrides))


def query_parameters(params: Parameters) -> tuple[tuple[str, Any], ...]:
    """The parameters a query reads (the sidebar's "query" stage: top-k values, the pack's policy)."""
    return tuple((f.name, getattr(params, f.name)) for f in fields(params) if f.metadata["stage"] == "query")


def context_pack(
    index: Index,
    hierarchy_id: int,
    query: str,
    mode: str | None,
    budget: int,
    stamp: str | None = None,
    params: Parameters | None = None,
    roles: tuple[str, ...] | None = None,
) -> ContextPack:
    """The pack of ``query`` in this hierarchy, with its own parameters or the query stage of ``params``
    (``stamp``: the hierarchy's :func:`hierarchy_stamp`; read if not given), from the files of
    ``roles`` (None: every file)."""
    if stamp is None:
        with index_lock():
            stamp = hierarchy_stamp(index, hierarchy_id)
    overrides = query_parameters(params) if params is not None else ()
    return _pack(index, str(database_path()), hierarchy_id, stamp, query, mode, budget, overrides, roles)


def budget_input(key: str) -> int:
    narrow, _ = st.columns([1, 3])
    return int(
        narrow.number_input(
            "Token budget",
            min_value=1,
            max_value=MAX_BUDGET,
            value=DEFAULT_BUDGET,
            step=256,
            key=key,
            help="At most this many tokens of code (cl100k, the count GPT-4-class models use) in the pack.",
        )
    )


def spans_table(pack: ContextPack) -> pd.DataFrame:
    """One row per span, by role (hits first), each role's spans in the pack's order."""
    rows = [
        {
            "role": span.role,
            "where": f"{span.path} {line_range(span.start_line, span.end_line)}",
            "tokens": span.tokens,
            "score": None if span.score is None else round(span.score, 3),
            "why it is here": span.reason,
        }
        for role, spans in pack.by_role().items()
        for span in spans
    ]
    return pd.DataFrame(rows, columns=["role", "where", "tokens", "score", "why it is here"])


def show_pack(pack: ContextPack, key: str) -> None:
    """The budget used, the spans by role, and the prompt text."""
    roles = {role: spans for role, spans in pack.by_role().items() if spans}
    # A row of its own: in a column beside the roles' numbers the label was cut off with an ellipsis
    # at laptop widths with the sidebar open ("Budget used, of 2,0…").
    st.metric(
        f"Budget used, of {pack.budget:,} tokens",
        f"{pack.tokens:,}",
        help="The spans' cl100k tokens; the pack never holds more than the budget.",
    )
    numbers = st.columns(max(len(roles), 3))
    for column, (role, spans) in zip(numbers, roles.items()):
        column.metric(
            f"{role} spans · {sum(s.tokens for s in spans):,} tokens", len(spans), help=ROLE_MEANING.get(role)
        )
    if not pack.spans:
        st.info("Nothing fits: no span of this query's context is within the budget, or nothing was found.")
        return
    st.dataframe(
        spans_table(pack),
        hide_index=True,
        key=f"{key}:spans",
        column_config={
            "tokens": st.column_config.Column(width=60),
            "score": st.column_config.Column(width=60),
        },
    )
    st.caption(
        "Roles: "
        + "; ".join(f"**{role}**: {ROLE_MEANING.get(role, role)}" for role in SPAN_ROLES if role in roles)
        + ". “Why it is here” names the span that pulled a definition in, and through which name."
    )
    st.markdown("**The prompt text** (copy it with the button at its top right)")
    st.code(pack.text, language=None, height=420)


@st.fragment
def context_pack_section(
    index: Index, response: QueryResponse, params: Parameters, roles: tuple[str, ...] | None = None
) -> None:
    """The Query page's pack for the response's query, hierarchy and mode, and the
    query stage of ``params`` (the sidebar's), from the files of ``roles`` (the page's filter),
    with its own budget (a change reruns only this section)."""
    st.subheader(PACK_TITLE)
    st.caption(
        "Ten leaves are not what a coding assistant needs: it needs at most so many tokens that let a model "
        "understand and change the code. The context pack starts from the hits, completes a hit that is one "
        "piece of a split definition, adds the definitions the hits use (resolved through the imports read "
        "from the syntax tree), and shows an outline where the whole does not fit. How the budget is shared "
        "is set by the context_* parameters in the sidebar."
    )
    if response.hierarchy_id is None:
        return
    budget = budget_input("query:budget")
    pack = context_pack(
        index, response.hierarchy_id, response.query, response.mode, budget, params=params, roles=roles
    )
    show_pack(pack, "query:pack")
