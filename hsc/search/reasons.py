"""Why a result is where it is: the one wording of a hit's rank and reason, shared by the Query
page's table and the context pack, so that the same hit reads the same in both.

A query's table numbers its answers with the pieces of a split definition joined into one result
(:func:`hsc.search.results.join_pieces`); a pack places the pieces apart. :func:`answer_ranks`
gives each piece the rank of the answer it is part of, and :func:`why_found` says why a
two-stage result was scored at all (its group's stage-1 rank, or BM25).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from hsc.search.results import QueryResult

# Every leaf is scored in these modes: no group put a result there, so there is no "why".
FLAT_MODES = ("flat", "hybrid-flat")


def why_found(result: QueryResult, group_rank: dict[str, int], mid_level_top_k: int, mode: str) -> str:
    """Why a result was scored: its group's stage-1 rank (past ``mid_level_top_k``: opened by the
    widening), or BM25 when its group was not opened; "" in the flat modes."""
    if mode in FLAT_MODES:
        return ""
    rank = group_rank.get(result.parent_id or "")
    lexical = bool(result.lexical_score)
    if rank is None:
        return "BM25 (group not opened)" if lexical else "group not opened"
    reason = f"group #{rank}" + (" (widened)" if rank > mid_level_top_k else "")
    return reason + (" + BM25" if lexical else "")


def hit_reason(rank: int, why: str) -> str:
    """A pack's hit as the Query table shows it: its rank, then why it was found."""
    return f"rank {rank} · {why}" if why else f"rank {rank}"


def answer_ranks(results: Sequence[QueryResult], definition_of: dict[str, Hashable]) -> list[int]:
    """The rank each of ``results`` (unjoined, best first) has once the pieces of one definition are
    joined (``definition_of``: leaf id -> its definition's key, as a query joins them): a piece
    takes the rank of its definition's best piece."""
    ranks: list[int] = []
    first: dict[Hashable, int] = {}
    for result in results:
        key = definition_of.get(result.leaf_id, ("leaf", result.leaf_id))
        if key not in first:
            first[key] = len(first) + 1
        ranks.append(first[key])
    return ranks
