"""The structural hierarchy as a tree to draw: folder → file → definition container → group → leaf.

A container is a top-level definition of a file that holds other definitions (a class and its
methods, an impl or trait block, a namespace, a module object), read from the leaves' scopes by
:func:`hsc.hierarchy.boundaries.container_keys`, the same rule ``boundary_rule = "structure"``
cuts at; its kind comes from the stored definitions. The groups are those of a
:class:`~hsc.hierarchy.groups.HierarchyPlan` made from the stored vectors with either rule, so the
two can be drawn side by side without indexing again. A group whose leaves lie in more than one
container (or in a container and the file's top level) has no single container: it hangs under
its file and is counted as crossing. Pure functions, no plotting and no Streamlit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hsc.explore.views import MAX_TREE_NODES, TreeNode, _inside, folders_of, single_entry
from hsc.hierarchy.boundaries import container_keys
from hsc.hierarchy.groups import HierarchyPlan
from hsc.model import Definition

LEVELS = ("folder", "file", "definition", "group", "leaf")
# The icicle draws every node of the levels it shows as SVG: on flask (3,464 leaves) a 1,000-node
# icicle six levels deep made the Hierarchy page take 4x as long to settle (bench app). This many
# nodes, four levels at a time, keeps it in step with the sunburst above it.
STRUCTURE_NODES = 400
STRUCTURE_DEPTH = 4


@dataclass(frozen=True)
class StructureView:
    """The nodes to draw (parents before children) and what the whole scope holds."""

    nodes: list[TreeNode]
    deepest: str  # the deepest kind drawn: "file", "definition", "group" or "leaf"
    folders: int
    files: int
    containers: int
    groups: int
    crossing: int  # groups whose leaves lie in more than one container (or one and the top level)
    leaves: int


@dataclass(frozen=True)
class RuleCount:
    """How one boundary rule groups the leaves of a scope."""

    rule: str
    groups: int
    crossing: int


def container_kind(definitions: Sequence[Definition], name: str) -> str:
    """The kind of the file's definition ``name`` is the container of (class, impl, namespace...):
    the outermost definition whose scope ends in it; "definition" when none is stored."""
    found = [d for d in definitions if d.kind != "file" and (d.scope == name or d.scope.endswith("." + name))]
    return min(found, key=lambda d: d.scope.count(".")).kind if found else "definition"


def group_container(keys: Sequence[str | None]) -> tuple[str | None, bool]:
    """The one container a group's leaves share (None: the file itself), and whether they cross."""
    distinct = set(keys)
    if len(distinct) == 1:
        return next(iter(distinct)), False
    return None, True


def rule_count(plan: HierarchyPlan, scope: str = "", leave_out: Sequence[str] = ()) -> RuleCount:
    """Groups of ``plan`` inside ``scope`` (less those of ``leave_out``'s paths) and how many of
    them cross a container edge."""
    table = plan.table
    keys = container_keys(table.scopes, table.file_index)
    skipped = set(leave_out)
    groups = crossing = 0
    for start, end in zip(plan.group_starts.tolist(), plan.group_ends.tolist()):
        path = table.paths[int(table.file_index[start])]
        if path in skipped or not _inside(path, scope):
            continue
        groups += 1
        crossing += group_container(keys[start:end])[1]
    return RuleCount(plan.parameters.boundary_rule, groups, crossing)


