"""Whether a two-stage answer agrees with the flat search, and why, from one query's own numbers.

The flat search scores every leaf; stage 1 opens groups and stage 2 scores only their leaves (and,
in the hybrid modes, the leaves BM25 brings in from elsewhere). A leaf of the flat search's top
list is missing from stage 2's because its group was not opened and BM25 did not bring it in, or,
when it was scored, because stage 2 ranked it lower. Pure functions of a
:class:`~hsc.search.results.QueryResponse`; no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

from hsc.params import Parameters
from hsc.search.region_table import Region
from hsc.search.results import QueryResponse, QueryResult
from hsc.search.two_stage import LEXICAL_MODES

TOP = 10


@dataclass(frozen=True)
class StageAgreement:
    """The flat search's top ``top`` leaves set against stage 2's."""

    top: int
    shared: int  # leaves in both top lists
    same_rank: int  # of those, at the same rank in both
    not_opened: int  # flat top leaves whose group stage 1 did not open (and BM25 did not bring in)
    ranked_lower: int  # flat top leaves stage 2 scored but ranked below its top
    through_bm25: int  # stage 2 top leaves whose group was not opened: BM25 brought them in
    flat_through_bm25: int  # flat top leaves stage 2 has though their group was not opened
    groups_opened: int
    leaves_opened: int
    leaves_total: int


def stage_agreement(response: QueryResponse, top: int = TOP) -> StageAgreement:
    """Compare the two top lists of ``response`` (a two-stage mode's, with the flat ranking kept)."""
    top = min(top, len(response.flat))  # stage 2 may keep fewer (the leaves of few groups)
    flat, staged = response.flat[:top], response.results[:top]
    opened = set(response.opened_group_ids)
    staged_rank = {r.leaf_id: r.rank for r in staged}
    answered = {r.leaf_id for r in response.results}
    missing = [r for r in flat if r.leaf_id not in staged_rank]
    return StageAgreement(
        top=top,
        shared=top - len(missing),
        same_rank=sum(1 for r in flat if staged_rank.get(r.leaf_id) == r.rank),
        not_opened=sum(1 for r in missing if r.parent_id not in opened and r.leaf_id not in answered),
        ranked_lower=sum(1 for r in missing if r.parent_id in opened or r.leaf_id in answered),
        through_bm25=sum(1 for r in staged if r.parent_id not in opened),
        flat_through_bm25=sum(1 for r in flat if r.parent_id not in opened and r.leaf_id in answered),
        groups_opened=len(response.opened_group_ids),
        leaves_opened=response.opened_leaves,
        leaves_total=response.flat_leaves_compared,
    )


def rank_reason(params: Parameters, mode: str) -> str:
    """Why stage 2 can rank a leaf it scored otherwise than the flat search does ("" when the
    parameters give it no way to: then both score a leaf alike)."""
    if params.group_score_weight:
        return f"stage 2 adds group_score_weight = {params.group_score_weight:g} × the leaf's group's score"
    if mode in LEXICAL_MODES and params.lexical_fusion == "rrf":
        return "lexical_fusion = rrf fuses ranks among each search's own candidates"
    return ""


def agreement_sentence(agreement: StageAgreement, params: Parameters, mode: str) -> str:
    """One or two sentences saying whether stage 2 found the flat search's top leaves, and why."""
    a = agreement
    why_rank = rank_reason(params, mode)
    if not a.top:
        return "No leaves to compare: the answer is empty."
    where = (
        f"the {a.groups_opened:,} group{'s' if a.groups_opened != 1 else ''} opened in stage 1 "
        f"({a.leaves_opened:,} of {a.leaves_total:,} leaves)"
    )
    bm25 = (
        f" {a.through_bm25} of stage 2's top {a.top} came in through BM25 from groups stage 1 did not open."
        if a.through_bm25
        else ""
    )
    if a.shared == a.top:
        order = (
            "in the same order"
            if a.same_rank == a.top
            else f"{a.same_rank} of them at the same rank" + (f" ({why_rank})" if why_rank else "")
        )
        inside = a.top - a.flat_through_bm25
        how = (
            f"all inside {where}"
            if not a.flat_through_bm25
            else f"{inside} inside {where} and {a.flat_through_bm25} brought in by BM25 from groups it did "
            "not open"
        )
        return (
            f"**The two stages agree with the flat search on the top {a.top}**: stage 2 scored every one "
            f"of its top {a.top} leaves, {how}; so stage 2 re-ranked the same leaves, {order}."
        )
    reasons = []
    if a.not_opened:
        reasons.append(
            f"{a.not_opened} lie in groups outside {where}, and BM25 did not bring them in"
            if a.not_opened > 1
            else f"1 lies in a group outside {where}, and BM25 did not bring it in"
        )
    if a.ranked_lower:
        reasons.append(
            f"{a.ranked_lower} {'were' if a.ranked_lower > 1 else 'was'} scored but ranked below stage 2's "
            f"top {a.top}" + (f" ({why_rank})" if why_rank else "")
        )
    return (
        f"**The two stages differ from the flat search**: stage 2's answer holds {a.shared} of the flat "
        f"search's top {a.top}; of the other {a.top - a.shared}, " + "; ".join(reasons) + f".{bm25}"
    )


def region_level_sentence(regions: list[Region], results: list[QueryResult]) -> str:
    """Which level the region answer's first entry is, and whether it holds stage 2's first leaf."""
    if not regions:
        return ""
    first = regions[0]
    text = f"The region answer's first entry is at the **{first.level}** level: {first.name}"
    if results:
        leaf = results[0]
        inside = first.path == leaf.path and (
            first.start_line is None or first.start_line <= leaf.start_line <= (first.end_line or 0)
        )
        text += ", which holds the first leaf." if inside else ", which does not hold the first leaf."
    return text
