"""Class-level lexical evidence for regions: BM25 over each region's whole text and its names.

A class question's words are spread over the class's methods (their names, identifiers and
comments); no single leaf holds them all, so the best leaf's score misses what the class as a
whole says. Here every region gets the terms of all its leaves (the same terms the leaves' FTS5
table holds, identifiers split at ``_`` and camelCase: :func:`hsc.search.lexical.leaf_term_text`),
summed, in two fields: ``text`` (every term of its leaves) and ``names`` (the terms of its leaves'
scopes and of the names they define: the class, its methods and attributes, an outline). A query
scores the regions by BM25 (Robertson's, k1 = 1.2, b = 0.75) over one field, the document
frequencies counted over the outermost definitions and files (the regions a list ranks).

The matrices are built once per region table from the stored terms (one sparse product, as the
pooled vectors), so a query costs one column slice per query term.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from hsc.search.lexical import terms
from hsc.search.region_table import DEFINITION, FILE, RegionTable, run_membership

K1, B = 1.2, 0.75
FIELDS = ("text", "names")


@dataclass(frozen=True)
class RegionTerms:
    """Term counts of every region (rows as the region table's), one CSC matrix per field."""

    vocabulary: dict[str, int]
    text: sparse.csc_matrix  # regions x terms
    names: sparse.csc_matrix
    ranked: np.ndarray  # bool per region: counted in the document frequencies (outermost, files)

    def field(self, name: str) -> sparse.csc_matrix:
        if name not in FIELDS:
            raise ValueError(f"region term field must be one of {', '.join(FIELDS)}, got {name!r}")
        return self.text if name == "text" else self.names

    @cached_property
    def norms(self) -> dict[str, np.ndarray]:
        """Per field, each region's BM25 length norm ``k1 (1 - b + b length / mean length)``, the
        mean over the ranked regions: made once, not per query (a sum over every region's terms)."""
        out = {}
        for name in FIELDS:
            lengths = np.asarray(self.field(name).sum(axis=1)).ravel()
            average = float(lengths[self.ranked].mean()) if self.ranked.any() else 1.0
            out[name] = K1 * (1 - B + B * lengths / max(average, 1e-9))
        return out


def _leaf_counts(documents: Sequence[str], vocabulary: dict[str, int]) -> sparse.csr_matrix:
    """Leaf x term counts of space-separated term texts (``vocabulary`` grows as terms are met)."""
    rows: list[int] = []
    columns: list[int] = []
    for row, document in enumerate(documents):
        for term in document.split():
            rows.append(row)
            columns.append(vocabulary.setdefault(term, len(vocabulary)))
    data = np.ones(len(rows), dtype=np.float32)
    return sparse.csr_matrix((data, (rows, columns)), shape=(len(documents), max(len(vocabulary), 1)))


def build_region_terms(
    lo: np.ndarray, hi: np.ndarray, ranked: np.ndarray, leaf_terms: Sequence[tuple[str, str]]
) -> RegionTerms:
    """The term counts of regions spanning leaf rows ``lo``..``hi`` (exclusive), from each leaf
    row's stored ``(names, terms)``; ``ranked``: the regions document frequencies count."""
    vocabulary: dict[str, int] = {}
    names = _leaf_counts([n for n, _ in leaf_terms], vocabulary)
    text = _leaf_counts([t for _, t in leaf_terms], vocabulary)
    width = max(len(vocabulary), 1)
    names.resize((len(leaf_terms), width))
    membership = run_membership(lo, hi, len(leaf_terms))
    return RegionTerms(
        vocabulary,
        sparse.csc_matrix(membership @ text),
        sparse.csc_matrix(membership @ names),
        np.asarray(ranked, dtype=bool),
    )


def stored_region_terms(
    regions: RegionTable, leaf_ids: Sequence[int], stored: dict[int, tuple[str, str]]
) -> RegionTerms:
    """The term counts of ``regions`` from the store's ``(names, terms)`` of each leaf (by leaf id,
    ``leaf_ids`` in row order); document frequencies over the files and outermost definitions."""
    return build_region_terms(
        regions.lo,
        regions.hi,
        (regions.levels == FILE) | ((regions.levels == DEFINITION) & regions.outermost),
        [stored.get(int(leaf_id), ("", "")) for leaf_id in leaf_ids],
    )


def bm25(region_terms: RegionTerms, query: str, field: str = "text") -> np.ndarray:
    """Every region's BM25 score for the query's terms (each counted once) in ``field``; 0 for a
    region holding none. Regions outside ``ranked`` are scored too, with the ranked ones' statistics."""
    matrix = region_terms.field(field)
    scores = np.zeros(matrix.shape[0], dtype=np.float64)
    columns = sorted({region_terms.vocabulary[t] for t in terms(query) if t in region_terms.vocabulary})
    if not columns:
        return scores
    ranked = region_terms.ranked
    documents = max(int(ranked.sum()), 1)
    norm = region_terms.norms[field]
    for column in columns:
        start, end = matrix.indptr[column], matrix.indptr[column + 1]
        rows, counts = matrix.indices[start:end], matrix.data[start:end].astype(np.float64)
        frequency = int(ranked[rows].sum())
        idf = np.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))
        scores[rows] += idf * counts * (K1 + 1) / (counts + norm[rows])
    return scores


