"""The SQLite file that holds everything: one per index, WAL mode.

All SQL lives here. Each file's ingestion is written in one transaction, and
embeddings are committed before the leaves that use them, so a run killed
at any moment leaves a database that the next run simply continues.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

from hsc.dbfile import (
    StoreError,
    claim_writer,
    is_unwritable,
    refuse_what_is_not_a_database,
    translated_errors,
)
from hsc.hierarchy import LeafTable
from hsc.model import Definition, FileReport, Leaf, LeafFacts

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS repositories (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    embedding_model TEXT,
    tokenizer TEXT,
    chunk_key TEXT,
    parameters TEXT,
    indexed_at REAL
);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    language TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT NOT NULL DEFAULT '',
    chunk_key TEXT NOT NULL DEFAULT '',
    embedding_model TEXT NOT NULL DEFAULT '',
    leaf_count INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL,
    UNIQUE (repository_id, path)
);
CREATE TABLE IF NOT EXISTS leaves (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    node_type TEXT NOT NULL,
    scope TEXT NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    token_count INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    chunker TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS leaves_by_file ON leaves (file_id, ordinal);
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, content_hash)
);
CREATE TABLE IF NOT EXISTS hierarchies (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    parameters TEXT NOT NULL,
    embedding_model TEXT NOT NULL,
    created_at REAL NOT NULL,
    leaf_count INTEGER NOT NULL,
    group_count INTEGER NOT NULL,
    document_count INTEGER NOT NULL,
    topic_boundaries INTEGER NOT NULL,
    UNIQUE (repository_id, name)
);
CREATE TABLE IF NOT EXISTS nodes (
    id INTEGER PRIMARY KEY,
    hierarchy_id INTEGER NOT NULL REFERENCES hierarchies(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('mid', 'top')),
    ordinal INTEGER NOT NULL,
    file_id INTEGER NOT NULL,
    parent_id INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    token_count INTEGER NOT NULL,
    leaf_count INTEGER NOT NULL,
    summariser TEXT,
    summary_model TEXT,
    summary_hash TEXT
);
CREATE INDEX IF NOT EXISTS nodes_by_hierarchy ON nodes (hierarchy_id, level, ordinal);
CREATE INDEX IF NOT EXISTS nodes_by_parent ON nodes (parent_id);
CREATE TABLE IF NOT EXISTS memberships (
    hierarchy_id INTEGER NOT NULL REFERENCES hierarchies(id) ON DELETE CASCADE,
    leaf_id INTEGER NOT NULL,
    node_id INTEGER NOT NULL,
    PRIMARY KEY (hierarchy_id, leaf_id)
);
CREATE INDEX IF NOT EXISTS memberships_by_node ON memberships (node_id);
CREATE TABLE IF NOT EXISTS summaries (
    summariser TEXT NOT NULL,
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    text TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    PRIMARY KEY (summariser, model, content_hash)
);
CREATE TABLE IF NOT EXISTS definitions (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    scope TEXT NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    PRIMARY KEY (file_id, ordinal)
);
CREATE TABLE IF NOT EXISTS leaf_facts (
    leaf_id INTEGER PRIMARY KEY REFERENCES leaves(id) ON DELETE CASCADE,
    imports TEXT NOT NULL,  -- JSON arrays of names
    defines TEXT NOT NULL,
    uses TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS queries (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER REFERENCES repositories(id) ON DELETE CASCADE,
    hierarchy_id INTEGER,
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    parameters TEXT NOT NULL,
    leaves_compared INTEGER NOT NULL,
    elapsed_ms REAL NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS query_results (
    query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    stage TEXT NOT NULL,
    rank INTEGER NOT NULL,
    node_id TEXT NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (query_id, stage, rank)
);
-- Identifier-split terms of each leaf (rowid = leaf id) for BM25; filled on first use.
CREATE VIRTUAL TABLE IF NOT EXISTS leaf_terms USING fts5(terms, tokenize = 'unicode61');
"""

LEAF_COLUMNS = [
    "node_type",
    "scope",
    "start_byte",
    "end_byte",
    "start_line",
    "end_line",
    "token_count",
    "content_hash",
    "chunker",
    "text",
]


