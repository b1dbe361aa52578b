"""Lexical matching for hybrid retrieval: identifier-aware terms and score fusion.

Code names words in identifiers, so a leaf's terms are its words with every
identifier also split at ``_`` and camelCase humps, the joined form kept
(``parseHTTPHeader`` -> ``parsehttpheader parse http header``). SQLite's FTS5
ranks leaves by BM25 over these terms, a term among the names a leaf defines
weighed more (see :meth:`hsc.store.Store.lexical_search`); :func:`fuse` adds a
small share of that ranking to the dense scores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def terms(text: str) -> list[str]:
    """Lower-case terms of a text: each identifier joined, then its parts."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_word_terms(word))
    return out


@lru_cache(maxsize=65_536)
def _word_terms(word: str) -> tuple[str, ...]:
    # Cached: code repeats its identifiers, and splitting them is most of indexing a leaf's terms.
    parts = [part.lower() for piece in word.split("_") for part in _HUMP.findall(piece)]
    joined = "".join(parts)
    return ((joined,) if joined else ()) + (tuple(parts) if len(parts) > 1 else ())


def identifier_parts(text: str) -> list[str]:
    """Lower-case words of a text's identifiers: each split at ``_`` and camelCase humps, a word
    of one part kept whole (``BaseHeader`` -> ``base header``), no joined form."""
    out: list[str] = []
    for word in _WORD.findall(text):
        found = _word_terms(word)
        out.extend(found[1:] if len(found) > 1 else found)
    return out


def term_text(text: str) -> str:
    """A text's terms, space-separated (what FTS5 tokenises)."""
    return " ".join(terms(text))


def leaf_term_text(scope: str, text: str, defines: Sequence[str] = ()) -> tuple[str, str]:
    """What the FTS5 table stores for a leaf: (names, terms). ``names`` are the terms
    of its dotted scope and of the names it defines (the facts the chunker read from
    the syntax tree), weighed ``lexical_name_weight`` times in BM25; ``terms`` are those
    of its scope and its text (so every name is also a term).

    The one definition of a leaf's lexical text: the store calls it when a
    file's leaves are written (and to fill leaves indexed before terms were)."""
    return term_text(f"{scope} {' '.join(defines)}"), term_text(f"{scope}\n{text}")


class TermCounts:
    """How many leaves hold each term, read from a store once per term and kept:
    counting a common term's leaves reads its whole posting list (100 ms for two
    terms held by all of 10^6 leaves), and a session's queries share their words.
    Keep one per state of the database (a loaded hierarchy does)."""

    def __init__(self, documents: Callable[[list[str]], dict[str, int]], leaves: Callable[[], int]) -> None:
        self._documents = documents
        self._leaves = leaves
        self._known: dict[str, int] = {}
        self._leaf_count: int | None = None

    def common(self, terms: list[str], share: float) -> set[str]:
        """Those of ``terms`` held by more than ``share`` of the leaves (none for a share of 1)."""
        if share >= 1 or not terms:
            return set()
        unknown = [term for term in terms if term not in self._known]
        if unknown:  # remembered even when the store has no counts (an older database)
            found = self._documents(unknown)
            self._known.update({term: found.get(term, 0) for term in unknown})
        if self._leaf_count is None:
            self._leaf_count = self._leaves()
        return {term for term in terms if self._known[term] > share * self._leaf_count}


def match_expression(
    text: str,
    counts: TermCounts | None = None,
    share: float = 1.0,
    keep: set[str] | frozenset[str] = frozenset(),
) -> str:
    """An FTS5 query matching any of the text's terms but those held by more than
    ``share`` of the leaves by ``counts`` ("" when none is left).

    Why leave terms out: a docstring's terms are words code uses everywhere, together
    they match most leaves, and FTS5 scores every match before it keeps the best. Over
    10^6 synthetic leaves (``bench scale``) the whole hybrid query took 1.29 s with every
    term and 68 ms without those in more than a fifth of the leaves, and Recall@10 on the
    quality benchmark did not drop (README, *Retrieval quality*). The terms in ``keep`` (those of
    names the query writes as code, hsc.search.names) stay whatever their share."""
    unique = list(dict.fromkeys(terms(text)))
    left_out = counts.common(unique, share) - set(keep) if counts is not None else set()
    return " OR ".join(f'"{term}"' for term in unique if term not in left_out)


# Reciprocal-rank fusion's constant (Cormack et al. 2009).
RRF_K = 60
FUSIONS = ("sum", "rrf")


def fuse(dense: np.ndarray, lexical: np.ndarray, weight: float, fusion: str = "sum") -> np.ndarray:
    """Dense scores plus ``weight`` times the lexical scores divided by their
    maximum (rows without a lexical match carry 0); with ``fusion="rrf"``, each
    candidate's 1 / (60 + its dense rank) plus 1 / (60 + its BM25 rank) among these
    candidates (none for a row without a lexical match; ``weight`` 0 keeps the dense)."""
    if fusion == "rrf" and weight > 0 and len(dense):
        dense_rank = np.empty(len(dense), dtype=np.float64)
        dense_rank[np.argsort(-dense, kind="stable")] = np.arange(1, len(dense) + 1)
        lexical_rank = np.empty(len(dense), dtype=np.float64)
        lexical_rank[np.argsort(-lexical, kind="stable")] = np.arange(1, len(dense) + 1)
        return 1.0 / (RRF_K + dense_rank) + np.where(lexical > 0, 1.0 / (RRF_K + lexical_rank), 0.0)
    top = float(lexical.max()) if len(lexical) else 0.0
    if weight == 0 or top <= 0:
        return dense
    return dense + weight * (lexical / top)
