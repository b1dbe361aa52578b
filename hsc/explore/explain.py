"""One file followed through the five stages, with its real data, for teaching.

Everything here is read from an index that already exists (the leaves and
vectors as stored, the hierarchy re-planned from its saved parameters) plus
one fresh tree-sitter parse of the file, so the walkthrough shows exactly
what indexing did, not a re-enactment of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from hsc.api import Index, QueryResponse
from hsc.chunk.parse import parser_for
from hsc.hierarchy.groups import HierarchyPlan
from hsc.params import Parameters, with_values

# The outline stops here: a class follows a few hundred nodes, not a whole tree.
MAX_OUTLINE_NODES = 400
MAX_OUTLINE_DEPTH = 12
# A leaf within this share of maximum_chunk_token_length was almost surely cut
# by the limit (a piece of a split node) rather than ending where its node did.
AT_MAXIMUM_SHARE = 0.9
# The leaf map projects at most this many leaves; more would only overdraw.
MAP_SAMPLE = 4000
MAP_SEED = 0  # the sample's seed: the same map on every visit and in every process
# Subspace iteration for the map's two axes (see principal_axes): steps, and the block's width.
AXIS_ITERATIONS = 32
AXIS_BLOCK = 16


@dataclass(frozen=True)
class SyntaxNode:
    """A node of the file's syntax tree, down to the nodes that became leaves."""

    depth: int
    node_type: str
    start_line: int  # 1-based, inclusive
    end_line: int
    start_byte: int
    end_byte: int
    # "leaf": the whole node went into one leaf (``leaf``, its position in the file);
    # "split": its text went into several leaves, listed under it.
    role: str
    leaf: int | None


@dataclass(frozen=True)
class GroupStep:
    """One mid-level group of the file, as stage 4 made it."""

    ordinal: int  # in the hierarchy plan
    first_leaf: int  # position among the file's leaves, inclusive
    last_leaf: int  # inclusive
    start_line: int
    end_line: int
    token_count: int
    needs_summary: bool
    node_id: str | None  # "mid:N" in the saved hierarchy, when it matches
    summary: str | None


@dataclass
class FileWalkthrough:
    path: str
    language: str
    parameters: Parameters
    leaves: list[dict[str, Any]]  # stored leaf rows in order (id "leaf:N", bytes, lines, tokens, text)
    outline: list[SyntaxNode]
    outline_note: str  # why there is no tree, or that it was cut short; "" otherwise
    similarities: np.ndarray  # raw cosine of each adjacent pair of the file's leaves
    smoothed: np.ndarray
    boundaries: np.ndarray  # bool per pair: a topic boundary after leaf i
    groups: list[GroupStep]
    document_summary: str | None
    leaf_rows: tuple[int, int] = (0, 0)  # the file's rows [start, end) in the plan's table
    problems: list[str] = field(default_factory=list)

    @property
    def minimum(self) -> int:
        return self.parameters.minimum_chunk_token_length

    @property
    def maximum(self) -> int:
        return self.parameters.maximum_chunk_token_length

    def leaf_labels(self) -> list[str]:
        """What each leaf is and where: "pkg.mod.func (L12-30)"."""
        return [
            f"{leaf['scope'] or leaf['node_type']} (L{leaf['start_line']}-{leaf['end_line']})"
            for leaf in self.leaves
        ]

    def size_flags(self) -> list[str]:
        """Per leaf: "under minimum", "at maximum", "over maximum" or ""."""
        return [leaf_size_flag(int(leaf["token_count"]), self.parameters) for leaf in self.leaves]


def leaf_size_flag(tokens: int, parameters: Parameters) -> str:
    if tokens > parameters.maximum_chunk_token_length:
        return "over maximum"
    if tokens >= AT_MAXIMUM_SHARE * parameters.maximum_chunk_token_length:
        return "at maximum"
    if tokens < parameters.minimum_chunk_token_length:
        return "under minimum"
    return ""


