"""Comparing two parameter sets: what their groupings share and where they
differ, and how one query ranks under each.

:func:`diff_plans` is pure numpy over two :class:`HierarchyPlan` of the same
leaves, so the current sliders can be compared with a saved set live.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from hsc.api import DEFAULT_HIERARCHY, Index, QueryResponse
from hsc.explore.explain import AT_MAXIMUM_SHARE, hierarchy_plan
from hsc.hierarchy.groups import HierarchyPlan, LeafTable
from hsc.params import CHUNK_FIELDS, Parameters

# How a run of leaves between two boundaries both sets share is grouped:
# one group in both, one group cut into several, several joined into one,
# or several in each with boundaries moved between them.
CHANGE_KINDS = ("unchanged", "split", "merged", "moved")


@dataclass(frozen=True)
class HierarchyDiff:
    """The leaves cut into *blocks* at the boundaries both sets share; each
    block is one of :data:`CHANGE_KINDS`. Parallel arrays, one entry per block."""

    block_starts: np.ndarray  # leaf row of each block's first leaf
    block_ends: np.ndarray  # exclusive
    first_groups: np.ndarray  # groups of the first set inside the block
    second_groups: np.ndarray  # ... of the second set
    kinds: np.ndarray  # str, one of CHANGE_KINDS
    first_group_count: int
    second_group_count: int

    def count(self, kind: str) -> int:
        """Blocks of this kind (for "split": groups of the first set that were
        split; for "merged": groups of the second set made by merging)."""
        return int(np.count_nonzero(self.kinds == kind))

    @property
    def changed_leaves(self) -> int:
        changed = self.kinds != "unchanged"
        return int((self.block_ends[changed] - self.block_starts[changed]).sum())

    def changed_blocks(self) -> np.ndarray:
        """Indices of the blocks that changed, largest first."""
        changed = np.flatnonzero(self.kinds != "unchanged")
        sizes = self.block_ends[changed] - self.block_starts[changed]
        return changed[np.argsort(-sizes, kind="stable")]


def diff_plans(first: HierarchyPlan, second: HierarchyPlan) -> HierarchyDiff:
    """Group-level difference between two plans of the same leaf table."""
    if len(first.table) != len(second.table) or not np.array_equal(
        first.table.leaf_ids, second.table.leaf_ids
    ):
        raise ValueError("compare plans of the same leaves (one repository, indexed once)")
    n = len(first.table)
    shared = np.intersect1d(first.group_starts, second.group_starts).astype(np.int64)
    ends = np.append(shared[1:], n).astype(np.int64)

    def inside(starts: np.ndarray) -> np.ndarray:
        return np.searchsorted(starts, ends) - np.searchsorted(starts, shared)

    first_groups, second_groups = inside(first.group_starts), inside(second.group_starts)
    kinds = np.select(
        [(first_groups == 1) & (second_groups == 1), first_groups == 1, second_groups == 1],
        ["unchanged", "split", "merged"],
        "moved",
    )
    return HierarchyDiff(
        block_starts=shared,
        block_ends=ends,
        first_groups=first_groups,
        second_groups=second_groups,
        kinds=kinds,
        first_group_count=first.group_count,
        second_group_count=second.group_count,
    )


def block_rows(diff: HierarchyDiff, table: LeafTable, blocks: np.ndarray) -> list[dict[str, object]]:
    """Table rows describing the given blocks: where they are and what happened."""
    rows = []
    for block in blocks.tolist():
        start, end = int(diff.block_starts[block]), int(diff.block_ends[block])
        rows.append(
            {
                "change": str(diff.kinds[block]),
                "path": table.paths[table.file_index[start]],
                "start_line": int(table.start_lines[start]),
                "end_line": int(table.end_lines[start:end].max()),
                "leaves": end - start,
                "groups before": int(diff.first_groups[block]),
                "groups after": int(diff.second_groups[block]),
                "first_row": start,
            }
        )
    return rows


def oversized_groups(plan: HierarchyPlan) -> np.ndarray:
    """Ordinals of the groups over maximum_merged_chunk_token_length (they are summarised)."""
    return np.flatnonzero(plan.needs_summary)


def leaves_at_maximum(table: LeafTable, maximum_chunk_token_length: int) -> np.ndarray:
    """Rows of the leaves at (or over) the maximum size: most likely pieces of
    a split node, and read only in part by a model with a short window."""
    return np.flatnonzero(table.token_counts >= AT_MAXIMUM_SHARE * maximum_chunk_token_length)


def diff_sets(
    index: Index, first_id: int, second_id: int
) -> tuple[HierarchyDiff, HierarchyPlan, HierarchyPlan]:
    """The diff of two saved sets (re-planned from their parameters) and both plans."""
    first, second = hierarchy_plan(index, first_id), hierarchy_plan(index, second_id)
    return diff_plans(first, second), first, second


@dataclass
class DualRanking:
    """One query answered under two saved parameter sets."""

    first: QueryResponse
    second: QueryResponse

    @property
    def overlap(self) -> int:
        return len({r.leaf_id for r in self.first.results} & {r.leaf_id for r in self.second.results})

    def rows(self) -> list[dict[str, object]]:
        """Rank by rank: each set's leaf and score, and where the other set ranked it."""
        rank_first = {r.leaf_id: r.rank for r in self.first.results}
        rank_second = {r.leaf_id: r.rank for r in self.second.results}
        rows = []
        for position in range(max(len(self.first.results), len(self.second.results))):
            a = self.first.results[position] if position < len(self.first.results) else None
            b = self.second.results[position] if position < len(self.second.results) else None
            rows.append(
                {
                    "rank": position + 1,
                    "first": f"{a.scope} ({a.score:.3f})" if a else "",
                    "second ranks it": rank_second.get(a.leaf_id) if a else None,
                    "second": f"{b.scope} ({b.score:.3f})" if b else "",
                    "first ranks it": rank_first.get(b.leaf_id) if b else None,
                }
            )
        return rows


def compare_rankings(index: Index, text: str, first_id: int, second_id: int) -> DualRanking:
    """``text`` run against two saved sets, each with its own top-k values
    (not recorded in the query history)."""
    return DualRanking(
        index.query(text, hierarchy_id=first_id, record=False, compare=False),
        index.query(text, hierarchy_id=second_id, record=False, compare=False),
    )


class SetExists(ValueError):
    """Saving would replace a saved parameter set; ask before passing ``replace=True``."""


def save_set(
    index: Index, repository_id: int, params: Parameters, name: str, replace: bool = False
) -> dict[str, object]:
    """Build and save the parameter set ``name``; refuses to overwrite one
    unless ``replace``, and keeps "default" for the default parameters (it
    is what every page starts from)."""
    name = name.strip()
    if not name:
        raise ValueError("give the parameter set a name")
    if name == DEFAULT_HIERARCHY:
        defaults = asdict(Parameters())
        differing = [k for k, v in asdict(params).items() if k not in CHUNK_FIELDS and defaults[k] != v]
        if differing:
            raise ValueError(
                f"'{DEFAULT_HIERARCHY}' holds the default parameters; save these (which change "
                f"{', '.join(differing)}) under another name"
            )
    if not replace and index.store.hierarchy_by_name(repository_id, name) is not None:
        raise SetExists(f"a parameter set named '{name}' exists already; replace it?")
    return index.build(repository_id, params, name=name)
