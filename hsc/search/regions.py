"""Answers above the leaves: ranked regions (folders, files, definitions, groups) and ranked files.

A repository's leaves are in document order (files sorted by path, leaves by position), so every
region is a contiguous run of leaf rows: a folder's files, a file's leaves, the leaves a
definition's lines overlap, a group's leaves. Each region gets one pooled vector, made once
when its table is built (the re-normalised mean of its leaves; no query pools anything) and kept
in a side file for the database's state, so a later process reads it instead of pooling again.

A query's regions are scored from its leaf ranking: the best ``region_candidates`` leaves and
their scores (hybrid: cosine fused with BM25). A region holding one of them scores
``best_share`` x its best leaf's score + (1 - ``best_share``) x its pooled vector's cosine, so a
level wins where its own vector fits the question better than a single leaf does. Files are
ranked the same way, every file's pooled vector scored (files are few beside leaves). A Go or Rust
type may count its members declared outside its lines as its own (hsc.search.region_members). Asked
at the type level (``region_levels = type``) the regions are the types alone, a nested one too. The
share and the rest were chosen with ``bench quality --query-kind class|module|docstring``
(docs/hierarchy.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from hsc.chunk.node_types import TYPE_KINDS
from hsc.model import Definition, common_scope
from hsc.params import REGION_NESTING, Parameters
from hsc.search.lexical import fuse
from hsc.search.region_members import (
    MEMBER_KINDS,
    below_lenders,
    declared_members,
    pool_members,
    with_members,
)
from hsc.search.two_stage import top_k

LEVELS = ("folder", "file", "definition", "group")
FOLDER, FILE, DEFINITION, GROUP = range(4)
# Definitions that are not regions of their own: the file's description (the file is one).
NOT_REGIONS = frozenset({"file"})
# With ``region_outlines = evidence``, a listed definition gains this times its outline's cosine as
# a share of the best listed definition's (docs/hierarchy.md, "Outline vectors": 0.05 against
# 0.075 and 0.1, which cost module questions more).
OUTLINE_WEIGHT = 0.05
# With ``region_names = evidence``, a listed region gains this times the share of its own name's
# words the query matches (hsc.search.region_names; docs/hierarchy.md, "Name evidence": 0.15 and
# 0.2 for definitions gained class questions more and cost function questions their container).
NAME_WEIGHT = 0.1


# The levels a caller may ask a query's regions at: "any" (files and definitions compete by score,
# for a question whose kind nobody knows), "definition" (definitions alone, for a question about a
# definition as a whole) or "type" (types alone, nested ones too, for a question about a class: its
# class came in the first ten more often; docs/hierarchy.md, "Asking at one level", "The type level").
ANSWER_LEVELS = ("any", "definition", "type")
# The definitions the "type" level lists: types, not the blocks that add members to one (a Rust
# impl block, a Swift extension), which lend their type their leaves instead (region_members).
ANSWER_TYPE_KINDS = TYPE_KINDS - MEMBER_KINDS


def level_overrides(level: str) -> dict[str, str]:
    """The query parameters that draw a query's regions from ``level`` (one of ANSWER_LEVELS)."""
    if level not in ANSWER_LEVELS:
        raise ValueError(f"level must be one of {', '.join(ANSWER_LEVELS)}, not {level!r}")
    return {} if level == "any" else {"region_levels": level}


@dataclass(frozen=True)
class Region:
    """One ranked answer above the leaves (a folder's lines are None)."""

    level: str  # one of LEVELS
    path: str
    start_line: int | None
    end_line: int | None
    name: str
    score: float

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "name": self.name,
            "score": round(self.score, 4),
        }


