"""Hard negatives: for each pair, the wrong code that hsc's untuned search ranks first.

In-batch negatives are mostly easy: 31 random functions rarely look like the
answer. What the tuned encoder has to learn is what the shipped search gets
wrong, so each pair's negative is the best-ranked other code of the training
set under the hybrid score hsc answers with (the base encoder's cosine plus
``lexical_weight`` times BM25 over identifier-split terms, the names weighed
``lexical_name_weight`` times, divided by the query's best:
:func:`hsc.search.lexical.fuse`), or with a weight of 0 under the cosine alone.
BM25 is SQLite's FTS5 over an in-memory table with the store's rows.

A candidate that may well be a right answer is passed over: one whose own
query says nearly the same thing (two docs for one behaviour), or whose code
nearly repeats the pair's own (a copied implementation).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from hsc.encoder.pairs import Pair
from hsc.params import Parameters
from hsc.search.lexical import leaf_term_text, match_expression

# Cosines above which two queries, or two codes, count as the same answer (not a negative).
SAME_QUERY = 0.9
SAME_CODE = 0.95
# The hybrid search's own defaults: its BM25 candidates per query and its fusion weight.
_SEARCH = Parameters()
_BLOCK = 512  # queries scored at a time: a block of the query x code matrix, not all of it

# embed(texts) -> L2-normalised rows, one per text
Embed = Callable[[list[str]], np.ndarray]


def lexical_scores(pairs: list[Pair], limit: int = _SEARCH.lexical_candidates) -> list[dict[int, float]]:
    """For each pair's query: pair index -> BM25 score (higher is better) of the
    ``limit`` best codes, from an in-memory FTS5 table of every pair's code, each row
    as the store writes a leaf's (its scope the names: a pair's code is one definition)."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE codes USING fts5(names, terms, tokenize = 'unicode61')")
        connection.executemany(
            "INSERT INTO codes(rowid, names, terms) VALUES (?, ?, ?)",
            ((index, *leaf_term_text(*pair.code.split("\n", 1))) for index, pair in enumerate(pairs)),
        )
        rank = f"bm25(codes, {float(_SEARCH.lexical_name_weight)}, 1.0)"
        found = []
        for pair in pairs:
            match = match_expression(pair.query)
            rows = (
                connection.execute(
                    f"SELECT rowid, -{rank} FROM codes WHERE codes MATCH ? ORDER BY {rank} LIMIT ?",
                    (match, limit),
                ).fetchall()
                if match
                else []
            )
            found.append({int(row): float(score) for row, score in rows})
        return found
    finally:
        connection.close()


def hardest_negatives(
    pairs: list[Pair], embed: Embed, lexical_weight: float = _SEARCH.lexical_weight
) -> list[Pair]:
    """``pairs`` with each one's ``negative`` set to the best-ranked other code of the
    set under the hybrid score ("" where every other code is passed over)."""
    if len(pairs) < 2:
        return list(pairs)
    queries = embed([pair.query for pair in pairs])
    codes = embed([pair.code for pair in pairs])
    lexical = lexical_scores(pairs) if lexical_weight else [{} for _ in pairs]
    out = []
    for start in range(0, len(pairs), _BLOCK):
        rows = range(start, min(start + _BLOCK, len(pairs)))
        scores = queries[rows.start : rows.stop] @ codes.T
        passed_over = (queries[rows.start : rows.stop] @ queries.T > SAME_QUERY) | (
            codes[rows.start : rows.stop] @ codes.T > SAME_CODE
        )
        for offset, index in enumerate(rows):
            score = scores[offset]
            found = lexical[index]
            top = max(found.values(), default=0.0)
            if top > 0 and lexical_weight:
                columns = np.fromiter(found, dtype=np.int64, count=len(found))
                score[columns] += lexical_weight * np.fromiter(found.values(), dtype=np.float32) / top
            score[passed_over[offset]] = -np.inf  # its own row too: a pair's query matches itself
            best = int(np.argmax(score))
            negative = pairs[best].code if np.isfinite(score[best]) else ""
            out.append(replace(pairs[index], negative=negative))
    return out
