"""Outline vectors tried as a region's own vector (hsc.search.region_outlines), on the run's own
candidate leaves, beside the regions as shipped: each variant is one more system of the region
table, paired there against the shipped regions (docs/hierarchy.md, "Outline vectors").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hsc.search.region_outlines import RegionOutlines, region_outline_texts
from hsc.search.region_table import DEFINITION, FILE, RegionTable
from hsc.search.regions import rank_files, rank_regions

K = 10
Span = tuple[str, int | None, int | None]
# (label, definitions' vector, definitions' best-leaf share, files' vector, definitions nearest
# by outline added to the candidates). Files keep the shipped share (0.75).
OUTLINE_VARIANTS = (
    ("definitions outline", "outline", 0.75, "off", 0),
    ("definitions max", "max", 0.75, "off", 0),
    ("definitions mean", "mean", 0.75, "off", 0),
    ("definitions outline, best 0.5", "outline", 0.5, "off", 0),
    ("definitions max, best 0.5", "max", 0.5, "off", 0),
    ("definitions mean, best 0.5", "mean", 0.5, "off", 0),
    ("definitions max, best 0.25", "max", 0.25, "off", 0),
    ("files outline", "off", 0.75, "outline", 0),
    ("files max", "off", 0.75, "max", 0),
    ("files mean", "off", 0.75, "mean", 0),
    ("definitions max, files max", "max", 0.75, "max", 0),
    ("definitions mean, files mean", "mean", 0.75, "mean", 0),
    ("definitions max best 0.5, files max", "max", 0.5, "max", 0),
    ("definitions max, +10 by outline", "max", 0.75, "off", 10),
    ("definitions max best 0.5, +10 by outline", "max", 0.5, "off", 10),
    ("definitions outline best 0.5, +10 by outline", "outline", 0.5, "off", 10),
)
FILE_MODES = ("off", "outline", "max", "mean")
# The outline's cosine as added evidence, as class-level lexical evidence is added
# (hsc.search.regions._with_lexical): a listed definition with an outline gains weight x its
# outline's cosine as a share of the best listed definition's; (label, weight, files too).
OUTLINE_EVIDENCE = (
    ("outline evidence 0.1", 0.1, False),
    ("outline evidence 0.25", 0.25, False),
    ("outline evidence 0.5", 0.5, False),
    ("outline evidence 0.1, files too", 0.1, True),
    ("outline evidence 0.25, files too", 0.25, True),
)


def region_outlines(
    regions: RegionTable,
    table: Any,
    definitions: dict[str, Any],
    embed: Callable[[list[str]], np.ndarray],
    min_leaves: int = 2,
) -> RegionOutlines:
    """The run's outline vectors (embedded through the run's cache, by content hash)."""
    return RegionOutlines.from_texts(region_outline_texts(regions, table, definitions, min_leaves), embed)


def _spans(found: list[Any]) -> list[Span]:
    return [(r.path, r.start_line, r.end_line) for r in found]


def outline_variants(
    regions: RegionTable,
    outlines: RegionOutlines,
    rows: np.ndarray,
    scores: np.ndarray,
    vector: np.ndarray,
    put: Callable[[str, list[Span]], None],
) -> None:
    """One query's regions under each of :data:`OUTLINE_VARIANTS`, its file ranking under each
    of :data:`FILE_MODES`, and the outermost definitions nearest by outline alone."""
    for label, definition_mode, share, file_mode, added in OUTLINE_VARIANTS:
        cosines = outlines.cosines(regions, vector, definition_mode, file_mode)
        extra = outlines.nearest(regions, vector, added) if added else None
        for kind, levels in (("regions", ("file", "definition")), ("outermost definitions", ("definition",))):
            if kind != "regions" and file_mode != "off":
                continue  # the same list as its definitions' variant
            found = rank_regions(
                regions,
                rows,
                scores,
                vector,
                K,
                share,
                "all",
                levels,
                True,
                0.75,
                extra=extra,
                cosines=cosines,
            )
            put(f"{kind} + {label}", _spans(found))
    outline_cosines = np.zeros(len(regions))
    if len(outlines):
        outline_cosines[outlines.rows] = np.maximum(
            outlines.vectors @ vector.astype(outlines.vectors.dtype), 0
        )
    definitions_only = np.where(regions.levels == DEFINITION, outline_cosines, 0.0)
    for label, weight, files_too in OUTLINE_EVIDENCE:
        evidence = outline_cosines if files_too else definitions_only
        for kind, levels in (("regions", ("file", "definition")), ("outermost definitions", ("definition",))):
            if kind != "regions" and files_too:
                continue
            found = rank_regions(
                regions, rows, scores, vector, K, 0.75, "all", levels, True, 0.75, evidence, weight
            )
            put(f"{kind} + {label}", _spans(found))
    for mode in FILE_MODES:
        cosines = outlines.cosines(regions, vector, "off", mode)
        put(
            f"files ranked, file vector {mode}",
            _spans(rank_files(regions, rows, scores, vector, K, 0.75, cosines)),
        )
    nearest = outlines.nearest(regions, vector, K, DEFINITION)
    put(
        "outermost definitions nearest by outline alone",
        _spans([regions.region(int(r), 0.0) for r in nearest]),
    )


# The same outlines made for every outermost definition that holds others, one leaf or more
# (``min_leaves`` 1): a class cut into one leaf gets a second vector of its own too.
EVERY = ", every definition with members"
ALL = ", every outermost definition"  # a function's outline: its scope and signature
# (label, definitions' weight, files' weight (0: none)) of the outline evidence with these outlines.
EVERY_EVIDENCE = tuple(
    (f"outline evidence {weight}" + (f", files {file_weight}" if file_weight else ""), weight, file_weight)
    for weight in (0.05, 0.075, 0.1)
    for file_weight in (0.0, 0.025, 0.05, 0.075)
)


def _with_evidence(
    regions: RegionTable, query: np.ndarray, evidence: np.ndarray, weights: dict[int, float]
) -> Callable[[np.ndarray], np.ndarray]:
    """Vector scores that add, at a best-leaf share of 0.75, ``weights[level]`` x each listed
    region's ``evidence`` as a share of the best listed one of its level (what
    hsc.search.regions adds for lexical evidence, with a weight per level)."""

    def score(ids: np.ndarray) -> np.ndarray:
        out = (regions.vectors[ids] @ query.astype(regions.vectors.dtype)).astype(np.float64)
        for level, weight in weights.items():
            mask = regions.levels[ids] == level
            top = float(evidence[ids][mask].max()) if mask.any() else 0.0
            if weight and top > 0:
                out[mask] += weight / (1 - 0.75) * evidence[ids][mask] / top
        return out

    return score


def every_outline_variants(
    regions: RegionTable,
    outlines: RegionOutlines,
    rows: np.ndarray,
    scores: np.ndarray,
    vector: np.ndarray,
    put: Callable[[str, list[Span]], None],
    suffix: str = EVERY,
) -> None:
    """The main variants of :func:`outline_variants` with outlines for more definitions: every
    outermost definition that holds others (:data:`EVERY`), or every one (:data:`ALL`)."""
    for mode in ("outline", "max", "mean"):
        cosines = outlines.cosines(regions, vector, mode)
        for kind, levels in (("regions", ("file", "definition")), ("outermost definitions", ("definition",))):
            found = rank_regions(
                regions, rows, scores, vector, K, 0.75, "all", levels, True, 0.75, cosines=cosines
            )
            put(f"{kind} + definitions {mode}{suffix}", _spans(found))
    cosines_all = np.zeros(len(regions))
    if len(outlines):
        cosines_all[outlines.rows] = np.maximum(outlines.vectors @ vector.astype(outlines.vectors.dtype), 0)
    for label, weight, file_weight in EVERY_EVIDENCE:
        cosines = _with_evidence(regions, vector, cosines_all, {DEFINITION: weight, FILE: file_weight})
        for kind, levels in (("regions", ("file", "definition")), ("outermost definitions", ("definition",))):
            if kind != "regions" and file_weight:
                continue
            found = rank_regions(
                regions, rows, scores, vector, K, 0.75, "all", levels, True, 0.75, cosines=cosines
            )
            put(f"{kind} + {label}{suffix}", _spans(found))
    nearest = outlines.nearest(regions, vector, K, DEFINITION)
    put(
        f"outermost definitions nearest by outline alone{suffix}",
        _spans([regions.region(int(r), 0.0) for r in nearest]),
    )
