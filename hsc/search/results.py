"""What the library hands back: node views, query results and responses, and node ids."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hsc.model import LeafContext
from hsc.search.region_table import Region

EMPTY_QUERY = "the query is empty: type what you are looking for"


def check_query(text: str | None) -> str:
    """The query text, or the one message every front end gives for an empty one."""
    if text is None or not str(text).strip():
        raise ValueError(EMPTY_QUERY)
    return str(text)


def parse_node_id(node_id: str) -> tuple[str, int]:
    level, sep, number = str(node_id).partition(":")
    if not sep or level not in ("leaf", "mid", "top") or not number.isdigit():
        raise ValueError(f"not a node id: {node_id!r} (expected leaf:N, mid:N or top:N)")
    return level, int(number)


@dataclass
class NodeView:
    """One node of any level, with explicit links up and down."""

    id: str
    level: str  # "leaf", "mid" or "top"
    path: str
    language: str
    start_line: int
    end_line: int
    scope: str
    node_type: str
    token_count: int
    parent_id: str | None
    children: list[str]
    summary: str | None = None
    summariser: str | None = None
    summary_model: str | None = None
    text: str = ""
    context: LeafContext | None = None  # a leaf's facts from the syntax tree (None for groups and files)


@dataclass
class QueryResult:
    rank: int
    score: float
    leaf_id: str
    path: str
    start_line: int
    end_line: int
    scope: str
    parent_id: str | None
    parent_score: float | None
    text: str = ""
    language: str = ""
    parent: NodeView | None = None
    # In the hybrid modes, the BM25 part of ``score`` (lexical_weight x BM25 / the query's best
    # BM25; 0 for a leaf BM25 did not find): the rest is the cosine. None in the dense modes.
    lexical_score: float | None = None
    # Pieces of one split definition found by the same query, shown as this one result (its
    # leaf, score and rank are the best piece's; its lines span them all): (leaf id, start
    # line, end line) in line order. Empty: the result is one leaf (or pieces kept apart).
    pieces: list[tuple[str, int, int]] = field(default_factory=list)
    # The root folder of the leaf's repository: a database may hold several (hsc.search.across).
    repository: str = ""

    def to_json(self) -> dict[str, Any]:
        keys = (
            "rank",
            "score",
            "leaf_id",
            "repository",
            "path",
            "start_line",
            "end_line",
            "scope",
            "parent_id",
            "parent_score",
        )
        shown = {k: getattr(self, k) for k in keys}
        if self.pieces:
            shown["pieces"] = [list(piece) for piece in self.pieces]
        return shown


def join_pieces(results: list[QueryResult], definition_of: dict[str, object]) -> list[QueryResult]:
    """Results that are pieces of one definition (the same value in ``definition_of``, by leaf
    id; a leaf not in it stands alone) become one result at the best piece's rank, spanning
    the pieces' lines, with their texts in line order; ranks are numbered again."""
    firsts: dict[object, QueryResult] = {}
    members: dict[object, list[QueryResult]] = {}
    joined: list[QueryResult] = []
    for result in results:
        key = definition_of.get(result.leaf_id)
        if key is None:
            joined.append(result)
        elif key in firsts:
            members[key].append(result)
        else:
            firsts[key] = result
            members[key] = [result]
            joined.append(result)
    out = []
    for rank, result in enumerate(joined, start=1):
        pieces = sorted(members.get(definition_of.get(result.leaf_id), [result]), key=lambda r: r.start_line)
        if len(pieces) > 1:
            result = replace(
                result,
                start_line=pieces[0].start_line,
                end_line=max(piece.end_line for piece in pieces),
                text="\n".join(piece.text for piece in pieces),
                pieces=[(piece.leaf_id, piece.start_line, piece.end_line) for piece in pieces],
            )
        out.append(replace(result, rank=rank))
    return out


@dataclass
class GroupResult:
    rank: int
    node_id: str
    score: float
    path: str
    start_line: int
    end_line: int
    scope: str
    leaf_count: int
    summary: str | None


@dataclass
class QueryResponse:
    query: str
    mode: str  # one of hsc.search.two_stage.RETRIEVAL_MODES
    results: list[QueryResult]
    groups: list[GroupResult]
    flat: list[QueryResult]
    leaves_compared: int
    flat_leaves_compared: int
    elapsed_ms: float  # retrieval only, without embedding the query
    embedding_ms: float
    hierarchy_id: int | None = None
    query_id: int | None = None
    # Every group stage 1 opened, best first; ``groups`` describes the first of them and
    # every group that holds a result (a widened stage 1 opens thousands at 10^5 leaves).
    opened_group_ids: list[str] = field(default_factory=list)
    # Leaves inside those groups, and how many leaves BM25 found (hybrid modes): stage 2 scored
    # the opened leaves plus the BM25 leaves outside them (leaves_compared).
    opened_leaves: int = 0
    lexical_candidates: int = 0
    # Whether pieces of one split definition were joined into one result (QueryResult.pieces).
    pieces_joined: bool = True
    # Answers above the leaves (hsc.search.region_table.Region), best first: files and definitions
    # (the levels ``region_levels`` names), and every file ranked as a file; empty unless asked.
    regions: list[Region] = field(default_factory=list)
    files: list[Region] = field(default_factory=list)
    regions_ms: float = 0.0  # ranking them, from the leaves already scored

    def groups_shown(self) -> str:
        """A line saying which of the opened groups ``groups`` describes; "" when it holds them all."""
        opened = len(self.opened_group_ids)
        if len(self.groups) >= opened:
            return ""
        return f"{len(self.groups)} of the {opened:,} groups opened: the best and those holding a result."

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "results": [r.to_json() for r in self.results],
            "leaves_compared": self.leaves_compared,
        }
