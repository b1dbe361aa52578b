"""Data shaped for looking at: what a chart or table of a large repository
should show, computed here so that drawing code only draws.

Pure functions of library data (numpy arrays, :class:`~hsc.api.NodeView`),
no plotting and no Streamlit.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from hsc.api import NodeView
from hsc.hierarchy.groups import LeafTable

# Before indexing a folder (kept here for the pages that import them from this module).
from hsc.index.estimate import FolderSurvey, duration, survey_folder  # noqa: F401

# What kind of text a leaf is, by how it was cut (Leaf.chunker): the Leaves page's classes.
LEAF_CLASSES = {"ast": "code", "paragraph": "prose", "lines": "text", "data": "data"}


def leaf_class(chunker: str) -> str:
    """ "code", "prose", "text" or "data" (a data or generated file: hsc.chunk.datafiles)."""
    return LEAF_CLASSES.get(chunker, chunker)


def without_data(nodes: list[NodeView], data_paths: Collection[str]) -> list[NodeView]:
    """The nodes outside data files: what the hierarchy's statistics and charts count by default."""
    return [node for node in nodes if node.path not in data_paths] if data_paths else nodes


# Above this many leaves the similarity page shows an overview and a window of the curve.
DETAIL_LEAVES = 400
# A chart is a few hundred to a couple of thousand pixels wide: more points than this are not seen.
OVERVIEW_BUCKETS = 800
# A sunburst or treemap stops being readable (and fast) past this many sectors.
MAX_TREE_NODES = 1500


@dataclass(frozen=True)
class Envelope:
    """A long series reduced to ``buckets`` columns: each column's first row,
    and the lowest and highest value in it (NaN where it held none)."""

    starts: np.ndarray  # int64, first row of each bucket
    low: np.ndarray
    high: np.ndarray


def min_max_envelope(values: np.ndarray, buckets: int = OVERVIEW_BUCKETS) -> Envelope:
    """The min and max of ``values`` per bucket of consecutive rows, ignoring
    NaN: what a chart a few hundred pixels wide can show of any long series,
    with every dip still visible."""
    count = len(values)
    buckets = max(1, min(buckets, count))
    starts = np.linspace(0, count, buckets + 1).astype(np.int64)[:-1]
    starts = np.unique(starts)
    filled = ~np.isnan(values)
    low = np.fmin.reduceat(np.where(filled, values, np.inf), starts) if count else np.zeros(0)
    high = np.fmax.reduceat(np.where(filled, values, -np.inf), starts) if count else np.zeros(0)
    low = np.where(np.isinf(low), np.nan, low)
    high = np.where(np.isinf(high), np.nan, high)
    return Envelope(starts=starts, low=low, high=high)


def file_rows(table: LeafTable, file_number: int) -> tuple[int, int]:
    """Rows ``[start, end)`` of the table that belong to file ``file_number``."""
    start = int(np.searchsorted(table.file_index, file_number, side="left"))
    end = int(np.searchsorted(table.file_index, file_number, side="right"))
    return start, end


def leaf_window(total: int, start: int, size: int = DETAIL_LEAVES) -> tuple[int, int]:
    """Rows ``[start, end)`` of a window of ``size`` leaves, kept inside ``[0, total)``."""
    size = max(2, min(size, total))
    start = max(0, min(int(start), total - size))
    return start, start + size


def pair_at(leaf_start: int, leaf_end: int, x: object) -> int | None:
    """The adjacent pair (row of its first leaf) a chart of rows ``[leaf_start,
    leaf_end)`` draws at ``x`` (pairs sit half-way between leaves), if any."""
    if not isinstance(x, int | float):
        return None
    row = leaf_start + int(round(float(x) - 0.5))
    return row if leaf_start <= row < leaf_end - 1 else None


def pair_label(pair: int, leaf_start: int) -> tuple[int, int]:
    """The two leaves of the pair at row ``pair`` numbered as the x axis of a chart of rows from
    ``leaf_start`` numbers them (its first leaf is 0), not as rows of the whole repository."""
    return pair - leaf_start, pair - leaf_start + 1


