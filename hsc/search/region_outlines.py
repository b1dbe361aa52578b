"""Outline vectors of regions: a definition's (or a file's) outline embedded as one text.

A region's score (hsc.search.regions) mixes its best candidate leaf with a vector of its own,
by default the pooled vector of its leaves. An outline (hsc.embed.outlines: a class's
signature and its members' signatures; a file's top-level names) is a second vector of its
own, made from what the region says as a whole. :class:`RegionOutlines` holds the outline
vectors of the regions that have one and gives each region's vector score under one of
:data:`OUTLINE_MODES`: its pooled vector's cosine ("off", the seed's), its outline's
("outline"), or the larger ("max") or mean ("mean") of the two; a region without an outline
keeps its pooled vector's cosine. Those modes, the files' outlines and :meth:`RegionOutlines.nearest`
are what ``bench quality --regions`` tried (hsc.quality.outline_variants).

What ships (``region_outlines = evidence``) is :func:`outline_evidence`: the outline vectors made
when a repository is indexed (hsc.index.outlines), read once with the regions
(:func:`load_outlines`), add to a listed definition its outline's cosine as a share of the best
listed definition's (hsc.search.regions.answer_regions), which lifted class questions on the
standard library and on third-party code (docs/hierarchy.md, "Outline vectors").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsc.embed.outlines import FILE_KEY, file_outlines, module_scope
from hsc.model import Definition
from hsc.search.region_table import DEFINITION, FILE, RegionTable
from hsc.search.two_stage import top_k

OUTLINE_MODES = ("off", "outline", "max", "mean")
Cosines = Callable[[np.ndarray], np.ndarray]


def region_outline_texts(
    regions: RegionTable, table: Any, definitions: dict[str, list[Definition]], min_leaves: int = 2
) -> dict[int, str]:
    """Region row -> its outline text (hsc.embed.outlines.file_outlines): the outermost
    definitions that span ``min_leaves`` leaves or more and hold other definitions, and the files."""
    out: dict[int, str] = {}
    by_span: dict[tuple[str, int, int], int] = {}
    for row in np.flatnonzero((regions.levels == DEFINITION) & regions.outermost).tolist():
        by_span[(regions.paths[row], int(regions.start_lines[row]), int(regions.end_lines[row]))] = row
    for row in regions.files.tolist():
        path = regions.paths[row]
        lo, hi = int(regions.lo[row]), int(regions.hi[row])
        found = definitions.get(path, [])
        scope = module_scope(path, found, table.scopes[lo:hi])
        starts, ends = table.start_lines[lo:hi].tolist(), table.end_lines[lo:hi].tolist()
        for (start, end), text in file_outlines(scope, found, starts, ends, min_leaves).items():
            region = row if (start, end) == FILE_KEY else by_span.get((path, start, end))
            if region is not None:
                out[region] = text
    return out


@dataclass(frozen=True)
class RegionOutlines:
    """The outline vectors of some regions: ``rows`` (ascending region rows), ``vectors`` theirs."""

    rows: np.ndarray  # int64
    vectors: np.ndarray  # float32 (len(rows), dim), L2-normalised

    @classmethod
    def from_texts(cls, texts: dict[int, str], embed: Callable[[list[str]], np.ndarray]) -> RegionOutlines:
        rows = np.array(sorted(texts), dtype=np.int64)
        if not len(rows):
            return cls(rows, np.zeros((0, 1), dtype=np.float32))
        return cls(rows, np.asarray(embed([texts[int(r)] for r in rows]), dtype=np.float32))

    def __len__(self) -> int:
        return len(self.rows)

    def places(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        places = np.searchsorted(self.rows, ids)
        clipped = np.minimum(places, max(len(self.rows) - 1, 0))
        has = (places < len(self.rows)) & (self.rows[clipped] == ids) if len(self.rows) else places < 0
        return clipped, has

    def cosines(
        self, regions: RegionTable, query: np.ndarray, definition_mode: str, file_mode: str = "off"
    ) -> Cosines:
        """Region rows -> their vector scores for ``query``: definitions under
        ``definition_mode``, files under ``file_mode`` (each one of :data:`OUTLINE_MODES`)."""
        for mode in (definition_mode, file_mode):
            if mode not in OUTLINE_MODES:
                raise ValueError(f"outline mode must be one of {', '.join(OUTLINE_MODES)}, got {mode!r}")

        def score(ids: np.ndarray) -> np.ndarray:
            ids = np.asarray(ids, dtype=np.int64)
            pooled = (regions.vectors[ids] @ query.astype(regions.vectors.dtype)).astype(np.float64)
            places, has = self.places(ids)
            if not has.any():
                return pooled
            outline = pooled.copy()
            outline[has] = self.vectors[places[has]] @ query.astype(self.vectors.dtype)
            out = pooled.copy()
            for level, mode in ((DEFINITION, definition_mode), (FILE, file_mode)):
                mask = has & (regions.levels[ids] == level)
                if mode == "outline":
                    out[mask] = outline[mask]
                elif mode == "max":
                    out[mask] = np.maximum(pooled[mask], outline[mask])
                elif mode == "mean":
                    out[mask] = (pooled[mask] + outline[mask]) / 2
            return out

        return score

    def nearest(
        self, regions: RegionTable, query: np.ndarray, count: int, level: int = DEFINITION
    ) -> np.ndarray:
        """The region rows of ``level`` whose outlines are nearest ``query`` (brute-force cosine
        over every outline), best first: regions with no candidate leaf can enter this way."""
        mask = regions.levels[self.rows] == level
        if not mask.any():
            return np.zeros(0, dtype=np.int64)
        rows = self.rows[mask]
        found = top_k(self.vectors[mask] @ query.astype(self.vectors.dtype), count)
        return rows[found]


def outline_evidence(outlines: RegionOutlines, regions: RegionTable, query: np.ndarray) -> Cosines:
    """Region rows -> their outline's cosine with ``query`` for a definition that has one, else
    0 (what ``region_outlines = evidence`` adds, hsc.search.regions.answer_regions)."""

    def score(ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros(len(ids))
        places, has = outlines.places(ids)
        has &= regions.levels[ids] == DEFINITION
        if has.any():
            found = outlines.vectors[places[has]] @ query.astype(outlines.vectors.dtype)
            out[has] = np.maximum(found, 0.0)
        return out

    return score


def stored_outlines(store: Any, repository_id: int, regions: RegionTable) -> RegionOutlines | None:
    """The repository's stored outline vectors (hsc.index.outlines) as rows of ``regions``; None
    when it has none (an index made before ``region_outlines``, or with it off)."""
    model = (store.repository(repository_id) or {}).get("embedding_model") or ""
    spans, vectors = store.outline_vectors(repository_id, model)
    if not spans:
        return None
    wanted = (regions.levels == DEFINITION) & regions.outermost
    by_span = {
        (regions.paths[r], int(regions.start_lines[r]), int(regions.end_lines[r])): r
        for r in np.flatnonzero(wanted).tolist()
    }
    pairs = sorted((by_span[span], i) for i, span in enumerate(spans) if span in by_span)
    if not pairs:
        return None
    rows = np.array([r for r, _ in pairs], dtype=np.int64)
    return RegionOutlines(rows, np.ascontiguousarray(vectors[[i for _, i in pairs]], dtype=np.float32))


# The databases and repositories already told that they have no outline vectors (said once).
_TOLD: set[tuple[str, int]] = set()
OFF_KEY = "region_outlines:{repository_id}"  # meta: the value the repository was last indexed with


def load_outlines(store: Any, repository_id: int, regions: RegionTable) -> RegionOutlines | None:
    """:func:`stored_outlines`, saying once per process that an index made before the option has
    none and is scored as before (not when it was indexed with the option, on or off)."""
    found = stored_outlines(store, repository_id, regions)
    # Indexed with the option (either value) is recorded: a repository with no definition that
    # holds others has no outlines and nothing to say.
    if found is None and store.meta(OFF_KEY.format(repository_id=repository_id)) is None:
        told = (str(getattr(store, "path", "")), repository_id)
        if told not in _TOLD:
            _TOLD.add(told)
            warnings.warn(
                "this index has no outline vectors (made before region_outlines): its regions are "
                "scored as before; index the repository again to make them",
                stacklevel=2,
            )
    return found