def structural_tree(
    repository_name: str,
    plan: HierarchyPlan,
    definitions: dict[str, list[Definition]],
    scope: str = "",
    max_nodes: int = MAX_TREE_NODES,
    leave_out: Sequence[str] = (),
) -> StructureView:
    """Repository → folders → files → containers → groups → leaves of ``plan``, for the folder or
    file ``scope`` ("" for all of it), sized by tokens.

    Levels are added from the top while the total stays within ``max_nodes``, as
    :func:`hsc.explore.views.hierarchy_tree` does. ``definitions``: path -> the file's stored
    definitions (for the containers' kinds); ``leave_out``: paths not drawn (data files).
    """
    table = plan.table
    skipped = set(leave_out)
    paths = [p for p in table.paths if p not in skipped]
    scope = single_entry(scope, paths)
    keys = container_keys(table.scopes, table.file_index)
    tokens = table.token_counts.astype(np.int64)

    file_rows: dict[int, list[int]] = defaultdict(list)  # file number -> its groups' ordinals
    for ordinal, start in enumerate(plan.group_starts.tolist()):
        number = int(table.file_index[start])
        path = table.paths[number]
        if path not in skipped and _inside(path, scope):
            file_rows[number].append(ordinal)
    files = sorted(file_rows, key=lambda number: table.paths[number])
    folders = [f for f in folders_of([table.paths[n] for n in files]) if _inside(f, scope) and f != scope]

    # Each group's container (None: under its file) and each file's containers, in line order.
    placed: dict[int, str | None] = {}
    containers: dict[int, list[str]] = {}
    crossing = 0
    for number in files:
        seen: dict[str, None] = {}
        for ordinal in file_rows[number]:
            start, end = int(plan.group_starts[ordinal]), int(plan.group_ends[ordinal])
            seen.update((k, None) for k in keys[start:end] if k is not None)
            placed[ordinal], crosses = group_container(keys[start:end])
            crossing += crosses
        containers[number] = list(seen)
    group_count = len(placed)
    container_count = sum(len(c) for c in containers.values())
    leaf_count = sum(int(plan.group_ends[o] - plan.group_starts[o]) for o in placed)

    base = 1 + len(folders) + len(files)
    with_containers = base + container_count <= max_nodes
    with_groups = with_containers and base + container_count + group_count <= max_nodes
    with_leaves = with_groups and base + container_count + group_count + leaf_count <= max_nodes

    single_file = len(files) == 1 and table.paths[files[0]] == scope
    root_id = "repository" if not scope else "folder:" + scope
    nodes: list[TreeNode] = []

    def parent_folder(path: str) -> str:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        return "folder:" + folder if folder and folder != scope and _inside(folder, scope) else root_id

    totals: dict[str, int] = defaultdict(int)
    below: list[TreeNode] = []
    for number in files:
        path = table.paths[number]
        file_id = "file:" + path
        container_tokens: dict[str, int] = defaultdict(int)
        for ordinal in file_rows[number]:
            start, end = int(plan.group_starts[ordinal]), int(plan.group_ends[ordinal])
            group_tokens = int(tokens[start:end].sum())
            key = placed[ordinal]
            parent = f"def:{path}:{key}" if key is not None and with_containers else file_id
            container_tokens[parent] += group_tokens
            totals[file_id] += group_tokens
            if not with_groups:
                continue
            group_id = f"group:{number}:{ordinal}"
            lines = f"L{int(table.start_lines[start])}–{int(plan.group_end_lines[ordinal])}"
            why = " · crosses a container edge" if key is None and len(set(keys[start:end])) > 1 else ""
            below.append(
                TreeNode(group_id, lines, parent, group_tokens, "group", f"group · {path} {lines}{why}")
            )
            if with_leaves:
                for row in range(start, end):
                    scope_name = table.scopes[row].rsplit(".", 1)[-1]
                    label = f"{scope_name} L{int(table.start_lines[row])}–{int(table.end_lines[row])}"
                    below.append(
                        TreeNode(
                            f"leaf:{int(table.leaf_ids[row])}",
                            label,
                            group_id,
                            int(tokens[row]),
                            "leaf",
                            f"leaf · {table.scopes[row]}",
                        )
                    )
        if with_containers:
            kinds = definitions.get(path, [])
            for key in containers[number]:
                node_id = f"def:{path}:{key}"
                kind = container_kind(kinds, key)
                label = f"{kind} {key}"
                held = container_tokens[node_id]
                nodes.append(TreeNode(node_id, label, file_id, held, "definition", label))
    file_nodes = []
    for number in files:
        path = table.paths[number]
        parent = "" if single_file else parent_folder(path)
        totals[parent] += totals["file:" + path]
        file_nodes.append(
            TreeNode(
                "file:" + path,
                path.rsplit("/", 1)[-1],
                parent,
                totals["file:" + path],
                "file",
                f"file · {path} · {len(containers[number])} containers, {len(file_rows[number])} groups",
            )
        )
    # Folders deepest first, so each one's total is complete before its parent adds it.
    folder_nodes = []
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        node_id = "folder:" + folder
        totals[parent_folder(folder)] += totals[node_id]
        name = folder.rsplit("/", 1)[-1] + "/"
        folder_nodes.append(TreeNode(node_id, name, parent_folder(folder), totals[node_id], "folder", folder))
    root: list[TreeNode] = []
    if not single_file:
        kind = "folder" if scope else "repository"
        label = scope or repository_name
        root = [TreeNode(root_id, label, "", totals[root_id], kind, f"{kind} · {label}")]
    drawn = (with_leaves, with_groups, with_containers, True)
    deepest = ("leaf", "group", "definition", "file")[drawn.index(True)]
    return StructureView(
        nodes=root + folder_nodes[::-1] + file_nodes + nodes + below,
        deepest=deepest,
        folders=len(folders),
        files=len(files),
        containers=container_count,
        groups=group_count,
        crossing=crossing,
        leaves=leaf_count,
    )
