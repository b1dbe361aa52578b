"""The SQLite file that holds everything: one per index, WAL mode.

Opening, transactions and the one-writer lock live here; the tables are
read and written by the classes built on :class:`Database` (files, hierarchies,
queries), which :class:`hsc.store.Store` joins into one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from hsc.chunk.roles import file_role
from hsc.store.dbfile import (
    StoreError,
    claim_writer,
    is_unwritable,
    refuse_what_is_not_a_database,
    translated_errors,
)
from hsc.store.schema import (
    APPLICATION_ID,
    COMPLETED_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    identify,
    missing_columns,
)


class Database:
    """An open hsc database: connection, transactions, the writer lock."""

    def __init__(self, path: str | Path, create: bool = True, read_only: bool = False) -> None:
        """Open hsc's database at ``path``, creating it when ``create`` allows.

        Nothing is written before the file is known to be hsc's own (see
        :func:`identify`): another application's SQLite file, a file that is
        not SQLite and a folder are refused untouched, with a
        :class:`StoreError` that names the file and the cause. Without
        ``create`` (read-only commands) a file that holds no index yet is
        refused too, so reading never creates tables. ``read_only`` opens it
        as SQLite's immutable file (nothing is written, not even the log), as
        a database that cannot be written is opened anyway.
        """
        self.path = Path(path)
        self.read_only = False
        self._writers = 0
        self._lock_file: Any = None
        # (repository, model) -> (database state, leaf stamp): see FileTables.leaf_stamp.
        self._leaf_stamps: dict[tuple[int, str], tuple[tuple[int, int], str]] = {}
        refuse_what_is_not_a_database(self.path)
        if (read_only or not create) and not self.path.exists():
            raise StoreError(f"{self.path}: no hsc index here yet; index a repository into it first")
        if read_only:
            self._open_read_only()
            return
        try:
            self._connect(str(self.path), create)
        except StoreError:
            if create or not is_unwritable(self.path):
                raise
            # A database on a read-only disk (or without write permission) can still be read as it is.
            self._open_read_only()

    def _open_read_only(self) -> None:
        self.read_only = True
        self._connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", False)

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
        # A database made before a column was added gets it here, in the same transaction.
        missing = missing_columns(self.conn)
        added = "".join(f"ALTER TABLE {t} ADD COLUMN {c} {d};" for t, c, d in missing)
        added += "".join(COMPLETED_COLUMNS.get((t, c), "") for t, c, _ in missing)
        self.conn.create_function("hsc_file_role", 1, file_role, deterministic=True)
        try:
            self.conn.executescript(f"BEGIN; {SCHEMA} {added} {mark} COMMIT;")
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

    def added_column(self, table: str, column: str) -> str:
        """What to select for a column of hsc.store.schema.ADDED_COLUMNS: the column, or its default
        on a database opened read-only that was made before the column was added."""
        if self.read_only:
            for missing_table, missing, declaration in missing_columns(self.conn):
                if (missing_table, missing) == (table, column):
                    return declaration.split("DEFAULT ", 1)[1]
        return column

    @property
    def refs_column(self) -> str:
        """What to select for leaf_facts.refs (an empty list on an older read-only database)."""
        return self.added_column("leaf_facts", "refs")

    def _has_table(self, name: str) -> bool:
        found = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        return found is not None

    def meta(self, key: str) -> str | None:
        """A value kept in the database's ``meta`` table (None when not set)."""
        found = self.row("SELECT value FROM meta WHERE key = ?", (key,))
        return None if found is None else found["value"]

    def set_meta(self, key: str, value: str | None) -> None:
        """Keep (or with None, forget) a value in the ``meta`` table."""
        with self.transaction():
            if value is None:
                self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, tuple(params))]

    def row(self, sql: str, params: Iterable[Any] = ()) -> dict[str, Any] | None:
        found = self.conn.execute(sql, tuple(params)).fetchone()
        return dict(found) if found else None
