"""The parts of a query's response read beside its ranking: each result's stored row, the labels
of the groups stage 1 opened, and the regions and files ranked from the candidate leaves (a base
of :class:`hsc.search.searching.Searching`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hsc.model import common_scope
from hsc.params import Parameters
from hsc.search.loaded import LoadedHierarchies, _Loaded
from hsc.search.region_names import name_evidence
from hsc.search.region_outlines import RegionOutlines, load_outlines, outline_evidence
from hsc.search.region_table import Region, RegionTable, build_regions, region_arrays, regions_from_arrays
from hsc.search.region_terms import (
    RegionTerms,
    listed_region_lexical,
    region_terms_arrays,
    region_terms_from_arrays,
    stored_region_terms,
)
from hsc.search.regions import answer_regions
from hsc.search.results import QueryResult
from hsc.search.two_stage import Retrieval


class ResponseParts(LoadedHierarchies):
    """What a query's response shows beyond the ranking itself, read from the database."""

    def _regions(
        self,
        loaded: _Loaded,
        hierarchy: dict[str, Any],
        candidates: list[Any],
        vector: np.ndarray,
        params: Parameters,
        text: str = "",
    ) -> tuple[list[Region], list[Region]]:
        """The query's ranked regions and files, from its candidate leaves (best first); with
        ``region_lexical`` on, also from the BM25 of ``text`` over each region's terms, and with
        ``region_names`` from the words of ``text`` each region's own name shares."""
        if loaded.regions is None:
            loaded.regions = self._region_table(loaded, int(hierarchy["repository_id"]))
        regions = loaded.regions
        rows = np.array([hit.row for hit in candidates], dtype=np.int64)
        scores = np.array([hit.score for hit in candidates], dtype=np.float64)
        lexical = None
        if params.region_lexical != "off":
            if loaded.region_terms is None:
                loaded.region_terms = self._region_terms(loaded, regions, int(hierarchy["repository_id"]))
            lexical = listed_region_lexical(loaded.region_terms, regions, text, params.region_lexical)
        evidence = None
        if params.region_outlines != "off":
            if loaded.region_outlines is None:
                repository_id = int(hierarchy["repository_id"])
                loaded.region_outlines = load_outlines(self.store, repository_id, regions) or False
            if isinstance(loaded.region_outlines, RegionOutlines):
                evidence = outline_evidence(loaded.region_outlines, regions, vector)
        names = name_evidence(regions, text) if params.region_names != "off" else None
        return answer_regions(regions, rows, scores, vector, params, lexical, evidence, names)

    def _region_terms(self, loaded: _Loaded, regions: RegionTable, repository_id: int) -> RegionTerms:
        """A hierarchy's region terms: read from the side file made at its stamp, else made from
        the stored leaf terms (one read of the lexical table) and saved there, as the regions are."""
        whole = self.side_files and self._cache.loaded.get(loaded.hierarchy_id) is loaded
        saved = self._side.load_region_terms(loaded.hierarchy_id, loaded.stamp) if whole else None
        if saved is not None and int(saved["shape"][0]) == len(regions):
            return region_terms_from_arrays(saved)
        stored = self.store.leaf_term_texts(repository_id)
        made = stored_region_terms(regions, loaded.table.leaf_ids, stored)
        if whole and not self.store.read_only:
            self._side.save_region_terms(loaded.hierarchy_id, loaded.stamp, region_terms_arrays(made))
        return made

    def _region_table(self, loaded: _Loaded, repository_id: int) -> RegionTable:
        """A hierarchy's regions: read from the side file made at its stamp, else built (the
        definitions read, every region pooled) and saved there. A view of some files' roles only,
        or a partial one, is built each time: its rows are not the saved table's."""
        whole = self.side_files and self._cache.loaded.get(loaded.hierarchy_id) is loaded
        saved = self._side.load_regions(loaded.hierarchy_id, loaded.stamp) if whole else None
        read = regions_from_arrays(*saved) if saved is not None else None
        if read is not None:
            return read
        definitions = self.store.definitions(repository_id)
        regions = build_regions(loaded.table, definitions, loaded.group_starts, loaded.group_ends)
        if whole and not self.store.read_only:
            self._side.save_regions(
                loaded.hierarchy_id, loaded.stamp, region_arrays(regions), regions.vectors
            )
        return regions

    def _group_labels(self, hierarchy_id: int, node_ids: list[int]) -> dict[int, dict[str, Any]]:
        """What a query shows of each group (GroupResult's fields after its score), from the
        stored labels; a group made by an older hsc has no stored scope and is described from
        its leaves, as before scopes were stored."""
        labels = self.store.group_labels(node_ids)
        unscoped = [node_id for node_id, label in labels.items() if label["scope"] is None]
        if unscoped:
            members = self.store.members_of(hierarchy_id, unscoped, with_text=False)
            for node_id in unscoped:
                leaves = members[node_id]
                labels[node_id]["scope"] = common_scope([leaf["scope"] for leaf in leaves])
                labels[node_id]["leaf_count"] = len(leaves)
        return labels

    def _results(
        self, loaded: _Loaded, retrieval: Retrieval, lexical_part: Callable[[int], float] | None = None
    ) -> list[QueryResult]:
        """The retrieved leaves still in the database, with their group's id (the parent view is
        filled in by the caller, for all results at once) and, in a hybrid mode, the BM25 part of
        each score (``lexical_part`` of its row)."""
        leaf_ids = [int(loaded.table.leaf_ids[hit.row]) for hit in retrieval.leaves]
        rows = self.store.leaves_by_id(leaf_ids)
        group_of_row = (
            np.searchsorted(loaded.group_starts, [hit.row for hit in retrieval.leaves], side="right") - 1
        )
        results: list[QueryResult] = []
        for hit, leaf_id, group in zip(retrieval.leaves, leaf_ids, group_of_row):
            row = rows.get(leaf_id)
            if row is None:  # rewritten by an index run since the hierarchy was loaded
                continue
            mid_id = loaded.mid_ids[int(group)]
            results.append(
                QueryResult(
                    rank=len(results) + 1,
                    score=hit.score,
                    leaf_id=f"leaf:{leaf_id}",
                    path=row["path"],
                    start_line=row["start_line"],
                    end_line=row["end_line"],
                    scope=row["scope"],
                    parent_id=f"mid:{mid_id}",
                    parent_score=None if hit.group < 0 else hit.group_score,
                    text=row["text"],
                    language=row["language"] or "",
                    lexical_score=None if lexical_part is None else lexical_part(hit.row),
                )
            )
        return results
