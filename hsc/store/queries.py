"""Lexical search terms, the query history and table counts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from hsc.store.database import Database


class QueryTables(Database):
    """The tables that serve and record queries."""

    # -- lexical search -------------------------------------------------------------

    def sync_leaf_terms(self, repository_id: int, terms_of: Callable[[str, str], str]) -> int:
        """Give every leaf of the repository that has none its row of terms
        (``terms_of(scope, text)``) and drop rows of leaves that are gone; returns
        the number added. For a database indexed before terms were written with
        the leaves: an index run calls it, never a query. One transaction, which
        also marks the repository complete. Skipped (no scan of the leaves) while
        the repository is marked complete at its current leaf generation."""
        if self._terms_complete(repository_id):
            return 0
        missing = self._missing_terms(repository_id)
        stale = self.conn.execute(
            "SELECT rowid FROM leaf_terms WHERE rowid NOT IN (SELECT id FROM leaves)"
        ).fetchall()
        with self.transaction():
            self.conn.executemany("DELETE FROM leaf_terms WHERE rowid = ?", stale)
            self.conn.executemany(
                "INSERT INTO leaf_terms (rowid, terms) VALUES (?, ?)",
                [(row[0], terms_of(row[1], row[2])) for row in missing],
            )
            self.conn.execute(
                """INSERT OR REPLACE INTO leaf_terms_complete (repository_id, generation)
                   SELECT repository_id, generation FROM leaf_generations WHERE repository_id = ?""",
                (repository_id,),
            )
        return len(missing)

    def _missing_terms(self, repository_id: int) -> list[tuple[int, str, str]]:
        """(id, scope, text) of the repository's leaves without terms: a scan of all its leaves."""
        return self.conn.execute(
            """SELECT l.id, l.scope, l.text FROM leaves l JOIN files f ON f.id = l.file_id
               WHERE f.repository_id = ? AND l.id NOT IN (SELECT rowid FROM leaf_terms)""",
            (repository_id,),
        ).fetchall()

    def _terms_complete(self, repository_id: int) -> bool:
        found = self.conn.execute(
            """SELECT 1 FROM leaf_terms_complete c JOIN leaf_generations g USING (repository_id)
               WHERE c.repository_id = ? AND c.generation = g.generation""",
            (repository_id,),
        ).fetchone()
        return found is not None

    def term_documents(self, terms: list[str]) -> dict[str, int]:
        """How many of the database's leaves hold each of ``terms`` (0 for one none holds).
        Counting reads a term's whole posting list: see :class:`hsc.search.lexical.TermCounts`.
        Empty for a database from before the counts, opened read-only."""
        if not terms or not all(map(self._has_table, ("leaf_terms", "leaf_term_docs"))):
            return {}
        found = self.conn.execute(
            f"SELECT term, doc FROM leaf_term_docs WHERE term IN ({', '.join('?' * len(terms))})", terms
        )
        return {**dict.fromkeys(terms, 0), **{term: int(documents) for term, documents in found}}

    def leaf_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM leaves").fetchone()[0])

    def lexical_search(self, repository_id: int, match: str, limit: int) -> list[tuple[int, float]]:
        """(leaf id, BM25 score, higher is better) of the repository's best
        ``limit`` leaves for an FTS5 ``match`` expression. Leaves without terms
        (indexed by an older hsc, not yet brought up to date) are not found; a
        database opened read-only from before the table existed finds none."""
        if not match or not self._has_table("leaf_terms"):
            return []
        rows = self.conn.execute(
            # A join, not "rowid IN (subquery)": the subquery form took seconds per query.
            """SELECT leaf_terms.rowid, -bm25(leaf_terms) FROM leaf_terms
               JOIN leaves l ON l.id = leaf_terms.rowid JOIN files f ON f.id = l.file_id
               WHERE leaf_terms MATCH ? AND f.repository_id = ?
               ORDER BY bm25(leaf_terms) LIMIT ?""",
            (match, repository_id, limit),
        ).fetchall()
        return [(int(row[0]), float(row[1])) for row in rows]

    # -- queries --------------------------------------------------------------------

    def save_query(
        self,
        repository_id: int,
        hierarchy_id: int | None,
        text: str,
        mode: str,
        parameters: dict[str, Any],
        leaves_compared: int,
        elapsed_ms: float,
        results: list[tuple[str, int, str, float]],
    ) -> int:
        """``results`` are (stage, rank, node id, score)."""
        with self.transaction():
            query_id = int(
                self.conn.execute(
                    """INSERT INTO queries (repository_id, hierarchy_id, text, mode, parameters,
                           leaves_compared, elapsed_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        repository_id,
                        hierarchy_id,
                        text,
                        mode,
                        json.dumps(parameters),
                        leaves_compared,
                        elapsed_ms,
                        time.time(),
                    ),
                ).lastrowid
                or 0
            )
            self.conn.executemany(
                "INSERT INTO query_results (query_id, stage, rank, node_id, score) VALUES (?, ?, ?, ?, ?)",
                [(query_id, *result) for result in results],
            )
        return query_id

    def queries(self, repository_id: int, limit: int = 50) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT * FROM queries WHERE repository_id = ? ORDER BY id DESC LIMIT ?", (repository_id, limit)
        )

    # -- statistics ---------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        tables = [
            "repositories",
            "files",
            "leaves",
            "embeddings",
            "hierarchies",
            "nodes",
            "summaries",
            "definitions",
            "queries",
        ]
        return {t: int(self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in tables}