# "HSC1": PRAGMA application_id of every database hsc creates (SQLite's way to say whose file it is).
APPLICATION_ID = 0x48534331
# The tables that tell a database from before application_id was set apart as hsc's.
_HSC_TABLES = {"meta", "repositories", "files", "leaves", "embeddings"}


def identify(conn: sqlite3.Connection) -> str:
    """Whose database this is, read without writing: "hsc", "empty" (no
    tables: a new file), or "foreign: <why>" for anyone else's."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if application_id == APPLICATION_ID:
        return "hsc"
    if application_id:
        return f"foreign: another application's SQLite database (application_id 0x{application_id:08x})"
    if not tables:
        return "empty"
    if tables >= _HSC_TABLES and conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone():
        return "hsc"  # made before hsc set its application_id
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    return f"foreign: another application's SQLite database (tables: {shown})"


DEFINITION_COLUMNS = ["kind", "name", "scope", "signature", "doc", "start_line", "end_line"]


def vector_to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class Store:
    """Typed access to the index database; the only module that speaks SQL."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        """Open hsc's database at ``path``, creating it when ``create`` allows.

        Nothing is written before the file is known to be hsc's own (see
        :func:`identify`): another application's SQLite file, a file that is
        not SQLite and a folder are refused untouched, with a
        :class:`StoreError` that names the file and the cause. Without
        ``create`` (read-only commands) a file that holds no index yet is
        refused too, so reading never creates tables.
        """
        self.path = Path(path)
        self.read_only = False
        self._writers = 0
        self._lock_file: Any = None
        refuse_what_is_not_a_database(self.path)
        if not create and not self.path.exists():
            raise StoreError(f"{self.path}: no hsc index here yet; index a repository into it first")
        try:
            self._connect(str(self.path), create)
        except StoreError:
            if create or not is_unwritable(self.path):
                raise
            # A database on a read-only disk (or without write permission) can still be read as it is.
            self.read_only = True
            self._connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", create)

    def _connect(self, target: str, create: bool) -> None:
        with translated_errors(self.path, ""):
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we open transactions ourselves, explicitly.
            self.conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=True)
        try:
            with translated_errors(self.path, ""):
                self._open(create)
        except BaseException:
            self.conn.close()
            raise

    def _open(self, create: bool) -> None:
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA busy_timeout=10000")
        kind = identify(self.conn)
        if kind.startswith("foreign"):
            raise StoreError(f"{self.path}: {kind[len('foreign: ') :]}; hsc opens only its own databases")
        if kind == "empty" and not create:
            raise StoreError(f"{self.path}: no hsc index here yet; index a repository into it first")
        if self.read_only:
            return
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        # CREATE ... IF NOT EXISTS of what exists takes no lock; the rows below are written only
        # when missing, so a reader never waits on (or fails against) a running index.
        # One transaction, the mark included: a new file is made whole (and known as hsc's) or not
        # at all, even if the process is killed halfway, and its log stays small.
        mark = ""
        if kind == "empty" or (create and self.conn.execute("PRAGMA application_id").fetchone()[0] == 0):
            mark = (
                f"PRAGMA application_id={APPLICATION_ID}; INSERT OR IGNORE INTO meta (key, value) "
                f"VALUES ('schema_version', '{SCHEMA_VERSION}');"
            )
        try:
            self.conn.executescript(f"BEGIN; {SCHEMA} {mark} COMMIT;")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")  # may fail too (a full disk): then it is rolled back below
        except BaseException:
            # SQLite rolls some failures back itself (SQLITE_FULL can); a second
            # ROLLBACK would then raise and hide the real error.
            if self.conn.in_transaction:
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            raise

    @contextmanager
    def writer(self, doing: str = "indexing") -> Iterator[None]:
        """One writing run (index or build) at a time per database, across
        processes: a second one gets a :class:`StoreBusy` at once instead of
        repeating the first one's work. The lock is an OS lock on a file
        beside the database, so a killed run releases it. Re-entrant.
        SQLite errors inside become one :class:`StoreError` line."""
        if self._writers == 0:
            self._lock_file = claim_writer(self.path, doing)
            self._compact_log()
        self._writers += 1
        try:
            with translated_errors(self.path, doing):
                yield
        finally:
            self._writers -= 1
            if self._writers == 0:
                self._compact_log()
                self._lock_file.close()  # closing releases the lock
                self._lock_file = None

    def _compact_log(self) -> None:
        """Move the write-ahead log into the database and empty it, before
        and after a run. After a full disk this hands the log's space back
        (the committed part goes where it belongs, the failed tail is
        dropped), so once space is freed the next run starts small instead
        of growing the log further. Best effort: on a disk still full it
        fails quietly and the run's own error says why."""
        previous = self.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        try:
            self.conn.execute("PRAGMA busy_timeout=2000")  # readers finish their query, then it goes on
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass
        finally:
            with suppress(sqlite3.Error):
                self.conn.execute(f"PRAGMA busy_timeout={int(previous)}")

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, tuple(params))]

    def row(self, sql: str, params: Iterable[Any] = ()) -> dict[str, Any] | None:
        found = self.conn.execute(sql, tuple(params)).fetchone()
        return dict(found) if found else None

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
    ) -> None:
        """Write one file, its leaves and their facts atomically, replacing what was there.
        ``facts`` is parallel to ``leaves`` (or empty)."""
        with self.transaction():
            self.conn.execute(
                """INSERT INTO files (repository_id, path, language, status, reason, size, content_hash,
                                      chunk_key, embedding_model, leaf_count, indexed_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (repository_id, path) DO UPDATE SET
                     language = excluded.language, status = excluded.status, reason = excluded.reason,
                     size = excluded.size, content_hash = excluded.content_hash,
                     chunk_key = excluded.chunk_key, embedding_model = excluded.embedding_model,
                     leaf_count = excluded.leaf_count, indexed_at = excluded.indexed_at""",
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
                ),
            )
            file_id = self.row(
                "SELECT id FROM files WHERE repository_id = ? AND path = ?", (repository_id, report.path)
            )["id"]  # type: ignore[index]
            self.conn.execute("DELETE FROM leaves WHERE file_id = ?", (file_id,))
            self.conn.executemany(
                f"INSERT INTO leaves (file_id, ordinal, {', '.join(LEAF_COLUMNS)}) "
                f"VALUES (?, ?, {', '.join('?' * len(LEAF_COLUMNS))})",
                [
                    (
                        file_id,
                        ordinal,
                        *(getattr(leaf, c) for c in LEAF_COLUMNS),
                    )
                    for ordinal, leaf in enumerate(leaves)
                ],
            )
            self._write_facts(file_id, definitions, facts)

    def _write_facts(
        self, file_id: int, definitions: Iterable[Definition], facts: Iterable[LeafFacts]
    ) -> None:
        self.conn.execute("DELETE FROM definitions WHERE file_id = ?", (file_id,))
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
            "INSERT INTO leaf_facts (leaf_id, imports, defines, uses) VALUES (?, ?, ?, ?)",
            [
                (leaf_id, json.dumps(fact.imports), json.dumps(fact.defines), json.dumps(fact.uses))
                for leaf_id, fact in zip(leaf_ids, facts)
            ],
        )

    def definitions(self, repository_id: int, path: str | None = None) -> dict[str, list[Definition]]:
        """path -> the file's definitions in line order (one file, or every file of the repository)."""
        path_filter = " AND f.path = ?" if path is not None else ""
        found: dict[str, list[Definition]] = {}
        for row in self.conn.execute(
            f"""SELECT f.path, {", ".join("d." + c for c in DEFINITION_COLUMNS)}
                FROM definitions d JOIN files f ON f.id = d.file_id
                WHERE f.repository_id = ?{path_filter} ORDER BY f.path, d.ordinal""",
            (repository_id, path) if path is not None else (repository_id,),
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
                f"SELECT leaf_id, imports, defines, uses FROM leaf_facts WHERE leaf_id IN ({marks})", chunk
            ):
                found[int(row[0])] = LeafFacts(*(tuple(json.loads(value)) for value in row[1:]))
        return found

    def delete_files(self, repository_id: int, paths: Iterable[str]) -> None:
        with self.transaction():
            self.conn.executemany(
                "DELETE FROM files WHERE repository_id = ? AND path = ?",
                [(repository_id, path) for path in paths],
            )

    # -- embeddings ---------------------------------------------------------------

    def cached_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), 500):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT content_hash, vector FROM embeddings WHERE model = ? AND content_hash IN ({marks})",
                (model, *chunk),
            ):
                found[row["content_hash"]] = np.frombuffer(row["vector"], dtype=np.float32)
        return found

    def save_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, content_hash, dimension, vector) "
                "VALUES (?, ?, ?, ?)",
                [(model, h, int(v.shape[0]), vector_to_blob(v)) for h, v in vectors.items()],
            )

    # -- leaves -------------------------------------------------------------------

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

    def leaf_table(self, repository_id: int, model: str, paths: list[str] | None = None) -> LeafTable:
        """All leaves of a repository (or of the files in ``paths``) with their
        vectors, in document order.

        A leaf whose vector is missing (only possible mid-run) is left out, so
        the table is always consistent."""
        only = f" AND f.path IN ({', '.join('?' * len(paths))})" if paths is not None else ""
        rows = self.conn.execute(
            f"""SELECT l.id, f.path, l.scope, l.start_line, l.end_line, l.token_count, e.vector
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
        if rows:
            vectors = np.frombuffer(b"".join(row[6] for row in rows), dtype=np.float32).reshape(len(rows), -1)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        return LeafTable(
            leaf_ids=np.array([row[0] for row in rows], dtype=np.int64),
            file_index=file_index,
            paths=paths,
            scopes=[row[2] for row in rows],
            start_lines=np.array([row[3] for row in rows], dtype=np.int32),
            end_lines=np.array([row[4] for row in rows], dtype=np.int32),
            token_counts=np.array([row[5] for row in rows], dtype=np.int32),
            vectors=vectors,
        )

    # -- summaries ----------------------------------------------------------------

    def summary(self, summariser: str, model: str, content_hash: str) -> dict[str, Any] | None:
        return self.row(
            "SELECT * FROM summaries WHERE summariser = ? AND model = ? AND content_hash = ?",
            (summariser, model, content_hash),
        )

    def save_summary(self, summariser: str, model: str, content_hash: str, text: str, note: str = "") -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO summaries (summariser, model, content_hash, text, note, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (summariser, model, content_hash, text, note, time.time()),
        )

    # -- hierarchies --------------------------------------------------------------

    def save_hierarchy(
        self,
        repository_id: int,
        name: str,
        parameters: dict[str, Any],
        model: str,
        counts: dict[str, int],
        mid_rows: list[dict[str, Any]],
        top_rows: list[dict[str, Any]],
        memberships: list[tuple[int, int]],
    ) -> int:
        """Replace the hierarchy called ``name``. ``mid_rows[i]["parent"]`` is the
        index of its top row; ``memberships`` pairs (leaf id, mid row index).
        A fresh id each time, so anything keyed by id (the HNSW file) is new."""
        with self.transaction():
            self.conn.execute(
                "DELETE FROM hierarchies WHERE repository_id = ? AND name = ?", (repository_id, name)
            )
            hierarchy_id = int(
                self.conn.execute(
                    """INSERT INTO hierarchies (repository_id, name, parameters, embedding_model, created_at,
                           leaf_count, group_count, document_count, topic_boundaries)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        repository_id,
                        name,
                        json.dumps(parameters),
                        model,
                        time.time(),
                        counts["leaves"],
                        counts["groups"],
                        counts["documents"],
                        counts["topic_boundaries"],
                    ),
                ).lastrowid
                or 0
            )
            mid_ids = self._insert_nodes(hierarchy_id, mid_rows, top_rows)
            self.conn.executemany(
                "INSERT INTO memberships (hierarchy_id, leaf_id, node_id) VALUES (?, ?, ?)",
                [(hierarchy_id, leaf_id, mid_ids[mid]) for leaf_id, mid in memberships],
            )
        return hierarchy_id

    def replace_hierarchy_files(
        self,
        hierarchy_id: int,
        repository_id: int,
        paths: list[str],
        mid_rows: list[dict[str, Any]],
        top_rows: list[dict[str, Any]],
        memberships: list[tuple[int, int]],
    ) -> None:
        """Swap the groups and documents of the files in ``paths`` (and of files
        no longer indexed) for new ones, in one transaction; the hierarchy keeps
        its id, its ordinals follow document order again and its counts are
        recounted. Rows are as for :meth:`save_hierarchy`."""
        marks = ", ".join("?" * len(paths))
        with self.transaction():
            stale = [
                row[0]
                for row in self.conn.execute(
                    f"""SELECT n.id FROM nodes n WHERE n.hierarchy_id = ? AND (n.file_id NOT IN
                           (SELECT id FROM files) OR n.file_id IN
                           (SELECT id FROM files WHERE repository_id = ? AND path IN ({marks})))""",
                    (hierarchy_id, repository_id, *paths),
                )
            ]
            self.conn.executemany(
                "DELETE FROM memberships WHERE hierarchy_id = ? AND node_id = ?",
                [(hierarchy_id, node_id) for node_id in stale],
            )
            self.conn.executemany("DELETE FROM nodes WHERE id = ?", [(node_id,) for node_id in stale])
            mid_ids = self._insert_nodes(hierarchy_id, mid_rows, top_rows)
            self.conn.executemany(
                "INSERT INTO memberships (hierarchy_id, leaf_id, node_id) VALUES (?, ?, ?)",
                [(hierarchy_id, leaf_id, mid_ids[mid]) for leaf_id, mid in memberships],
            )
            self.conn.execute(
                """UPDATE nodes SET ordinal = ranked.position FROM (
                       SELECT n.id, ROW_NUMBER() OVER (PARTITION BY n.level
                           ORDER BY f.path, n.start_line, n.id) - 1 AS position
                       FROM nodes n JOIN files f ON f.id = n.file_id WHERE n.hierarchy_id = ?) AS ranked
                   WHERE nodes.id = ranked.id""",
                (hierarchy_id,),
            )
            self.conn.execute(
                """UPDATE hierarchies SET created_at = ?,
                       leaf_count = (SELECT COUNT(*) FROM memberships WHERE hierarchy_id = ?),
                       group_count = (SELECT COUNT(*) FROM nodes WHERE hierarchy_id = ? AND level = 'mid'),
                       document_count = (SELECT COUNT(*) FROM nodes WHERE hierarchy_id = ? AND level = 'top')
                   WHERE id = ?""",
                (time.time(), hierarchy_id, hierarchy_id, hierarchy_id, hierarchy_id),
            )
            # Every file's groups are its document's plus one per topic boundary inside it.
            self.conn.execute(
                "UPDATE hierarchies SET topic_boundaries = group_count - document_count WHERE id = ?",
                (hierarchy_id,),
            )

    NODE_COLUMNS = (
        "file_id",
        "start_line",
        "end_line",
        "token_count",
        "leaf_count",
        "summariser",
        "summary_model",
        "summary_hash",
    )

    def _insert_nodes(
        self, hierarchy_id: int, mid_rows: list[dict[str, Any]], top_rows: list[dict[str, Any]]
    ) -> list[int]:
        """Insert documents, then groups under them; the groups' new ids, in order."""
        columns = self.NODE_COLUMNS
        insert = (
            f"INSERT INTO nodes (hierarchy_id, level, ordinal, parent_id, {', '.join(columns)}) "
            f"VALUES (?, ?, ?, ?, {', '.join('?' * len(columns))})"
        )
        top_ids = []
        for ordinal, top in enumerate(top_rows):
            values = (hierarchy_id, "top", ordinal, None, *(top.get(c) for c in columns))
            top_ids.append(int(self.conn.execute(insert, values).lastrowid or 0))
        mid_ids = []
        for ordinal, mid in enumerate(mid_rows):
            values = (hierarchy_id, "mid", ordinal, top_ids[mid["parent"]], *(mid.get(c) for c in columns))
            mid_ids.append(int(self.conn.execute(insert, values).lastrowid or 0))
        return mid_ids

    def hierarchies(self, repository_id: int) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM hierarchies WHERE repository_id = ? ORDER BY name", (repository_id,))

    def hierarchy(self, hierarchy_id: int) -> dict[str, Any] | None:
        return self.row("SELECT * FROM hierarchies WHERE id = ?", (hierarchy_id,))

    def hierarchy_by_name(self, repository_id: int, name: str) -> dict[str, Any] | None:
        return self.row(
            "SELECT * FROM hierarchies WHERE repository_id = ? AND name = ?", (repository_id, name)
        )

    def delete_hierarchy(self, hierarchy_id: int) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM hierarchies WHERE id = ?", (hierarchy_id,))

    NODE_SELECT = """SELECT n.*, f.path, f.language, s.text AS summary, s.note AS summary_note
                     FROM nodes n JOIN files f ON f.id = n.file_id
                     LEFT JOIN summaries s ON s.summariser = n.summariser AND s.model = n.summary_model
                          AND s.content_hash = n.summary_hash"""

    def nodes(self, hierarchy_id: int, level: str) -> list[dict[str, Any]]:
        return self.rows(
            f"{self.NODE_SELECT} WHERE n.hierarchy_id = ? AND n.level = ? ORDER BY n.ordinal",
            (hierarchy_id, level),
        )

    def node(self, node_id: int) -> dict[str, Any] | None:
        return self.row(f"{self.NODE_SELECT} WHERE n.id = ?", (node_id,))

    def child_nodes(self, node_id: int) -> list[dict[str, Any]]:
        return self.rows(f"{self.NODE_SELECT} WHERE n.parent_id = ? ORDER BY n.ordinal", (node_id,))

    def group_members(
        self, hierarchy_id: int, node_id: int | None = None, with_text: bool = True
    ) -> dict[int, list[dict[str, Any]]]:
        """Mid node id -> its leaf rows in document order, for one node or all, in one query."""
        text = ", l.text" if with_text else ""
        node_filter = " AND m.node_id = ?" if node_id is not None else ""
        members: dict[int, list[dict[str, Any]]] = {} if node_id is None else {node_id: []}
        for row in self.rows(
            f"""SELECT m.node_id, l.id, l.scope{text} FROM memberships m
                JOIN leaves l ON l.id = m.leaf_id JOIN files f ON f.id = l.file_id
                WHERE m.hierarchy_id = ?{node_filter} ORDER BY f.path, l.ordinal""",
            (hierarchy_id, node_id) if node_id is not None else (hierarchy_id,),
        ):
            members.setdefault(int(row.pop("node_id")), []).append(row)
        return members

    def memberships(self, hierarchy_id: int) -> dict[int, int]:
        """leaf id -> mid node id."""
        return {
            int(leaf): int(node)
            for leaf, node in self.conn.execute(
                "SELECT leaf_id, node_id FROM memberships WHERE hierarchy_id = ?", (hierarchy_id,)
            )
        }

    def parent_of_leaf(self, hierarchy_id: int, leaf_id: int) -> int | None:
        found = self.row(
            "SELECT node_id FROM memberships WHERE hierarchy_id = ? AND leaf_id = ?", (hierarchy_id, leaf_id)
        )
        return int(found["node_id"]) if found else None

    # -- lexical search -------------------------------------------------------------

    def sync_leaf_terms(self, repository_id: int, terms_of: Callable[[str], str]) -> int:
        """Give every leaf of the repository its row of terms (``terms_of(scope + text)``)
        and drop rows of leaves that are gone; returns the number added. One transaction."""
        missing = self.conn.execute(
            """SELECT l.id, l.scope, l.text FROM leaves l JOIN files f ON f.id = l.file_id
               WHERE f.repository_id = ? AND l.id NOT IN (SELECT rowid FROM leaf_terms)""",
            (repository_id,),
        ).fetchall()
        with self.transaction():
            self.conn.execute("DELETE FROM leaf_terms WHERE rowid NOT IN (SELECT id FROM leaves)")
            self.conn.executemany(
                "INSERT INTO leaf_terms (rowid, terms) VALUES (?, ?)",
                [(row[0], terms_of(f"{row[1]}\n{row[2]}")) for row in missing],
            )
        return len(missing)

    def lexical_search(self, repository_id: int, match: str, limit: int) -> list[tuple[int, float]]:
        """(leaf id, BM25 score, higher is better) of the repository's best
        ``limit`` leaves for an FTS5 ``match`` expression."""
        if not match:
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
