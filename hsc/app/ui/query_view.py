"""The Query page's explanations and tables: what the chosen mode does, what one
query did with its actual numbers, why each leaf is in the answer, and the
picker that opens a result. Drawing and wording only; the numbers come from
:class:`hsc.QueryResponse`."""

from __future__ import annotations

import hashlib
import math

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from hsc import Parameters, QueryResponse, QueryResult
from hsc.app.ui.text import cell, line_range, md
from hsc.explore.stages import agreement_sentence, region_level_sentence, stage_agreement
from hsc.model import common_prefix
from hsc.params import RETRIEVAL_MODES
from hsc.search.reasons import FLAT_MODES, why_found
from hsc.search.region_table import Region
from hsc.search.regions import NAME_WEIGHT, OUTLINE_WEIGHT, asks_types
from hsc.search.results import GroupResult
from hsc.search.two_stage import LEXICAL_MODES

ONLY_IN_ONE_LIST = "background-color: rgba(255, 127, 14, 0.18)"
# Numbers get just their width, so where a result is (path and lines) and what it is (scope) keep the rest.
NUMBER_WIDTHS = {
    "rank": 44,
    "score": 56,
    "cosine": 60,
    "BM25": 52,
    "flat rank": 68,
    # The flat table's column of where the page's own mode ranked a leaf (hybrid, two-stage...).
    **{f"{mode} rank": 100 for mode in RETRIEVAL_MODES},
    "leaves": 56,
}
WIDE_COLUMNS = {"where": 230, "scope": "large", "why": 190}


def column_config() -> dict[str, st.column_config.Column]:
    widths: dict[str, int | str] = {**NUMBER_WIDTHS, **WIDE_COLUMNS}
    return {name: st.column_config.Column(width=width) for name, width in widths.items()}  # type: ignore[arg-type]


def short_scope(scope: str, shared: str) -> str:
    """``scope`` without the dotted prefix ``shared`` (kept whole if that is all it is)."""
    return scope[len(shared) + 1 :] if shared and scope.startswith(shared + ".") else scope


def shared_folder(paths: list[str]) -> str:
    """The folder ("a/b/") every path is inside, or ""."""
    parts = common_prefix([path.split("/")[:-1] for path in paths])
    return "/".join(parts) + "/" if parts else ""


def answer_heading(response: QueryResponse) -> str:
    if response.mode in FLAT_MODES:
        return f"**The answer, `{response.mode}` · every leaf scored**"
    return "**Stage 2 · the answer: the leaves of the opened groups" + (
        ", and BM25's**" if response.mode in LEXICAL_MODES else "**"
    )


def mode_explanation(params: Parameters) -> str:
    """The page's opening caption: what the sidebar's mode does, in the parameters' names."""
    mode = params.retrieval_mode
    lexical = (
        " BM25 over the leaves' identifier-split text also brings in its lexical_candidates best leaves "
        "wherever they are, and each leaf's score is its cosine plus lexical_weight × its BM25 score over "
        "the query's best."
        if mode in LEXICAL_MODES
        else ""
    )
    definitions = (
        " A leaf holding several definitions (small functions merged, a small class kept whole) counts "
        "the best cosine among its own vector and each definition's (definition_vectors)."
        if params.definition_vectors == "best"
        else ""
    )
    if mode in FLAT_MODES:
        return (
            f"**Stage 5: retrieval, here `{mode}`.** Every leaf is scored against the query (cosine of "
            f"the embeddings).{definitions}{lexical} The two-stage search beside it is what the hierarchy "
            "is for."
        )
    widened = (
        "opens the nearest groups until they hold stage1_leaf_share of all leaves (never fewer than "
        "mid_level_top_k; 0 = exactly mid_level_top_k, the seed's rule)"
        if params.stage1_leaf_share > 0
        else "opens the mid_level_top_k nearest groups (stage1_leaf_share = 0: the seed's rule)"
    )
    return (
        f"**Stage 5: two-stage retrieval, here `{mode}`.** Stage 1 ranks the mid-level groups by the cosine "
        f"of their mean vector with the query and {widened}; stage 2 scores only the leaves inside them and "
        f"keeps leaf_level_top_k.{definitions}{lexical} The flat search scores every leaf: the exact answer "
        "the two stages try to match while reading fewer leaves."
    )