def region_terms_arrays(region_terms: RegionTerms) -> dict[str, np.ndarray]:
    """A region terms' arrays, as a side file holds them."""
    arrays: dict[str, np.ndarray] = {
        "vocabulary": np.array(list(region_terms.vocabulary), dtype=str),
        "ranked": region_terms.ranked,
        "shape": np.array(region_terms.text.shape, dtype=np.int64),
    }
    for name in FIELDS:
        matrix = region_terms.field(name)
        arrays.update({f"{name}_indptr": matrix.indptr, f"{name}_indices": matrix.indices})
        arrays[f"{name}_data"] = matrix.data
    return arrays


def region_terms_from_arrays(arrays: dict[str, np.ndarray]) -> RegionTerms:
    """The region terms :func:`region_terms_arrays` saved."""
    shape = tuple(int(n) for n in arrays["shape"])
    matrices = {
        name: sparse.csc_matrix(
            (arrays[f"{name}_data"], arrays[f"{name}_indices"], arrays[f"{name}_indptr"]), shape=shape
        )
        for name in FIELDS
    }
    vocabulary = {str(term): column for column, term in enumerate(arrays["vocabulary"].tolist())}
    return RegionTerms(vocabulary, matrices["text"], matrices["names"], np.asarray(arrays["ranked"], bool))


def region_lexical(
    region_terms: RegionTerms,
    levels: np.ndarray,
    lo: np.ndarray,
    outermost: np.ndarray,
    query: str,
    field: str,
    files: str,
) -> np.ndarray:
    """Each region's lexical evidence for ``query``: an outermost definition's BM25 in ``field``
    ("text", "names" or "text+names", their sum); a file's, with ``files`` "own", its own BM25 in
    that field, with "best" its best outermost definition's (a class and its file rise together),
    with "none" 0; other regions 0."""
    fields = FIELDS if field == "text+names" else (field,)
    scores = sum((bm25(region_terms, query, name) for name in fields), np.zeros(len(levels)))
    definitions = (levels == DEFINITION) & outermost
    out = np.where(definitions | ((levels == FILE) & (files == "own")), scores, 0.0)
    if files == "best":
        file_rows = np.flatnonzero(levels == FILE)
        if len(file_rows):
            file_of = file_rows[np.searchsorted(lo[file_rows], lo[definitions], side="right") - 1]
            np.maximum.at(out, file_of, out[definitions])
    return out


def listed_region_lexical(
    region_terms: RegionTerms, regions: RegionTable, query: str, field: str
) -> np.ndarray:
    """:func:`region_lexical` as a query gives it (``Index.query``): the outermost definitions' and the
    files' own BM25 in ``field`` (``region_lexical``)."""
    return region_lexical(region_terms, regions.levels, regions.lo, regions.outermost, query, field, "own")