def hierarchy_plan(index: Index, hierarchy_id: int) -> HierarchyPlan:
    """The saved hierarchy's grouping, re-planned from its parameters (numpy
    only; the same grouping the build stored, with the arrays a chart needs)."""
    hierarchy = index.hierarchy(hierarchy_id)
    params = with_values(Parameters(), hierarchy["parameters"])
    return index.preview(int(hierarchy["repository_id"]), params)


def hierarchy_stamp(index: Index, hierarchy_id: int) -> str:
    """What everything here is computed from, in a few bytes: the hierarchy
    (a rebuild gives a new id or creation time) and its repository's leaves
    (the leaf table's stamp changes whenever any file is indexed again). A
    cache keyed on it is never stale."""
    hierarchy = index.hierarchy(hierarchy_id)
    leaves = index.leaf_stamp(int(hierarchy["repository_id"]))
    return f"{hierarchy_id}@{hierarchy['created_at']}/{leaves}"


def source_stamp(index: Index, hierarchy_id: int, path: str) -> str:
    """The file on disk now (size and modification time; "" when it cannot be
    read): a file changed since indexing shows no syntax tree, and says why."""
    repository = index.store.repository(int(index.hierarchy(hierarchy_id)["repository_id"])) or {}
    try:
        status = (Path(str(repository.get("root", ""))) / path).stat()
    except OSError:
        return ""
    return f"{status.st_size}:{status.st_mtime_ns}"


def syntax_outline(
    source: str, language: str, leaf_ranges: list[tuple[int, int]]
) -> tuple[list[SyntaxNode], str]:
    """The named nodes of the file's syntax tree, from the root down to the
    nodes that went whole into one leaf (their insides are not listed).

    ``leaf_ranges`` are the leaves' half-open byte ranges in order. Returns
    the nodes in document order and a note when the tree was cut short.
    """
    try:
        parser = parser_for(language)
    except Exception:  # noqa: BLE001 - no grammar: the caller says the file was cut as text
        return [], f"no tree-sitter grammar for {language}"
    data = source.encode("utf-8")
    root = parser.parse(data).root_node
    starts = np.array([start for start, _ in leaf_ranges], dtype=np.int64)
    ends = np.array([end for _, end in leaf_ranges], dtype=np.int64)
    nodes: list[SyntaxNode] = []
    note = ""
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        overlapping = np.flatnonzero((starts < node.end_byte) & (ends > node.start_byte))
        if len(overlapping) == 0:
            continue  # whitespace only: in no leaf
        if len(nodes) >= MAX_OUTLINE_NODES:
            note = f"cut short at {MAX_OUTLINE_NODES} nodes"
            break
        whole = len(overlapping) == 1
        nodes.append(
            SyntaxNode(
                depth=depth,
                node_type=node.type,
                start_line=node.start_point[0] + 1,
                end_line=node.end_point[0] + 1,
                start_byte=node.start_byte,
                end_byte=node.end_byte,
                role="leaf" if whole else "split",
                leaf=int(overlapping[0]) if whole else None,
            )
        )
        if not whole and depth < MAX_OUTLINE_DEPTH:
            stack.extend((child, depth + 1) for child in reversed(node.named_children))
        elif not whole:
            note = f"cut short at depth {MAX_OUTLINE_DEPTH}"
    return nodes, note


