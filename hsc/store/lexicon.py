"""The lexical table hybrid retrieval ranks with BM25: each leaf's terms, kept in step with its leaves.

An FTS5 table keyed by leaf id has no foreign keys, so a file's terms are dropped
here with its leaves. What a leaf's terms are is not decided here: the writer
passes ``terms_of(scope, text, defines) -> (names, terms)``
(:func:`hsc.search.lexical.leaf_term_text`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from hsc.model import Leaf, LeafFacts
from hsc.store.database import Database
from hsc.store.schema import LEXICAL_TABLES

TermsOf = Callable[[str, str, Sequence[str]], tuple[str, str]]


class LexicalTables(Database):
    """``leaf_terms`` (names and terms of each leaf), its term counts, and the mark that
    a repository's leaves all have theirs."""

    def lexical_search(
        self,
        repository_id: int,
        match: str,
        limit: int,
        name_weight: float,
        roles: tuple[str, ...] | None = None,
    ) -> list[tuple[int, float]]:
        """(leaf id, BM25 score, higher is better) of the repository's best
        ``limit`` leaves for an FTS5 ``match`` expression, a term among the names a leaf
        defines counting ``name_weight`` times one of its text. Leaves without terms
        (indexed by an older hsc, not yet brought up to date) are not found; a
        database opened read-only from before the table existed finds none, and one
        from before the names column is ranked by its terms alone. ``roles``: only leaves of files
        of these roles (and of files written without one, which the caller sorts out by path)."""
        if not match or not self._has_table("leaf_terms"):
            return []
        role_column = "f.role" if self.added_column("files", "role") == "role" else "''"
        among = (
            f" AND ({role_column} IN ({', '.join('?' * len(roles))}) OR {role_column} = '')" if roles else ""
        )
        rank, weights = (
            ("bm25(leaf_terms, ?, 1.0)", (name_weight,))
            if self._terms_have_names()
            else ("bm25(leaf_terms)", ())
        )
        rows = self.conn.execute(
            # A join, not "rowid IN (subquery)": the subquery form took seconds per query.
            f"""SELECT leaf_terms.rowid, -{rank} FROM leaf_terms
               JOIN leaves l ON l.id = leaf_terms.rowid JOIN files f ON f.id = l.file_id
               WHERE leaf_terms MATCH ? AND f.repository_id = ?{among}
               ORDER BY {rank} LIMIT ?""",
            (*weights, match, repository_id, *(roles or ()), *weights, limit),
        ).fetchall()
        return [(int(row[0]), float(row[1])) for row in rows]

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

    def leaf_term_texts(self, repository_id: int) -> dict[int, tuple[str, str]]:
        """Leaf id -> the (names, terms) stored for it, of every leaf of the repository that has
        them (names "" in a table from before its names column); what region terms are made of."""
        if not self._has_table("leaf_terms"):
            return {}
        names = "leaf_terms.names" if self._terms_have_names() else "''"
        rows = self.conn.execute(
            f"""SELECT leaf_terms.rowid, {names}, leaf_terms.terms FROM leaf_terms
               JOIN leaves l ON l.id = leaf_terms.rowid JOIN files f ON f.id = l.file_id
               WHERE f.repository_id = ?""",
            (repository_id,),
        )
        return {int(row[0]): (row[1] or "", row[2] or "") for row in rows}

    def sync_leaf_terms(self, repository_id: int, terms_of: TermsOf) -> int:
        """Give every leaf of the repository that has none its row of terms and drop
        rows of leaves that are gone; returns the number added. For a database indexed
        before terms were written with the leaves (or before their names column, which
        rebuilds the table for every repository): an index run calls it, never a query.
        One transaction, which also marks the repository complete. Skipped (no scan of
        the leaves) while the repository is marked complete at its current leaf generation."""
        if self._terms_complete(repository_id) and self._terms_have_names():
            return 0
        with self.transaction():
            self.upgrade_leaf_terms(terms_of)
            missing = self._missing_terms("f.repository_id = ?", (repository_id,))
            stale = self.conn.execute(
                "SELECT rowid FROM leaf_terms WHERE rowid NOT IN (SELECT id FROM leaves)"
            ).fetchall()
            self.conn.executemany("DELETE FROM leaf_terms WHERE rowid = ?", stale)
            self._insert_terms(missing, terms_of)
            self._mark_complete("repository_id = ?", (repository_id,))
        return len(missing)

    def upgrade_leaf_terms(self, terms_of: TermsOf) -> bool:
        """Inside a write transaction: rebuild a table from before the names column with
        every leaf's row (True), or do nothing (False). Its rows cannot be extended in place."""
        if not self._has_table("leaf_terms") or self._terms_have_names():
            return False
        self.conn.execute("DROP TABLE IF EXISTS leaf_term_docs")
        self.conn.execute("DROP TABLE leaf_terms")
        for statement in LEXICAL_TABLES.split(";"):
            if statement.strip():
                self.conn.execute(statement)
        self._insert_terms(self._missing_terms("1", ()), terms_of)
        self._mark_complete("1", ())
        return True

    def _terms_have_names(self) -> bool:
        return any(row[1] == "names" for row in self.conn.execute("PRAGMA table_xinfo(leaf_terms)"))

    def _missing_terms(self, where: str, params: tuple[Any, ...]) -> list[tuple[int, str, str, str]]:
        """(id, scope, text, defines as JSON) of the leaves without terms: a scan of the leaves."""
        return self.conn.execute(
            f"""SELECT l.id, l.scope, l.text, COALESCE(x.defines, '[]') FROM leaves l
               JOIN files f ON f.id = l.file_id LEFT JOIN leaf_facts x ON x.leaf_id = l.id
               WHERE {where} AND l.id NOT IN (SELECT rowid FROM leaf_terms)""",
            params,
        ).fetchall()

    def _insert_terms(self, rows: list[tuple[int, str, str, str]], terms_of: TermsOf) -> None:
        self.conn.executemany(
            "INSERT INTO leaf_terms (rowid, names, terms) VALUES (?, ?, ?)",
            [
                (leaf_id, *terms_of(scope, text, json.loads(defines)))
                for leaf_id, scope, text, defines in rows
            ],
        )

    def _mark_complete(self, where: str, params: tuple[Any, ...]) -> None:
        """Mark the repositories ``where`` selects as having every leaf's terms, at their
        current leaf generation."""
        self.conn.execute(
            "INSERT OR REPLACE INTO leaf_terms_complete (repository_id, generation) "
            f"SELECT repository_id, generation FROM leaf_generations WHERE {where}",
            params,
        )

    def _terms_complete(self, repository_id: int) -> bool:
        found = self.conn.execute(
            """SELECT 1 FROM leaf_terms_complete c JOIN leaf_generations g USING (repository_id)
               WHERE c.repository_id = ? AND c.generation = g.generation""",
            (repository_id,),
        ).fetchone()
        return found is not None

    # -- kept in step by the file writes (hsc.store.files), inside their transactions --

    def _leaf_ids(self, where: str, params: tuple[Any, ...]) -> list[int]:
        return [
            int(row[0])
            for row in self.conn.execute(
                f"SELECT l.id FROM leaves l JOIN files f ON f.id = l.file_id WHERE {where} "
                "ORDER BY l.ordinal",
                params,
            )
        ]

    def _keep_terms_mark(self, repository_id: int, complete: bool) -> None:
        """After a write of the repository's files (in its transaction): a mark that every leaf
        has its terms moves to the new leaf generation when this write kept that true."""
        if complete:
            self.conn.execute(
                """UPDATE leaf_terms_complete SET generation =
                       COALESCE((SELECT generation FROM leaf_generations WHERE repository_id = ?), -1)
                   WHERE repository_id = ?""",
                (repository_id, repository_id),
            )
        else:
            self.conn.execute("DELETE FROM leaf_terms_complete WHERE repository_id = ?", (repository_id,))

    def _drop_terms(self, leaf_ids: list[int]) -> None:
        self.conn.executemany("DELETE FROM leaf_terms WHERE rowid = ?", [(i,) for i in leaf_ids])

    def _write_terms(
        self, file_id: int, leaves: list[Leaf], facts: Sequence[LeafFacts], terms_of: TermsOf
    ) -> None:
        """The rows of a file's leaves just written (``facts`` parallel to them, or empty)."""
        defines = [f.defines for f in facts] if facts else [()] * len(leaves)
        # OR REPLACE: a database whose terms were filled by an older hsc may still hold
        # the row of a deleted leaf whose id SQLite has given to a new one.
        self.conn.executemany(
            "INSERT OR REPLACE INTO leaf_terms (rowid, names, terms) VALUES (?, ?, ?)",
            [
                (leaf_id, *terms_of(leaf.scope, leaf.text, names))
                for leaf_id, leaf, names in zip(self._leaf_ids("f.id = ?", (file_id,)), leaves, defines)
            ],
        )