def parameters_line(params: Parameters) -> str:
    names = ["retrieval_mode", "stage1_leaf_share", "mid_level_top_k", "leaf_level_top_k"]
    if params.retrieval_mode in LEXICAL_MODES:
        names += ["lexical_weight", "lexical_candidates"]
    if params.group_score_weight:
        names.append("group_score_weight")
    return ", ".join(f"{name} = {getattr(params, name)}" for name in names) + " (from the sidebar)."


def stages_agree(response: QueryResponse, params: Parameters) -> str:
    """Whether stage 2's top leaves are the flat search's, and why ("" for a flat mode)."""
    if response.mode in FLAT_MODES:
        return ""
    return agreement_sentence(stage_agreement(response), params, response.mode)


def what_this_query_did(response: QueryResponse, params: Parameters) -> str:
    """One paragraph with this query's own numbers: groups opened and why that many,
    leaves they held, BM25 leaves brought in from elsewhere, leaves scored and kept."""
    total = response.flat_leaves_compared
    kept = len(response.results)
    if response.mode in FLAT_MODES:
        fused = " fused with BM25" if response.mode == "hybrid-flat" else ""
        return f"This query, `{response.mode}`: every one of the {total:,} leaves scored{fused}; {kept} kept."
    opened = len(response.opened_group_ids)
    share = params.stage1_leaf_share
    if share > 0:
        budget = math.ceil(share * total)
        why = (
            f"the nearest until they held {share:g} of the {total:,} leaves ({budget:,})"
            if opened > params.mid_level_top_k
            else f"mid_level_top_k = {params.mid_level_top_k}, which already held the {budget:,} leaves "
            f"stage1_leaf_share = {share:g} asks for"
        )
    else:
        why = f"mid_level_top_k = {params.mid_level_top_k}, the seed's rule"
    text = (
        f"This query, `{response.mode}`: stage 1 opened **{opened:,} groups** ({why}), holding "
        f"{response.opened_leaves:,} leaves."
    )
    if response.mode in LEXICAL_MODES:
        outside = response.leaves_compared - response.opened_leaves
        text += (
            f" BM25 found {response.lexical_candidates} leaves; the {outside} of them outside those groups "
            "were scored too."
        )
    # Leaves kept: a result joined from pieces of one split definition stands for several.
    leaves_kept = sum(max(1, len(r.pieces)) for r in response.results)
    scored = f"**{response.leaves_compared:,} of {total:,} leaves**"
    text += f" Stage 2 scored {scored} and kept the best {leaves_kept}"
    text += (
        " (leaf_level_top_k)."
        if kept == leaves_kept
        else f" (leaf_level_top_k = {params.leaf_level_top_k}), shown as {kept} results: pieces of one split "
        "definition are joined into one result, and the places they free are not refilled."
    )
    if response.mode in LEXICAL_MODES:
        text += " A score is the cosine plus the BM25 part, both shown."
    return text


def parent_note(result: QueryResult, group_rank: dict[str, int], in_answer: bool) -> str:
    """What stage 1 did with the group of an opened result."""
    rank = group_rank.get(result.parent_id or "")
    if rank is not None:
        return f"Stage 1 ranked this group #{rank} and opened it."
    if in_answer:
        return "Stage 1 did not open this group: BM25 brought the leaf in."
    return (
        "Stage 1 did not open this group and BM25 did not bring the leaf in: only the flat search reached it."
    )