def keep_end(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at the front: the end of a scope or
    path ("…Parser.parse_header") is what tells it apart."""
    return text if len(text) <= limit else "…" + text[len(text) - limit + 1 :]


# -- the hierarchy with a folder level -----------------------------------------------------------------


@dataclass(frozen=True)
class TreeNode:
    """One sector of a sunburst or tile of a treemap."""

    id: str
    label: str
    parent: str  # "" for the root
    tokens: int
    kind: str  # "repository", "folder", "file", "group" or "leaf"
    detail: str  # one line for the hover


@dataclass(frozen=True)
class TreeView:
    nodes: list[TreeNode]
    deepest: str  # the deepest kind shown: "file", "group" or "leaf"
    files: int
    groups: int
    leaves: int


def folders_of(paths: Sequence[str]) -> list[str]:
    """Every folder holding one of ``paths`` (at any depth), sorted."""
    found: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        found.update("/".join(parts[: depth + 1]) for depth in range(len(parts)))
    return sorted(found)


def place_counts(paths: Sequence[str]) -> Counter[str]:
    """How many of ``paths`` (one per item counted) each file and each folder holds."""
    counts: Counter[str] = Counter(paths)
    for path, count in list(counts.items()):
        for folder in folders_of([path]):
            counts[folder] += count
    return counts


def single_entry(scope: str, paths: Sequence[str]) -> str:
    """``scope``, or the folder below it when that is all it holds (``src/pkg/``
    in many repositories): a ring with one sector says nothing."""
    while True:
        inside = [p[len(scope) + 1 :] if scope else p for p in paths if _inside(p, scope) and p != scope]
        heads = {p.split("/", 1)[0] for p in inside}
        if len(heads) != 1 or not all("/" in p for p in inside):
            return scope
        scope = f"{scope}/{heads.pop()}" if scope else heads.pop()


def _inside(path: str, scope: str) -> bool:
    return not scope or path == scope or path.startswith(scope + "/")


def hierarchy_tree(
    repository_name: str,
    documents: Sequence[NodeView],
    groups: Sequence[NodeView],
    leaf_tokens: dict[str, tuple[int, str]],
    scope: str = "",
    max_nodes: int = MAX_TREE_NODES,
) -> TreeView:
    """Repository → folders → files → groups → leaves, for the folder or file
    ``scope`` ("" for all of it), with token counts summed bottom-up.

    Levels are added from the top while the total stays within ``max_nodes``:
    a whole large repository shows its folders and files, a folder its groups
    too, a file everything down to its leaves. ``leaf_tokens``: leaf id ->
    (tokens, label).
    """
    scope = single_entry(scope, [d.path for d in documents])
    in_scope = [d for d in documents if _inside(d.path, scope)]
    group_rows = [g for g in groups if _inside(g.path, scope)]
    leaf_count = sum(len(g.children) for g in group_rows)
    folders = [f for f in folders_of([d.path for d in in_scope]) if _inside(f, scope) and f != scope]
    base = 1 + len(folders) + len(in_scope)
    with_groups = base + len(group_rows) <= max_nodes
    with_leaves = with_groups and base + len(group_rows) + leaf_count <= max_nodes

    root_id = "folder:" + scope if scope and not any(d.path == scope for d in in_scope) else "repository"
    root_label = scope or repository_name
    children_tokens: dict[str, int] = defaultdict(int)
    nodes: list[TreeNode] = []

    def parent_folder(path: str) -> str:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        return "folder:" + folder if folder and folder != scope and _inside(folder, scope) else root_id

    group_tokens = {g.id: g.token_count for g in group_rows}
    for group in group_rows:
        if with_groups:
            lines = f"L{group.start_line}–{group.end_line}"
            nodes.append(
                TreeNode(
                    group.id,
                    f"{lines} {group.scope}".strip(),
                    group.parent_id or root_id,
                    group.token_count,
                    "group",
                    f"group · {group.path} {lines} · {len(group.children)} leaves",
                )
            )
        if with_leaves:
            for leaf_id in group.children:
                tokens, label = leaf_tokens.get(leaf_id, (0, leaf_id))
                nodes.append(TreeNode(leaf_id, label, group.id, tokens, "leaf", f"leaf · {label}"))
    document_tokens: dict[str, int] = defaultdict(int)
    for group in group_rows:
        document_tokens[group.parent_id or ""] += group_tokens[group.id]
    file_nodes = []
    for document in in_scope:
        tokens = document_tokens.get(document.id, 0)
        parent = root_id if document.path == scope else parent_folder(document.path)
        file_nodes.append(
            TreeNode(
                document.id,
                document.path.rsplit("/", 1)[-1],
                parent,
                tokens,
                "file",
                f"file · {document.path} · {len(document.children)} groups",
            )
        )
        children_tokens[parent] += tokens
    # Folders deepest first, so each one's total is complete before its parent adds it.
    folder_nodes = []
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        node_id = "folder:" + folder
        parent = parent_folder(folder)
        children_tokens[parent] += children_tokens[node_id]
        folder_nodes.append(
            TreeNode(
                node_id, folder.rsplit("/", 1)[-1] + "/", parent, children_tokens[node_id], "folder", folder
            )
        )
    if root_id == "repository" and scope and in_scope:
        # A single file as the scope: it is the root itself.
        file_nodes = [TreeNode(n.id, n.label, "", n.tokens, n.kind, n.detail) for n in file_nodes]
        root: list[TreeNode] = []
    else:
        kind = "folder" if scope else "repository"
        root = [TreeNode(root_id, root_label, "", children_tokens[root_id], kind, f"{kind} · {root_label}")]
    deepest = "leaf" if with_leaves else "group" if with_groups else "file"
    return TreeView(
        nodes=root + folder_nodes[::-1] + file_nodes + nodes,
        deepest=deepest,
        files=len(in_scope),
        groups=len(group_rows),
        leaves=leaf_count,
    )
