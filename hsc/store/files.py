"""Repositories, files, their leaves and facts, and the embedding cache."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Collection, Iterable
from typing import Any

import numpy as np

from hsc.chunk.roles import file_role
from hsc.hierarchy.groups import DefinitionVectors, LeafTable
from hsc.model import Definition, FileReport, ImportBinding, Leaf, LeafFacts
from hsc.store.lexicon import LexicalTables, TermsOf
from hsc.store.schema import (
    BINDING_COLUMNS,
    DEFINITION_COLUMNS,
    LEAF_COLUMNS,
    blob_to_vector,
    blobs_to_matrix,
    vector_to_blob,
)


class FileTables(LexicalTables):
    """The tables of what was read from a repository."""

    # How new vectors are written ("float32" or "float16", Settings.vector_storage);
    # whatever is stored is read back as float32.
    vector_storage = "float32"

    # -- repositories and files -------------------------------------------------

    def upsert_repository(self, root: str, name: str) -> int:
        existing = self.row("SELECT id FROM repositories WHERE root = ?", (root,))
        if existing:
            return int(existing["id"])
        cursor = self.conn.execute("INSERT INTO repositories (root, name) VALUES (?, ?)", (root, name))
        return int(cursor.lastrowid or 0)

    REPOSITORY_COLUMNS = ("name", "embedding_model", "tokenizer", "chunk_key", "parameters", "indexed_at")

    def update_repository(self, repository_id: int, **values: Any) -> None:
        unknown = set(values) - set(self.REPOSITORY_COLUMNS)
        if unknown:
            raise ValueError(f"not a repository column: {', '.join(sorted(unknown))}")
        assignments = ", ".join(f"{name} = ?" for name in values)
        self.conn.execute(
            f"UPDATE repositories SET {assignments} WHERE id = ?", (*values.values(), repository_id)
        )

    def repositories(self) -> list[dict[str, Any]]:
        return self.rows(
            """SELECT r.*, (SELECT COUNT(*) FROM files f WHERE f.repository_id = r.id) AS file_count,
                      (SELECT COUNT(*) FROM files f WHERE f.repository_id = r.id AND f.status = 'indexed')
                        AS indexed_file_count,
                      (SELECT COUNT(*) FROM leaves l JOIN files f ON f.id = l.file_id
                        WHERE f.repository_id = r.id) AS leaf_count
               FROM repositories r ORDER BY r.name, r.id"""
        )

    def repository(self, repository_id: int) -> dict[str, Any] | None:
        return self.row("SELECT * FROM repositories WHERE id = ?", (repository_id,))

    def file_states(self, repository_id: int) -> dict[str, dict[str, Any]]:
        return {
            row["path"]: row
            for row in self.rows(
                "SELECT id, path, language, status, reason, size, content_hash, chunk_key, embedding_model "
                "FROM files WHERE repository_id = ?",
                (repository_id,),
            )
        }

    def file_roles(self, repository_id: int) -> dict[str, str]:
        """path -> role (hsc.chunk.roles) of every indexed file of the repository; a row written
        without one (by an older hsc, or read-only from before the column) has its path's."""
        role = self.added_column("files", "role")
        return {
            str(path): str(stored) or file_role(str(path))
            for path, stored in self.conn.execute(
                f"SELECT path, {role} FROM files WHERE repository_id = ? AND status = 'indexed'",
                (repository_id,),
            )
        }

    def files(self, repository_id: int) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM files WHERE repository_id = ? ORDER BY path", (repository_id,))

    def replace_file(
        self,
        repository_id: int,
        report: FileReport,
        leaves: list[Leaf],
        chunk_key: str,
        model: str,
        definitions: Iterable[Definition] = (),
        facts: Iterable[LeafFacts] = (),
        terms_of: TermsOf | None = None,
        bindings: Iterable[ImportBinding] = (),
        definition_hashes: Iterable[list[str]] = (),
    ) -> None:
        """Write one file, its leaves and their facts atomically, replacing what was there.
        ``facts`` is parallel to ``leaves`` (or empty). ``terms_of(scope, text, defines)``
        gives each leaf's row in the lexical table (:func:`hsc.search.lexical.leaf_term_text`);
        without it the leaves get none until :meth:`sync_leaf_terms`. ``definition_hashes``,
        parallel to ``leaves`` (or empty): the content hashes of each leaf's definition vectors."""
        facts = list(facts)
        with self.transaction():
            if terms_of is not None:
                self.upgrade_leaf_terms(terms_of)  # a table from before its names column
            self.conn.execute(
                """INSERT INTO files (repository_id, path, language, status, reason, size, content_hash,
                                      chunk_key, embedding_model, leaf_count, indexed_at, role)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (repository_id, path) DO UPDATE SET
                     language = excluded.language, status = excluded.status, reason = excluded.reason,
                     size = excluded.size, content_hash = excluded.content_hash,
                     chunk_key = excluded.chunk_key, embedding_model = excluded.embedding_model,
                     leaf_count = excluded.leaf_count, indexed_at = excluded.indexed_at,
                     role = excluded.role""",
                (
                    repository_id,
                    report.path,
                    report.language,
                    report.status,
                    report.reason,
                    report.size,
                    report.content_hash,
                    chunk_key,
                    model,
                    len(leaves),
                    time.time(),
                    file_role(report.path),
                ),
            )
            file_id = self.row(
                "SELECT id FROM files WHERE repository_id = ? AND path = ?", (repository_id, report.path)
            )["id"]  # type: ignore[index]
            self._drop_terms(self._leaf_ids("f.id = ?", (file_id,)))
            first_id = self._leaf_high_water() + 1
            self.conn.execute("DELETE FROM leaves WHERE file_id = ?", (file_id,))
            self.conn.executemany(
                f"INSERT INTO leaves (id, file_id, ordinal, {', '.join(LEAF_COLUMNS)}) "
                f"VALUES (?, ?, ?, {', '.join('?' * len(LEAF_COLUMNS))})",
                [
                    (
                        first_id + ordinal,
                        file_id,
                        ordinal,
                        *(getattr(leaf, c) for c in LEAF_COLUMNS),
                    )
                    for ordinal, leaf in enumerate(leaves)
                ],
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('leaf_high_water', ?)",
                (str(first_id + len(leaves) - 1),),
            )
            self.conn.executemany(
                "INSERT INTO definition_vectors (leaf_id, ordinal, content_hash) VALUES (?, ?, ?)",
                [
                    (first_id + ordinal, number, content_hash)
                    for ordinal, hashes in enumerate(definition_hashes)
                    for number, content_hash in enumerate(hashes)
                ],
            )
            self._write_facts(file_id, definitions, facts, bindings)
            if terms_of is not None:
                self._write_terms(file_id, leaves, facts, terms_of)
            self._keep_terms_mark(repository_id, complete=terms_of is not None)

    def _leaf_high_water(self) -> int:
        """The largest leaf id ever given out. Ids are never reused: a saved
        hierarchy maps leaf ids to its groups, and an edited file's new leaves
        must read as unknown to it (so it is rebuilt), not as its old members."""
        recorded = self.row("SELECT CAST(value AS INTEGER) AS id FROM meta WHERE key = 'leaf_high_water'")
        present = self.row("SELECT COALESCE(MAX(id), 0) AS id FROM leaves")
        return max(int(recorded["id"]) if recorded else 0, int(present["id"]) if present else 0)

    def _write_facts(
        self,
        file_id: int,
        definitions: Iterable[Definition],
        facts: Iterable[LeafFacts],
        bindings: Iterable[ImportBinding] = (),
    ) -> None:
        self.conn.execute("DELETE FROM definitions WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM import_bindings WHERE file_id = ?", (file_id,))
        self.conn.executemany(
            f"INSERT INTO import_bindings (file_id, ordinal, {', '.join(BINDING_COLUMNS)}) "
            f"VALUES (?, ?, {', '.join('?' * len(BINDING_COLUMNS))})",
            [
                (file_id, ordinal, *(getattr(binding, c) for c in BINDING_COLUMNS))
                for ordinal, binding in enumerate(bindings)
            ],
        )
        self.conn.executemany(
            f"INSERT INTO definitions (file_id, ordinal, {', '.join(DEFINITION_COLUMNS)}) "
            f"VALUES (?, ?, {', '.join('?' * len(DEFINITION_COLUMNS))})",
            [
                (file_id, ordinal, *(getattr(definition, c) for c in DEFINITION_COLUMNS))
                for ordinal, definition in enumerate(definitions)
            ],
        )
        leaf_ids = [
            row[0]
            for row in self.conn.execute(
                "SELECT id FROM leaves WHERE file_id = ? ORDER BY ordinal", (file_id,)
            )
        ]
        self.conn.executemany(
            "INSERT INTO leaf_facts (leaf_id, imports, defines, uses, refs) VALUES (?, ?, ?, ?, ?)",
            [
                (leaf_id, *(json.dumps(values) for values in (f.imports, f.defines, f.uses, f.references)))
                for leaf_id, f in zip(leaf_ids, facts)
            ],
        )

    def definitions(
        self, repository_id: int, paths: str | Collection[str] | None = None
    ) -> dict[str, list[Definition]]:
        """path -> the file's definitions in line order (every file of the repository, or of ``paths``:
        one path or several)."""
        if isinstance(paths, str):
            paths = [paths]
        only = f" AND f.path IN ({', '.join('?' * len(paths))})" if paths is not None else ""
        found: dict[str, list[Definition]] = {}
        for row in self.conn.execute(
            f"""SELECT f.path, {", ".join("d." + c for c in DEFINITION_COLUMNS)}
                FROM definitions d JOIN files f ON f.id = d.file_id
                WHERE f.repository_id = ?{only} ORDER BY f.path, d.ordinal""",
            (repository_id, *(paths or ())),
        ):
            found.setdefault(row[0], []).append(Definition(*row[1:]))
        return found

    def leaf_facts(self, leaf_ids: Iterable[int]) -> dict[int, LeafFacts]:
        """leaf id -> its facts (a leaf written before facts were recorded has none)."""
        ids = list(leaf_ids)
        found: dict[int, LeafFacts] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT leaf_id, imports, defines, uses, {self.refs_column} FROM leaf_facts "
                f"WHERE leaf_id IN ({marks})",
                chunk,
            ):
                found[int(row[0])] = LeafFacts(*(tuple(json.loads(value)) for value in row[1:]))
        return found

    def delete_files(self, repository_id: int, paths: Iterable[str]) -> None:
        paths = list(paths)
        with self.transaction():
            for path in paths:
                self._drop_terms(self._leaf_ids("f.repository_id = ? AND f.path = ?", (repository_id, path)))
            self.conn.executemany(
                "DELETE FROM files WHERE repository_id = ? AND path = ?",
                [(repository_id, path) for path in paths],
            )
            self._keep_terms_mark(repository_id, complete=True)

    # -- embeddings ---------------------------------------------------------------

    def cached_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), 500):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT content_hash, dimension, vector FROM embeddings "
                f"WHERE model = ? AND content_hash IN ({marks})",
                (model, *chunk),
            ):
                found[row["content_hash"]] = blob_to_vector(row["vector"], row["dimension"])
        return found

    def save_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, content_hash, dimension, vector) "
                "VALUES (?, ?, ?, ?)",
                [
                    (model, h, int(v.shape[0]), vector_to_blob(v, self.vector_storage))
                    for h, v in vectors.items()
                ],
            )

    # -- leaves -------------------------------------------------------------------

    def data_paths(self, repository_id: int) -> set[str]:
        """Paths of the repository's files cut as data (hsc.chunk.datafiles)."""
        rows = self.rows(
            """SELECT DISTINCT f.path FROM files f JOIN leaves l ON l.file_id = f.id
               WHERE f.repository_id = ? AND l.chunker = 'data'""",
            (repository_id,),
        )
        return {row["path"] for row in rows}

    def leaf_rows(self, repository_id: int, with_text: bool = True) -> list[dict[str, Any]]:
        text = ", l.text" if with_text else ""
        return self.rows(
            f"""SELECT l.id, f.path, f.language, l.ordinal, l.node_type, l.scope, l.start_byte, l.end_byte,
                       l.start_line, l.end_line, l.token_count, l.content_hash, l.chunker{text}
                FROM leaves l JOIN files f ON f.id = l.file_id
                WHERE f.repository_id = ? ORDER BY f.path, l.ordinal""",
            (repository_id,),
        )

    def leaf(self, leaf_id: int) -> dict[str, Any] | None:
        return self.row(
            """SELECT l.*, f.path, f.language, f.repository_id FROM leaves l JOIN files f ON f.id = l.file_id
               WHERE l.id = ?""",
            (leaf_id,),
        )

    def leaves_by_id(self, leaf_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        ids = list(leaf_ids)
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.rows(
                f"""SELECT l.*, f.path, f.language, f.repository_id FROM leaves l
                    JOIN files f ON f.id = l.file_id WHERE l.id IN ({marks})""",
                chunk,
            ):
                found[int(row["id"])] = row
        return found

    def leaf_stamp(self, repository_id: int, model: str) -> str:
        """What a repository's leaf table is made of, in a few bytes: it changes
        whenever any of its files (and so any leaf) is written or deleted. The
        counter is kept by triggers; the files' own figures back it up for a
        database last written without them.

        Read again only when the database may have changed since the last
        read: another connection's commit moves SQLite's ``data_version``, this
        connection's writes its ``total_changes`` (the read costs about 8 ms at
        10^6 leaves in 31,221 files, and every query asks)."""
        state = (int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.conn.total_changes)
        known = self._leaf_stamps.get((repository_id, model))
        if known is not None and known[0] == state:
            return known[1]
        figures = "COUNT(*), TOTAL(leaf_count), TOTAL(id), MAX(indexed_at) FROM files WHERE repository_id = ?"
        try:
            row = self.conn.execute(
                f"SELECT (SELECT generation FROM leaf_generations WHERE repository_id = ?), {figures}",
                (repository_id, repository_id),
            ).fetchone()
        except sqlite3.OperationalError:  # an older database opened read-only: no counter table
            row = (None, *self.conn.execute(f"SELECT {figures}", (repository_id,)).fetchone())
        stamp = ":".join(str(value) for value in (repository_id, model, *row))
        self._leaf_stamps[(repository_id, model)] = (state, stamp)
        return stamp

    def leaf_table_snapshot(self, repository_id: int, model: str) -> tuple[str, LeafTable]:
        """The repository's leaf table and its :meth:`leaf_stamp`, read in one
        transaction, so the stamp is exactly that of the rows read."""
        if self.conn.in_transaction:
            return self.leaf_stamp(repository_id, model), self.leaf_table(repository_id, model)
        self.conn.execute("BEGIN")
        try:
            return self.leaf_stamp(repository_id, model), self.leaf_table(repository_id, model)
        finally:
            self.conn.execute("COMMIT")

    def leaf_table(self, repository_id: int, model: str, paths: list[str] | None = None) -> LeafTable:
        """All leaves of a repository (or of the files in ``paths``) with their
        vectors, in document order.

        A leaf whose vector is missing (only possible mid-run) is left out, so
        the table is always consistent."""
        asked = paths
        only = f" AND f.path IN ({', '.join('?' * len(paths))})" if paths is not None else ""
        rows = self.conn.execute(
            f"""SELECT l.id, f.path, l.scope, l.start_line, l.end_line, l.token_count, e.vector,
                      e.dimension
               FROM leaves l JOIN files f ON f.id = l.file_id
               JOIN embeddings e ON e.model = ? AND e.content_hash = l.content_hash
               WHERE f.repository_id = ?{only} ORDER BY f.path, l.ordinal""",
            (model, repository_id, *(paths or [])),
        ).fetchall()
        paths: list[str] = []
        file_index = np.empty(len(rows), dtype=np.int32)
        for i, row in enumerate(rows):
            if not paths or paths[-1] != row[1]:
                paths.append(row[1])
            file_index[i] = len(paths) - 1
        vectors = blobs_to_matrix([row[6] for row in rows], [row[7] for row in rows])
        row_of = {row[0]: number for number, row in enumerate(rows)}
        return LeafTable(
            leaf_ids=np.array([row[0] for row in rows], dtype=np.int64),
            file_index=file_index,
            paths=paths,
            scopes=[row[2] for row in rows],
            start_lines=np.array([row[3] for row in rows], dtype=np.int32),
            end_lines=np.array([row[4] for row in rows], dtype=np.int32),
            token_counts=np.array([row[5] for row in rows], dtype=np.int32),
            vectors=vectors,
            definitions=self._definition_vectors(repository_id, model, row_of, only, asked),
        )

    def _definition_vectors(
        self, repository_id: int, model: str, row_of: dict[int, int], only: str, paths: list[str] | None
    ) -> DefinitionVectors:
        """The definition vectors of the leaves ``row_of`` maps to table rows (those of a leaf
        left out, or missing mid-run, are left out too), rows ascending."""
        if not self._has_table("definition_vectors"):  # an older database opened read-only
            return DefinitionVectors()
        found = self.conn.execute(
            f"""SELECT d.leaf_id, e.vector, e.dimension
               FROM definition_vectors d JOIN leaves l ON l.id = d.leaf_id JOIN files f ON f.id = l.file_id
               JOIN embeddings e ON e.model = ? AND e.content_hash = d.content_hash
               WHERE f.repository_id = ?{only} ORDER BY f.path, l.ordinal, d.ordinal""",
            (model, repository_id, *(paths or [])),
        ).fetchall()
        found = [row for row in found if row[0] in row_of]
        if not found:
            return DefinitionVectors()
        return DefinitionVectors(
            np.array([row_of[row[0]] for row in found], dtype=np.int64),
            blobs_to_matrix([row[1] for row in found], [row[2] for row in found]),
        )