def _score_columns(results: list[QueryResult]) -> dict[str, list[float]]:
    if not results or results[0].lexical_score is None:
        return {"score": [round(r.score, 3) for r in results]}
    return {
        "score": [round(r.score, 3) for r in results],
        "cosine": [round(r.score - (r.lexical_score or 0.0), 3) for r in results],
        "BM25": [round(r.lexical_score or 0.0, 3) for r in results],
    }


def _tinted(frame: pd.DataFrame, mask: list[bool]) -> Styler:
    """``frame`` with the rows where ``mask`` holds tinted (in one ranking only)."""
    styled = frame.style.apply(lambda row: [ONLY_IN_ONE_LIST if mask[row.name] else ""] * len(row), axis=1)
    return styled.format(precision=3)


def where(result: QueryResult | GroupResult, folder: str) -> str:
    """The result's path without the ``folder`` all share, and its lines."""
    return f"{result.path[len(folder) :]} {line_range(result.start_line, result.end_line)}"


def staged_table(
    response: QueryResponse, shown_scope: dict[str, str], folder: str, mid_level_top_k: int
) -> Styler:
    flat_rank = {r.leaf_id: r.rank for r in response.flat}
    group_rank = {g.node_id: g.rank for g in response.groups}
    results = response.results
    frame = pd.DataFrame(
        {
            "rank": [r.rank for r in results],
            **_score_columns(results),
            **(
                {}
                if response.mode in FLAT_MODES  # every leaf scored: no group put it there
                else {"why": [why_found(r, group_rank, mid_level_top_k, response.mode) for r in results]}
            ),
            "flat rank": [cell(flat_rank.get(r.leaf_id)) for r in results],
            "where": [where(r, folder) for r in results],
            "scope": [shown_scope[r.leaf_id] for r in results],
        }
    )
    return _tinted(frame, [r.leaf_id not in flat_rank for r in results])


def flat_table(response: QueryResponse, shown_scope: dict[str, str], folder: str) -> Styler:
    staged_rank = {r.leaf_id: r.rank for r in response.results}
    results = response.flat
    frame = pd.DataFrame(
        {
            "rank": [r.rank for r in results],
            **_score_columns(results),
            f"{response.mode} rank": [cell(staged_rank.get(r.leaf_id)) for r in results],
            "where": [where(r, folder) for r in results],
            "scope": [shown_scope[r.leaf_id] for r in results],
        }
    )
    return _tinted(frame, [r.leaf_id not in staged_rank for r in results])


def groups_table(response: QueryResponse, folder: str, shared_scope: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rank": [g.rank for g in response.groups],
            "score": [round(g.score, 3) for g in response.groups],
            "leaves": [g.leaf_count for g in response.groups],
            "where": [where(g, folder) for g in response.groups],
            "scope": [short_scope(g.scope, shared_scope) or "(file level)" for g in response.groups],
        }
    )


def regions_table(regions: list[Region], folder: str) -> pd.DataFrame:
    """The query's regions (or files), best first: level, score, where and name."""
    return pd.DataFrame(
        {
            "rank": list(range(1, len(regions) + 1)),
            "score": [round(r.score, 3) for r in regions],
            "level": [r.level for r in regions],
            "where": [
                r.path[len(folder) :]
                + ("" if r.start_line is None else f" {line_range(r.start_line, r.end_line)}")
                for r in regions
            ],
            "name": [r.name for r in regions],
        }
    )


def _lists_files(params: Parameters) -> bool:
    """Whether the region answer draws files as well (not asked at the definition level)."""
    return "file" in params.region_levels.split("+")


def regions_heading(params: Parameters) -> str:
    """The region answer's heading: what its list is drawn from."""
    if _lists_files(params):
        return "**Where to look · files and definitions**"
    if asks_types(params):
        return "**Where to look · types (asked at the type level)**"
    return "**Where to look · definitions (asked at the definition level)**"