def read_indexed_source(root: str, path: str, leaves: list[dict[str, Any]]) -> tuple[str | None, str]:
    """The file as indexed, or None and why not (moved, or changed since)."""
    try:
        source = (Path(root) / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return None, f"the file cannot be read now ({error}); showing the stored leaves only"
    data = source.encode("utf-8")
    for leaf in leaves:
        if data[leaf["start_byte"] : leaf["end_byte"]].decode("utf-8", "replace") != leaf["text"]:
            return None, "the file changed on disk since it was indexed; re-index to see its syntax tree"
    return source, ""


def walk_file(
    index: Index, hierarchy_id: int, path: str, plan: HierarchyPlan | None = None
) -> FileWalkthrough:
    """``path`` (relative to its repository) through stages 1 to 4 under the
    saved hierarchy ``hierarchy_id`` (``plan``: its :func:`hierarchy_plan`,
    when the caller has it already)."""
    hierarchy = index.hierarchy(hierarchy_id)
    repository = index.store.repository(int(hierarchy["repository_id"])) or {}
    plan = plan or hierarchy_plan(index, hierarchy_id)
    table = plan.table
    if path not in table.paths:
        raise KeyError(f"{path} has no leaves in this index")
    rows = np.flatnonzero(table.file_index == table.paths.index(path))
    start, end = int(rows[0]), int(rows[-1]) + 1
    stored = index.store.leaves_by_id(table.leaf_ids[start:end].tolist())
    leaves = [stored[int(i)] for i in table.leaf_ids[start:end]]
    for leaf in leaves:
        leaf["id"] = f"leaf:{leaf['id']}"
    language = str(leaves[0].get("language") or "text")

    source, problem = read_indexed_source(str(repository.get("root", "")), path, leaves)
    problems = [problem] if problem else []
    if source is not None and leaves[0]["chunker"] == "ast":
        outline, note = syntax_outline(source, language, [(x["start_byte"], x["end_byte"]) for x in leaves])
    else:
        outline = []
        note = problem or f"cut without a grammar ({leaves[0]['chunker']} chunker): no syntax tree"

    pairs = slice(start, end - 1)
    seg = plan.segmentation
    file_groups = np.flatnonzero((plan.group_starts >= start) & (plan.group_starts < end))
    saved_mids, document_summary = _saved_nodes(index, hierarchy_id, path)
    if len(saved_mids) != len(file_groups):
        problems.append("the saved hierarchy is out of date for this file; rebuild it to see its summaries")
        saved_mids = [{}] * len(file_groups)
    groups = []
    for ordinal, saved in zip(file_groups.tolist(), saved_mids):
        group = plan.group(ordinal)
        groups.append(
            GroupStep(
                ordinal=ordinal,
                first_leaf=group.leaf_start - start,
                last_leaf=group.leaf_end - 1 - start,
                start_line=group.start_line,
                end_line=group.end_line,
                token_count=group.token_count,
                needs_summary=group.needs_summary,
                node_id=f"mid:{saved['id']}" if saved else None,
                summary=saved.get("summary"),
            )
        )
    return FileWalkthrough(
        path=path,
        language=language,
        parameters=plan.parameters,
        leaves=leaves,
        outline=outline,
        outline_note=note,
        similarities=seg.similarities[pairs],
        smoothed=seg.smoothed[pairs],
        boundaries=seg.boundaries[pairs],
        groups=groups,
        document_summary=document_summary,
        leaf_rows=(start, end),
        problems=problems,
    )


def _saved_nodes(index: Index, hierarchy_id: int, path: str) -> tuple[list[dict[str, Any]], str | None]:
    """The file's stored mid nodes (with summaries) and its document summary."""
    top = next((row for row in index.store.nodes(hierarchy_id, "top") if row["path"] == path), None)
    if top is None:
        return [], None
    return index.store.child_nodes(int(top["id"])), top.get("summary")


@dataclass
class QueryTrace:
    """One query's path: what stage 1 opened, what stage 2 picked, and what
    the flat search over every leaf would have said."""

    response: QueryResponse
    group_count: int
    leaf_count: int
    opened: list[str]  # mid node ids stage 1 opened, best first
    # For each flat result: the stage-1 rank its group would need (exact
    # ranking of all groups), and whether stage 1 opened that group.
    flat_group_rank: dict[str, int]
    flat_reached: dict[str, bool]
    group_sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # leaves per group

    @property
    def same_winner(self) -> bool:
        return bool(self.response.results and self.response.flat) and (
            self.response.results[0].leaf_id == self.response.flat[0].leaf_id
        )


def trace_query(
    index: Index, text: str, hierarchy_id: int, plan: HierarchyPlan | None = None, mode: str = "two-stage"
) -> QueryTrace:
    """Run ``text`` through both stages of a saved hierarchy (not recorded in
    the history) and rank every group exactly, to say why a leaf was missed.

    The dense two stages by default (the hierarchy itself); the app traces the
    shipped mode. In the hybrid modes BM25 adds leaves from groups stage 1 did
    not open: a flat result among the staged results counts as reached there."""
    response = index.query(text, hierarchy_id=hierarchy_id, record=False, mode=mode)
    plan = plan or hierarchy_plan(index, hierarchy_id)
    repository_id = int(index.hierarchy(hierarchy_id)["repository_id"])
    group_scores = plan.group_vectors @ index.embed_query(text, repository_id)
    rank_of_group = np.empty(len(group_scores), dtype=np.int64)
    rank_of_group[np.argsort(-group_scores, kind="stable")] = np.arange(1, len(group_scores) + 1)
    row_of_leaf = {int(leaf_id): row for row, leaf_id in enumerate(plan.table.leaf_ids)}
    group_of_leaf = plan.group_of_leaf()
    opened = response.opened_group_ids
    flat_group_rank, flat_reached = {}, {}
    staged = {result.leaf_id for result in response.results}
    for result in response.flat:
        row = row_of_leaf[int(result.leaf_id.split(":")[1])]
        flat_group_rank[result.leaf_id] = int(rank_of_group[group_of_leaf[row]])
        # Hybrid modes: BM25 brings in leaves of groups stage 1 did not open; one it ranked is reached.
        flat_reached[result.leaf_id] = result.parent_id in opened or result.leaf_id in staged
    return QueryTrace(
        response=response,
        group_count=plan.group_count,
        leaf_count=len(plan.table),
        opened=opened,
        flat_group_rank=flat_group_rank,
        flat_reached=flat_reached,
        group_sizes=plan.group_ends - plan.group_starts,
    )


@dataclass(frozen=True)
class LeafMap:
    """Leaf vectors projected on their two main axes (PCA)."""

    rows: np.ndarray  # leaf rows of the plan's table that were projected
    x: np.ndarray
    y: np.ndarray
    group: np.ndarray  # group ordinal of each projected leaf
    explained: tuple[float, float]  # share of the variance on each axis
    sampled: bool
    own_group_similarity: float  # mean cosine of a leaf with its own group's vector
    other_group_similarity: float  # ... with the vector of a random other group
    # The projection itself, so more leaves can be placed on the same map.
    mean: np.ndarray | None = None  # (dim,)
    axes: np.ndarray | None = None  # (dim, 2)
    sample_size: int = 0  # leaves the axes were computed from (the rest were placed on them)
    seed: int = MAP_SEED

    def including(self, plan: HierarchyPlan, keep: np.ndarray) -> LeafMap:
        """This map with the rows ``keep`` placed on it too (same axes, so a
        map computed once per hierarchy can show any file's leaves)."""
        added = np.setdiff1d(np.asarray(keep, dtype=np.int64), self.rows)
        if len(added) == 0 or self.mean is None or self.axes is None:
            return self
        projected = (np.asarray(plan.table.vectors[added], dtype=np.float64) - self.mean) @ self.axes
        rows = np.concatenate([self.rows, added])
        order = np.argsort(rows, kind="stable")
        return replace(
            self,
            rows=rows[order],
            x=np.concatenate([self.x, projected[:, 0]])[order],
            y=np.concatenate([self.y, projected[:, 1]])[order],
            group=np.concatenate([self.group, plan.group_of_leaf()[added]])[order],
        )


def principal_axes(scatter: np.ndarray, count: int = 2, seed: int = 0) -> np.ndarray:
    """The ``count`` leading eigenvectors of a symmetric positive semi-definite
    ``scatter`` matrix (dim x dim), by :data:`AXIS_ITERATIONS` steps of
    subspace iteration on a block of :data:`AXIS_BLOCK` vectors, then Rayleigh-Ritz.

    A full ``eigh`` of a 384 x 384 matrix took 0.3-2.7 s on a shared 2-core
    machine, this 0.07-0.9 s at a load average of 10 (its small BLAS calls wait
    for cores the model's threads hold). On real code vectors (4,000 of pip's leaves)
    its axes match eigh's to |cosine| 1.0000000; on the synthetic 20,000-leaf
    bench, whose top eigenvalues are within 2% of each other, to 0.9999995."""
    dim = scatter.shape[0]
    width = min(dim, max(count, AXIS_BLOCK))
    basis = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, width)))[0]
    for _ in range(AXIS_ITERATIONS):
        basis = np.linalg.qr(scatter @ basis)[0]
    values, vectors = np.linalg.eigh(basis.T @ scatter @ basis)
    return basis @ vectors[:, ::-1][:, :count]


