"""Full answers: a query that joins the pieces of split definitions into one result asks for
as many leaves as it takes to hand back ``leaf_level_top_k`` joined results.

Joining pieces (:func:`hsc.search.results.join_pieces`) turns, say, ten leaves into seven
results when three of them are second pieces of a definition already in the list. With
``joined_results="full"`` (the default) the retrieval is asked again for more leaves until
``k`` joined results come back or nothing more can be found; ``"seed"`` keeps the leaves the
seed's ``leaf_level_top_k`` gives, joined, so fewer results than asked for. Pure functions
over the leaf table and a search callable, shared by :meth:`hsc.api.Index.query` and the
quality benchmark, so both count answers the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from hsc.hierarchy.groups import LeafTable
from hsc.search.two_stage import Retrieval

Found = TypeVar("Found")

# How many more leaves a query asks for than the results it wants, at first: most joined lists
# need one or two more leaves, and asking twice as many costs a partial sort, not a second search.
FIRST_ASK = 2
# A query asks again with this many times the leaves while it is short of results.
GROWTH = 2


def definition_runs(table: LeafTable, rows: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Row -> (file, first row) of the run of consecutive leaves sharing its scope, for rows
    inside a definition (a scope longer than the shortest of its file, the module's): the
    pieces of one split definition share the key; a row not in the answer stands alone."""
    runs: dict[int, tuple[int, int]] = {}
    shortest: dict[int, int] = {}
    for row in rows:
        row = int(row)
        scope, file = table.scopes[row], int(table.file_index[row])
        # A file's rows are contiguous, and files are in order.
        start = int(np.searchsorted(table.file_index, file, side="left"))
        if file not in shortest:
            end = int(np.searchsorted(table.file_index, file, side="right"))
            shortest[file] = min(len(table.scopes[r]) for r in range(start, end))
        if len(scope) == shortest[file]:
            continue
        first = row
        while first - 1 >= start and table.scopes[first - 1] == scope:
            first -= 1
        runs[row] = (file, first)
    return runs


def joined_count(rows: Sequence[int], runs: dict[int, Any]) -> int:
    """How many results ``rows`` make once the pieces of one definition are joined."""
    keys = {runs[row] for row in rows if row in runs}
    return len(keys) + sum(1 for row in rows if row not in runs)


def first_joined(rows: Sequence[int], runs: dict[int, Any], k: int) -> list[int]:
    """The rows that make the first ``k`` joined results (each result's pieces, in rank order)."""
    kept, keys = [], set()
    for row in rows:
        key = runs.get(row, ("row", row))
        if key not in keys:
            if len(keys) == k:
                continue
            keys.add(key)
        kept.append(row)
    return kept


def full_answer(
    search: Callable[[int], Found],
    rows_of: Callable[[Found], list[int]],
    table: LeafTable,
    k: int,
    full: bool,
) -> tuple[Found, list[int], dict[int, tuple[int, int]]]:
    """``search(leaves)`` asked for enough leaves that they join into ``k`` results (``full``),
    or for ``k`` leaves (the seed's count): what it found, the rows of its ranking (``rows_of``)
    that make the first ``k`` joined results, and their definition runs."""
    ask = k * FIRST_ASK if full else k
    while True:
        found = search(ask)
        # A search may give more than it was asked (a query's region candidates): the answer is
        # drawn from the first ``ask``.
        rows = rows_of(found)[:ask]
        runs = definition_runs(table, rows)
        if not full or len(rows) < ask or joined_count(rows, runs) >= k or ask >= len(table):
            break
        ask = min(ask * GROWTH, len(table))
    return found, first_joined(rows, runs, k), runs


def full_retrieval(
    search: Callable[[int], Retrieval], table: LeafTable, k: int, full: bool
) -> tuple[Retrieval, dict[int, tuple[int, int]], list[Any]]:
    """:func:`full_answer` of a leaf retrieval: its leaves cut to those of the first ``k``
    joined results, the definition runs of its rows, and every leaf hit the search gave
    (best first; the candidates region answers are drawn from)."""
    found, rows, runs = full_answer(search, lambda r: [hit.row for hit in r.leaves], table, k, full)
    kept = set(rows)
    leaves = [hit for hit in found.leaves if hit.row in kept]
    return Retrieval(found.groups, leaves, found.leaves_compared, found.opened_leaves), runs, found.leaves