@dataclass(frozen=True)
class RegionTable:
    """Every region of one leaf table as parallel arrays; ``lo``..``hi`` (exclusive) its leaf rows."""

    levels: np.ndarray  # int8, index into LEVELS
    paths: list[str]
    names: list[str]
    start_lines: np.ndarray  # int64 (0 for a folder)
    end_lines: np.ndarray  # int64 (0 for a folder)
    lo: np.ndarray  # int64
    hi: np.ndarray  # int64
    vectors: np.ndarray  # float32 (regions, dim), L2-normalised
    outermost: np.ndarray  # bool: a definition inside no other definition of its file (others: True)
    # int64: the row of the type declaration whose members this region holds, declared outside the
    # type's lines in its file (a Go method of a struct, a Rust impl block of a type); -1 for none.
    extends: np.ndarray
    # float32 (len(owners), dim): each such type's vector pooled over its own leaves and its
    # members', L2-normalised; row i is the type ``owners[i]``'s.
    member_vectors: np.ndarray
    kinds: np.ndarray  # str: a definition's kind (hsc.model.Definition.kind), "" for the other levels

    def __len__(self) -> int:
        return len(self.levels)

    @cached_property
    def leaf_regions(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, regions): the regions holding leaf row r are ``regions[indptr[r]:indptr[r + 1]]``."""
        leaves = int(self.hi.max()) if len(self) else 0
        lengths = self.hi - self.lo
        region_of = np.repeat(np.arange(len(self), dtype=np.int64), lengths)
        row_of = np.repeat(self.lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        order = np.argsort(row_of, kind="stable")
        indptr = np.searchsorted(row_of[order], np.arange(leaves + 1))
        return indptr.astype(np.int64), region_of[order]

    @cached_property
    def owners(self) -> np.ndarray:
        """The rows of the types some region holds members of (:attr:`extends`), ascending."""
        return np.unique(self.extends[self.extends >= 0])

    @cached_property
    def types(self) -> np.ndarray:
        """Whether each region is a definition of :data:`ANSWER_TYPE_KINDS` (the type level's)."""
        return np.isin(self.kinds, list(ANSWER_TYPE_KINDS))

    @cached_property
    def holds_others(self) -> np.ndarray:
        """Definitions that hold another definition of their file (a class, a nested class): a
        file's definitions come in line order, outer before inner, so one holds others exactly
        when the next definition of its file lies inside it."""
        out = np.zeros(len(self), dtype=bool)
        rows = np.flatnonzero(self.levels == DEFINITION)
        if len(rows) < 2:
            return out
        a, b = rows[:-1], rows[1:]
        same_file = np.array([self.paths[i] == self.paths[j] for i, j in zip(a.tolist(), b.tolist())])
        inside = (self.start_lines[a] <= self.start_lines[b]) & (self.end_lines[b] <= self.end_lines[a])
        same_lines = (self.start_lines[a] == self.start_lines[b]) & (self.end_lines[a] == self.end_lines[b])
        out[a[same_file & inside & ~same_lines]] = True
        return out

    @cached_property
    def files(self) -> np.ndarray:
        """The rows of the file regions, in path order."""
        return np.flatnonzero(self.levels == FILE)

    @cached_property
    def file_vectors(self) -> np.ndarray:
        """The file regions' vectors, one contiguous block: every query scores them all."""
        return np.ascontiguousarray(self.vectors[self.files])

    def region(self, row: int, score: float) -> Region:
        folder = self.levels[row] == FOLDER
        return Region(
            LEVELS[int(self.levels[row])],
            self.paths[row],
            None if folder else int(self.start_lines[row]),
            None if folder else int(self.end_lines[row]),
            self.names[row],
            float(score),
        )


# The columns a region table is saved as beside its vectors (hsc.store.sidecar), in field order.
COLUMNS = (
    "levels",
    "paths",
    "names",
    "start_lines",
    "end_lines",
    "lo",
    "hi",
    "outermost",
    "extends",
    "kinds",
)


def region_arrays(regions: RegionTable) -> dict[str, np.ndarray]:
    """A region table's columns and its types' member vectors (without the regions' vectors) as
    arrays a side file can hold; the member vectors are its one two-dimensional array."""
    columns = {
        name: np.array(getattr(regions, name), dtype=str)
        if name in ("paths", "names", "kinds")
        else getattr(regions, name)
        for name in COLUMNS
    }
    return {**columns, "member_vectors": regions.member_vectors}


def regions_from_arrays(arrays: dict[str, np.ndarray], vectors: np.ndarray) -> RegionTable | None:
    """The region table :func:`region_arrays` saved, with its (possibly memory-mapped) vectors; None
    for arrays an older hsc saved without all of them (the table is then made again)."""
    if not {*COLUMNS, "member_vectors"} <= arrays.keys():
        return None
    columns = {name: arrays[name] for name in COLUMNS}
    columns["paths"] = columns["paths"].tolist()
    columns["names"] = columns["names"].tolist()
    return RegionTable(**columns, vectors=vectors, member_vectors=arrays["member_vectors"])


def _runs(starts: list[int], ends: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def run_membership(lo: np.ndarray, hi: np.ndarray, rows: int) -> Any:
    """A sparse runs x ``rows`` matrix of ones: run ``i`` holds rows ``lo[i]``..``hi[i]``
    (exclusive); runs may nest or overlap. Its product with per-row data sums each run's rows."""
    from scipy import sparse

    lengths = hi - lo
    region_of = np.repeat(np.arange(len(lo)), lengths)
    row_of = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    return sparse.csr_matrix(
        (np.ones(len(row_of), dtype=np.float32), (region_of, row_of)), shape=(len(lo), rows)
    )


def pool_runs(vectors: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The re-normalised mean of the rows ``lo[i]``..``hi[i]`` (exclusive) of ``vectors``, for runs
    that may nest or overlap: one sparse product, as :func:`hsc.hierarchy.groups.mean_pool`."""
    dim = vectors.shape[1] if vectors.ndim == 2 else 1
    if not len(lo):
        return np.zeros((0, dim), dtype=np.float32)
    sums = np.asarray(run_membership(lo, hi, len(vectors)) @ vectors, dtype=np.float32)
    return sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)


def build_regions(
    table: Any,
    definitions: dict[str, list[Definition]],
    group_starts: np.ndarray | None = None,
    group_ends: np.ndarray | None = None,
) -> RegionTable:
    """The regions of a :class:`hsc.hierarchy.groups.LeafTable`: its folders, files, the stored
    definitions of its files (by path, as :meth:`hsc.store.Store.definitions` gives them) and,
    when given, the hierarchy's groups (leaf-row runs)."""
    levels: list[int] = []
    paths: list[str] = []
    names: list[str] = []
    kinds: list[str] = []  # a definition's kind ("" for the other levels), to link members to their type
    first: list[int] = []
    last: list[int] = []
    lo: list[int] = []
    hi: list[int] = []

    def add(
        level: int, path: str, name: str, lines: tuple[int, int], rows: tuple[int, int], kind: str = ""
    ) -> None:
        levels.append(level)
        paths.append(path)
        names.append(name)
        kinds.append(kind)
        first.append(lines[0])
        last.append(lines[1])
        lo.append(rows[0])
        hi.append(rows[1])

    n = len(table)
    file_index = np.asarray(table.file_index)
    file_starts = np.searchsorted(file_index, np.arange(len(table.paths)), side="left")
    file_ends = np.searchsorted(file_index, np.arange(len(table.paths)), side="right")
    folders: dict[str, list[int]] = {}
    for number, path in enumerate(table.paths):
        start, end = int(file_starts[number]), int(file_ends[number])
        if start == end:
            continue
        starts, ends = table.start_lines[start:end], table.end_lines[start:end]
        add(FILE, path, path.rsplit("/", 1)[-1], (1, int(ends.max())), (start, end))
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            span = folders.setdefault("/".join(parts[:depth]), [start, end])
            span[0], span[1] = min(span[0], start), max(span[1], end)
        for definition in definitions.get(path, []):
            if definition.kind in NOT_REGIONS:
                continue
            # The leaves the definition's lines overlap (a definition inside one leaf: that leaf).
            a = start + int(np.searchsorted(ends, definition.start_line, side="left"))
            b = start + int(np.searchsorted(starts, definition.end_line, side="right"))
            if a < b:
                lines = (definition.start_line, definition.end_line)
                add(DEFINITION, path, definition.scope, lines, (a, b), definition.kind)
    for folder, (start, end) in sorted(folders.items()):
        add(FOLDER, folder, folder + "/", (0, 0), (start, end))
    if group_starts is not None and group_ends is not None:
        for start, end in zip(group_starts.tolist(), group_ends.tolist()):
            path = table.paths[int(file_index[start])]
            lines = (int(table.start_lines[start]), int(table.end_lines[start:end].max()))
            add(GROUP, path, common_scope(table.scopes[start:end]), lines, (start, end))
    lo_array, hi_array = _runs(lo, hi)
    outermost = np.ones(len(levels), dtype=bool)
    last_outer: tuple[str, int] = ("", -1)  # path and last line of the latest outermost definition
    for region, level in enumerate(levels):
        if level == DEFINITION:  # a file's definitions come in line order, outer before inner
            if paths[region] == last_outer[0] and last[region] <= last_outer[1]:
                outermost[region] = False
            else:
                last_outer = (paths[region], last[region])
    outer = [r for r, level in enumerate(levels) if level == DEFINITION and outermost[r]]
    extends = declared_members(paths, names, kinds, first, last, outer, len(levels))
    vectors = pool_runs(table.vectors, lo_array, hi_array) if n else np.zeros((0, 1), np.float32)
    member_vectors = pool_members(table.vectors, lo_array, hi_array, extends, vectors.shape[1])
    return RegionTable(
        np.asarray(levels, dtype=np.int8),
        paths,
        names,
        np.asarray(first, dtype=np.int64),
        np.asarray(last, dtype=np.int64),
        lo_array,
        hi_array,
        vectors,
        outermost,
        extends,
        member_vectors,
        np.asarray(kinds, dtype=str),
    )


def _best_per_region(regions: RegionTable, rows: np.ndarray, scores: np.ndarray) -> dict[int, float]:
    """Region -> the best score among the candidate leaves ``rows`` it holds."""
    indptr, held = regions.leaf_regions
    known = rows < len(indptr) - 1
    rows, scores = rows[known], scores[known]
    starts, counts = indptr[rows], indptr[rows + 1] - indptr[rows]
    if not counts.sum():
        return {}
    run_starts = np.cumsum(counts) - counts
    picked = np.repeat(starts - run_starts, counts) + np.arange(int(counts.sum()))
    region_ids, pair_scores = held[picked], np.repeat(scores, counts)
    order = np.lexsort((-pair_scores, region_ids))
    region_ids, pair_scores = region_ids[order], pair_scores[order]
    keep = np.concatenate(([True], region_ids[1:] != region_ids[:-1]))
    return dict(zip(region_ids[keep].tolist(), pair_scores[keep].tolist()))


def _holds(regions: RegionTable, a: int, b: int) -> bool:
    """Whether one of the two regions holds the other (same leaves' run inside the other's)."""
    if regions.levels[a] != FOLDER and regions.levels[b] != FOLDER and regions.paths[a] != regions.paths[b]:
        return False
    a_in_b = regions.lo[b] <= regions.lo[a] and regions.hi[a] <= regions.hi[b]
    b_in_a = regions.lo[a] <= regions.lo[b] and regions.hi[b] <= regions.hi[a]
    return bool(a_in_b or b_in_a)


def _with_lexical(
    regions: RegionTable, ids: np.ndarray, fused: np.ndarray, lexical: np.ndarray, weight: float, fusion: str
) -> np.ndarray:
    """``fused`` plus ``weight`` x each region's lexical score as a share of the best among the
    listed regions of its level (a file's text holds its classes' words, so files are measured
    against files); by reciprocal rank with ``fusion`` "rrf"."""
    if fusion == "rrf":
        return fuse(fused, lexical, weight, fusion)
    return fused + weight * _level_shares(regions, ids, lexical)


def _level_shares(regions: RegionTable, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each of ``values`` (one per region of ``ids``) as a share of the best of its level's."""
    share = np.zeros(len(ids))
    for level in np.unique(regions.levels[ids]):
        mask = regions.levels[ids] == level
        top = float(values[mask].max())
        if top > 0:
            share[mask] = values[mask] / top
    return share


def _once_per_name(
    regions: RegionTable, ids: np.ndarray, fused: np.ndarray, evidence: np.ndarray, members: bool = False
) -> np.ndarray:
    """``evidence`` kept only for the best-scored of the listed regions that share a file and a name
    (a Rust type and its ``impl`` blocks, one name several times): its name then lifts one of them,
    not every slot of the list; with ``members``, the type's declaration before its impl blocks."""
    kept = np.zeros(len(ids))
    seen: set[tuple[str, str]] = set()
    member = regions.extends[ids] >= 0 if members else np.zeros(len(ids), dtype=bool)
    for place in np.lexsort((-fused, member)).tolist():
        key = (regions.paths[int(ids[place])], regions.names[int(ids[place])])
        if key not in seen:
            seen.add(key)
            kept[place] = evidence[place]
    return kept


def rank_regions(
    regions: RegionTable,
    rows: np.ndarray,
    scores: np.ndarray,
    query: np.ndarray,
    count: int,
    best_share: float,
    nesting: str = "separate",
    levels: tuple[str, ...] = LEVELS,
    outermost_only: bool = False,
    file_best_share: float | None = None,
    lexical: np.ndarray | None = None,
    lexical_weight: float = 0.0,
    fusion: str = "sum",
    extra: np.ndarray | None = None,
    cosines: Callable[[np.ndarray], np.ndarray] | None = None,
    nested_containers: bool = False,
    outline_evidence: Callable[[np.ndarray], np.ndarray] | None = None,
    outline_weight: float = 0.0,
    name_evidence: Callable[[np.ndarray], np.ndarray] | None = None,
    name_weight: float = 0.0,
    members: bool = False,
    types_only: bool = False,
) -> list[Region]:
    """The ``count`` best regions of ``levels`` holding one of the candidate leaves ``rows``
    (scored ``scores``, best first), each scored by ``best_share`` x its best candidate's score +
    the rest x its pooled vector's cosine with ``query``; ``nesting`` as :data:`REGION_NESTING`;
    ``outermost_only``: definitions inside another definition are left out (but for those that
    hold others, with ``nested_containers``: a nested class). Of equal scores the
    region with more leaves comes first (a method's best leaf is its class's too).
    ``file_best_share``: the share for files (default: ``best_share``). ``lexical``: a score per
    region (class-level lexical evidence, hsc.search.region_terms) added as ``lexical_weight`` x
    its share of the listed regions' best (``fusion`` "sum") or by reciprocal rank ("rrf");
    ``extra``: regions listed though no candidate leaf is theirs (their best leaf counted as the
    weakest candidate's score, which it cannot beat). ``cosines``: region rows -> their vector
    scores, in place of the pooled vectors' cosines (outline vectors, hsc.search.region_outlines).
    ``outline_evidence``: region rows -> their outline's cosine (0 without one), added as
    ``outline_weight`` x its share of the best among the listed regions of its level.
    ``name_evidence``: region rows -> the share of each one's own name the query matches
    (hsc.search.region_names), added as ``name_weight`` x that share to the best-scored region of
    each name in a file. ``members``: a type declaration's best candidate may be one of its members
    declared outside its lines, its vector is pooled over them too, and it comes right after the
    member it took its best candidate from, never before it (hsc.search.region_members).
    ``types_only``: the definitions listed are every type (:data:`ANSWER_TYPE_KINDS`), one nested
    in a function or in another type too (``outermost_only`` and ``nested_containers`` do not apply)."""
    if nesting not in REGION_NESTING:
        raise ValueError(f"region nesting must be one of {', '.join(REGION_NESTING)}, got {nesting!r}")
    best = _best_per_region(regions, np.asarray(rows, dtype=np.int64), np.asarray(scores, np.float64))
    if extra is not None and len(scores):
        floor = float(np.min(scores))
        best = {**{int(r): floor for r in extra}, **best}
    lenders: dict[int, int] = {}
    if members:
        best, lenders = with_members(regions.extends, best)
    wanted = {LEVELS.index(level) for level in levels}
    if types_only:
        listed = regions.types
    else:
        listed = regions.outermost | (not outermost_only)
        if nested_containers:
            listed = listed | regions.holds_others
    ids = np.array([r for r in best if int(regions.levels[r]) in wanted and listed[r]], dtype=np.int64)
    if not len(ids):
        return []
    pooled = cosines(ids) if cosines else regions.vectors[ids] @ query.astype(regions.vectors.dtype)
    if members and cosines is None and len(regions.owners):
        places = np.minimum(np.searchsorted(regions.owners, ids), len(regions.owners) - 1)
        owner = regions.owners[places] == ids
        pooled[owner] = regions.member_vectors[places[owner]] @ query.astype(np.float32)
    share = np.full(len(ids), best_share)
    if file_best_share is not None:
        share[regions.levels[ids] == FILE] = file_best_share
    fused = share * np.array([best[int(r)] for r in ids]) + (1 - share) * pooled
    if lexical is not None and lexical_weight > 0:
        fused = _with_lexical(
            regions, ids, fused, np.asarray(lexical, dtype=np.float64)[ids], lexical_weight, fusion
        )
    if outline_evidence is not None and outline_weight > 0:
        fused = fused + outline_weight * _level_shares(regions, ids, outline_evidence(ids))
    if name_evidence is not None and name_weight > 0:
        fused = fused + name_weight * _once_per_name(regions, ids, fused, name_evidence(ids), members)
    if lenders:
        fused = below_lenders(ids, fused, lenders)
    order = np.lexsort((ids, regions.lo[ids] - regions.hi[ids], -np.round(fused, 6)))
    chosen: list[int] = []
    out: list[Region] = []
    for place in order.tolist():
        region = int(ids[place])
        if nesting == "separate" and any(_holds(regions, region, other) for other in chosen):
            continue
        chosen.append(region)
        out.append(regions.region(region, float(fused[place])))
        if len(out) >= count:
            break
    return out


def rank_files(
    regions: RegionTable,
    rows: np.ndarray,
    scores: np.ndarray,
    query: np.ndarray,
    count: int,
    best_share: float,
    cosines: Callable[[np.ndarray], np.ndarray] | None = None,
    outline_evidence: Callable[[np.ndarray], np.ndarray] | None = None,
    outline_weight: float = 0.0,
) -> list[Region]:
    """Every file ranked by ``best_share`` x its best candidate leaf's score (0 without one) + the
    rest x its pooled vector's cosine with ``query`` (``cosines``: as :func:`rank_regions`)."""
    files = regions.files
    if not len(files):
        return []
    best = _best_per_region(regions, np.asarray(rows, dtype=np.int64), np.asarray(scores, np.float64))
    held = np.fromiter(best, dtype=np.int64, count=len(best))
    leaf_scores = np.fromiter(best.values(), dtype=np.float64, count=len(best))
    places = np.searchsorted(files, held)
    is_file = (places < len(files)) & (files[np.minimum(places, len(files) - 1)] == held)
    leaf_part = np.zeros(len(files))
    leaf_part[places[is_file]] = leaf_scores[is_file]
    pooled = cosines(files) if cosines else regions.file_vectors @ query.astype(regions.file_vectors.dtype)
    fused = best_share * leaf_part + (1 - best_share) * pooled
    order = top_k(fused, count)
    return [regions.region(int(files[i]), float(fused[i])) for i in order]


def answer_regions(
    regions: RegionTable,
    rows: np.ndarray,
    scores: np.ndarray,
    query: np.ndarray,
    params: Parameters,
    lexical: np.ndarray | None = None,
    outline_evidence: Callable[[np.ndarray], np.ndarray] | None = None,
    name_evidence: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[list[Region], list[Region]]:
    """A query's regions and files as :meth:`hsc.api.Index.query` gives them with ``params``: the
    regions of ``region_levels`` its candidate leaves fall in, and every file ranked. When the
    candidates give fewer than ``region_count`` regions (a small index, a narrow stage 1), the best
    files not yet listed fill the list, so it is as long as the index allows.
    ``lexical``: each region's lexical evidence (hsc.search.region_terms.region_lexical), added
    with ``region_lexical_weight`` when ``region_lexical`` is not "off". ``outline_evidence``:
    region rows -> their outline's cosine (hsc.search.region_outlines.RegionOutlines.evidence),
    added with :data:`OUTLINE_WEIGHT` (None: an index without outlines, scored as before).
    ``name_evidence``: region rows -> the share of their own name the query matches
    (hsc.search.region_names.name_evidence), added with :data:`NAME_WEIGHT` (None: none)."""
    files = rank_files(regions, rows, scores, query, params.region_count, params.file_best_share)
    types_only = params.region_levels == "type"
    found = rank_regions(
        regions,
        rows,
        scores,
        query,
        params.region_count,
        params.region_best_share,
        params.region_nesting,
        ("definition",) if types_only else tuple(params.region_levels.split("+")),
        params.region_definitions != "all",
        params.file_best_share,
        lexical if params.region_lexical != "off" else None,
        params.region_lexical_weight,
        outline_evidence=outline_evidence,
        outline_weight=OUTLINE_WEIGHT if outline_evidence is not None else 0.0,
        name_evidence=name_evidence,
        name_weight=NAME_WEIGHT,
        nested_containers=params.region_definitions == "containers",
        members=params.region_members == "outside",
        types_only=types_only,
    )
    if len(found) < params.region_count and "file" in params.region_levels:
        listed = {(r.level, r.path) for r in found}
        extra = [f for f in files if ("file", f.path) not in listed]
        found = sorted(found + extra[: params.region_count - len(found)], key=lambda r: -r.score)
    return found, files