def leaf_map(plan: HierarchyPlan, keep: np.ndarray | None = None, seed: int = MAP_SEED) -> LeafMap:
    """A 2-D map of the leaves (at most :data:`MAP_SAMPLE`, a random sample
    drawn with ``seed`` when there are more), plus the rows in ``keep``.

    The axes are those of the sample alone, so the map of a hierarchy is the
    same whichever file is highlighted on it (see :meth:`LeafMap.including`)."""
    vectors = plan.table.vectors
    n = len(vectors)
    generator = np.random.default_rng(seed)
    sampled = n > MAP_SAMPLE
    rows = np.sort(generator.choice(n, MAP_SAMPLE, replace=False)) if sampled else np.arange(n)
    chosen = np.asarray(vectors[rows], dtype=np.float64)
    mean = chosen.mean(axis=0)
    centred = chosen - mean
    scatter = centred.T @ centred
    if min(scatter.shape[0], len(rows)) >= 2:
        axes = principal_axes(scatter, 2, seed)
    else:
        axes = np.zeros((scatter.shape[0], 2))
    projected = centred @ axes
    # The variance along an axis is its Rayleigh quotient; the total is the trace.
    total = float(np.trace(scatter)) or 1.0
    along = np.einsum("ij,ik,kj->j", axes, scatter, axes)
    explained = (float(along[0] / total), float(along[1] / total))

    groups = plan.group_of_leaf()[rows]
    own = np.einsum("ij,ij->i", chosen, plan.group_vectors[groups])
    if plan.group_count > 1:
        # A random group other than the leaf's own: shift by 1..count-1.
        others = (groups + generator.integers(1, plan.group_count, len(rows))) % plan.group_count
        other = float(np.mean(np.einsum("ij,ij->i", chosen, plan.group_vectors[others])))
    else:
        other = float("nan")
    mapped = LeafMap(
        rows=rows,
        x=projected[:, 0],
        y=projected[:, 1],
        group=groups,
        explained=explained,
        sampled=sampled,
        own_group_similarity=float(np.mean(own)),
        other_group_similarity=other,
        mean=mean,
        axes=axes,
        sample_size=len(rows),
        seed=seed,
    )
    return mapped if keep is None else mapped.including(plan, keep)


