"""A type's members declared outside its lines, counted as its own (``region_members = outside``).

A Python, Java or TypeScript class holds its methods inside its lines, so its region's best leaf and
pooled vector are theirs too. A Go struct's methods and a Rust type's ``impl`` blocks lie outside its
declaration, which alone would be scored by its fields. The chunker names each such member by its
type (a Go method ``pkg.file.Route.Match`` by its receiver, a Rust ``impl Display for Bytes`` as
``Bytes``, or ``Bytes.Display`` when scopes name the trait; hsc.chunk.grammar), so the region table
links each one to the type declaration of its file it is named by (hsc.search.region_table.RegionTable's
``extends``), and a query may score the type by its best member and a vector pooled over them all;
a type so lifted comes right after the member that lifted it, never before it.
Chosen with ``bench quality --regions --query-kind class`` on Go and Rust type questions
(docs/hierarchy.md, "A type's members declared outside it").
"""

from __future__ import annotations

import numpy as np

# Definitions that may hold a type's members outside the type's own lines: Go's methods (named by
# their receiver's type), Rust's impl blocks and Swift's extensions (named by the type they extend).
MEMBER_KINDS = frozenset({"method", "impl", "extension"})
# How far below its lender a type is kept: more than the rounding regions are ranked at (1e-6).
_GAP = 1e-5


def declared_members(
    paths: list[str],
    names: list[str],
    kinds: list[str],
    first: list[int],
    last: list[int],
    outer: list[int],
    count: int,
) -> np.ndarray:
    """For each of ``count`` regions, the row of the type declaration whose members it holds, or -1:
    each outermost definition (``outer``, rows in order) of :data:`MEMBER_KINDS` outside its type's
    lines is linked to the outermost type declaration of its file it is named by (the member's own
    name, else that name less its last part). A class holding its methods inside its lines links
    nothing."""
    extends = np.full(count, -1, dtype=np.int64)
    declared: dict[tuple[str, str], int] = {}
    for row in outer:
        if kinds[row] not in MEMBER_KINDS:
            declared.setdefault((paths[row], names[row]), row)
    for row in outer:
        if kinds[row] not in MEMBER_KINDS:
            continue
        for name in (names[row], names[row].rsplit(".", 1)[0]):
            owner = declared.get((paths[row], name))
            if owner is not None and (first[row] > last[owner] or last[row] < first[owner]):
                extends[row] = owner
                break
    return extends


def pool_members(
    leaf_vectors: np.ndarray, lo: np.ndarray, hi: np.ndarray, extends: np.ndarray, dim: int
) -> np.ndarray:
    """Each linked type's vector (in the order of its row) pooled over its own leaf rows
    ``lo``..``hi`` and its members' (a leaf two of them share counted once), L2-normalised."""
    members: dict[int, list[int]] = {}
    for row in np.flatnonzero(extends >= 0).tolist():
        members.setdefault(int(extends[row]), []).append(row)
    out = np.zeros((len(members), dim), dtype=np.float32)
    for place, owner in enumerate(sorted(members)):
        runs = [np.arange(lo[r], hi[r]) for r in (owner, *members[owner])]
        pooled = leaf_vectors[np.unique(np.concatenate(runs))].astype(np.float32).mean(axis=0)
        out[place] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
    return out


def with_members(extends: np.ndarray, best: dict[int, float]) -> tuple[dict[int, float], dict[int, int]]:
    """``best`` (region -> its best candidate leaf's score) with each type declaration raised to its
    best member's (a Go struct scored by its methods, a Rust type by its impl blocks), and for each
    type so raised, the member that lent it its score."""
    out = dict(best)
    lenders: dict[int, int] = {}
    for row, score in best.items():
        owner = int(extends[row])
        if owner >= 0 and score > out.get(owner, -np.inf):
            out[owner] = score
            lenders[owner] = row
    return out, lenders


def below_lenders(ids: np.ndarray, scores: np.ndarray, lenders: dict[int, int]) -> np.ndarray:
    """``scores`` of the listed regions ``ids`` with each type that a listed member lent its best
    leaf kept just below that member: a question about the method keeps the method first (Go and Rust
    function questions lost their container at the first rank without it), and the type still
    comes right after it."""
    place = {int(row): i for i, row in enumerate(ids.tolist())}
    out = scores.copy()
    for owner, lender in lenders.items():
        o, m = place.get(owner), place.get(lender)
        if o is not None and m is not None and out[o] >= out[m] - _GAP:
            out[o] = out[m] - _GAP
    return out
