"""Answers above the leaves: ranked regions (folders, files, definitions, groups) and ranked files.

Every region is a run of leaf rows with one pooled vector, made once with its table
(hsc.search.region_table). A query's regions are scored from its leaf ranking: the best
``region_candidates`` leaves and their scores (hybrid: cosine fused with BM25). A region holding
one of them scores ``best_share`` x its best leaf's score + (1 - ``best_share``) x its pooled
vector's cosine, so a level wins where its own vector fits the question better than a single leaf
does. Files are ranked the same way, every file's pooled vector scored (files are few beside
leaves). A Go or Rust type may count its members declared outside its lines as its own
(hsc.search.region_members). Asked at the type level (``region_levels = type``) the regions are the
types alone, a nested one too. The share and the rest were chosen with ``bench quality
--query-kind class|module|docstring`` (docs/hierarchy.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hsc.params import REGION_NESTING, Parameters
from hsc.search.lexical import fuse
from hsc.search.region_members import below_lenders, with_members
from hsc.search.region_table import FILE, FOLDER, LEVELS, Region, RegionTable
from hsc.search.two_stage import top_k

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


def level_overrides(level: str) -> dict[str, str]:
    """The query parameters that draw a query's regions from ``level`` (one of ANSWER_LEVELS)."""
    if level not in ANSWER_LEVELS:
        raise ValueError(f"level must be one of {', '.join(ANSWER_LEVELS)}, not {level!r}")
    return {} if level == "any" else {"region_levels": level}


def asks_types(params: Parameters) -> bool:
    """Whether ``params`` draw a query's regions from the types alone (``region_levels = type``)."""
    return params.region_levels == "type"


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
    ``types_only``: the definitions listed are every type (the table's ``types``), one nested in a
    function or in another type too (``outermost_only`` and ``nested_containers`` do not apply)."""
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
    types_only = asks_types(params)
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