def regions_note(response: QueryResponse, params: Parameters) -> str:
    """How the regions were ranked, and whether their first answer holds the leaves' first."""
    with_files = _lists_files(params)
    listed = "type (a nested one too)" if asks_types(params) else "top-level definition"
    text = (
        f"Each {'file and ' if with_files else ''}{listed} that holds one of the query's best "
        f"{params.region_candidates} leaves scores {params.region_best_share:g} × its best leaf's score "
        f"+ {1 - params.region_best_share:g} × its own pooled vector's cosine (files: "
        f"{params.file_best_share:g} and {1 - params.file_best_share:g})"
    )
    if params.region_outlines != "off":
        text += (
            f"; a definition holding others gains up to {OUTLINE_WEIGHT:g} for its outline (its members' "
            "signatures) fitting the query"
        )
    if params.region_names != "off":
        text += f"; every region gains {NAME_WEIGHT:g} × the share of its own name's words the query says"
    if params.region_members == "outside":
        text += "; a Go or Rust type counts its methods and impl blocks in its file as its own"
    if with_files:
        text += (
            ": a class question tends to get its class, a module question its file. Looking for a class, "
            "ask at the type level (region_levels = type, in the sidebar): its class comes in the first "
            "ten more often than in this list, or at the definition level (region_levels = definition)."
        )
    elif asks_types(params):
        text += (
            ": asked at the type level (region_levels = type), the list holds types alone (classes, "
            "structs, interfaces, a class nested in a function or in another class too), as a question "
            "about a class wants; the file ranking beside it still answers a module question."
        )
    else:
        text += (
            ": asked at the definition level (region_levels = definition), the list holds no files, "
            "as a question about a class wants; the file ranking beside it still answers a module question."
        )
    return text + " " + region_level_sentence(response.regions, response.results)


def choices_of(response: QueryResponse) -> list[tuple[str, QueryResult]]:
    """What the Result picker offers: the answer's leaves, then the flat search's others."""
    staged = {r.leaf_id for r in response.results}
    choices = [("two-stage", r) for r in response.results]
    return choices + [("flat", r) for r in response.flat if r.leaf_id not in staged]


def describe_choice(choice: tuple[str, QueryResult]) -> str:
    stage, result = choice
    lines = line_range(result.start_line, result.end_line)
    return f"{stage} #{result.rank} · {result.scope} · {result.path} {lines}"


def picker_key(response: QueryResponse) -> str:
    """A key of its own for each answer: a picker kept across queries keeps showing the label
    of the hit it had (the browser holds the label it sent), above the new query's code."""
    answer = "|".join([response.query, str(response.hierarchy_id), response.mode])
    answer += "|" + ",".join(r.leaf_id for r in (*response.results, *response.flat))
    return "query:open:" + hashlib.sha1(answer.encode()).hexdigest()[:12]


def pick_result(response: QueryResponse) -> QueryResult | None:
    """The Result picker, on the current answer's first hit until another is chosen."""
    choices = choices_of(response)
    if not choices:
        return None
    picked = st.selectbox(
        "Result",
        range(len(choices)),
        key=picker_key(response),
        format_func=lambda n: describe_choice(choices[n]),
    )
    return choices[picked][1] if isinstance(picked, int) and picked < len(choices) else None


def caption_tables(shared: str, folder: str) -> str:
    return (
        "Tinted rows are in one ranking only (their rank in the other is empty): the flat search found the "
        "leaf but stage 1 did not open its group and BM25 did not bring it in, or the other way round. "
        "“why”: the stage-1 rank of the leaf's group (*widened*: past mid_level_top_k, opened by "
        "stage1_leaf_share), *+ BM25* when BM25 found it too, or *BM25* alone when its group was not opened."
    ) + "".join(
        f" {what} are shown without “{md(prefix)}”, which all of them share."
        for what, prefix in (("Scopes", f"{shared}."), ("Paths", folder))
        if prefix not in (".", "")
    )