def suggest_file(plan: HierarchyPlan) -> str | None:
    """A file worth following in class: the one with the most topic
    boundaries among files of 5 to 60 leaves (long enough to have topics,
    short enough to read), else the file with the most leaves."""
    table = plan.table
    if not len(table):
        return None
    leaves_per_file = np.bincount(table.file_index, minlength=len(table.paths))
    topic = plan.segmentation.boundaries & ~np.isnan(plan.segmentation.similarities)
    boundaries_per_file = np.bincount(table.file_index[:-1][topic], minlength=len(table.paths))
    readable = (leaves_per_file >= 5) & (leaves_per_file <= 60)
    if readable.any():
        score = np.where(readable, boundaries_per_file * 1000 + leaves_per_file, -1)
        return table.paths[int(np.argmax(score))]
    return table.paths[int(np.argmax(leaves_per_file))]


def suggest_query(walk: FileWalkthrough) -> str:
    """A query a person might ask of this file: the words of the name of its
    longest definition ("apply_discount" -> "apply discount")."""
    named = [leaf for leaf in walk.leaves if leaf["scope"]]
    if not named:
        return "what does this file do"
    longest = max(named, key=lambda leaf: int(leaf["token_count"]))
    name = str(longest["scope"]).rsplit(".", 1)[-1]
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").split()
    return " ".join(words).lower() or "what does this file do"
