"""The database file itself, before and around SQL: is it a database at
all, who may write it now, and what its errors mean in a person's words.

:mod:`hsc.store` speaks the SQL; this module holds what needs none.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(RuntimeError):
    """A database problem, as one line that names the file and the cause."""


def refuse_what_is_not_a_database(path: Path) -> None:
    if path.is_dir():
        raise StoreError(f"{path}: is a folder, not a database file")
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as error:
        raise StoreError(f"{path}: cannot be read ({error.strerror or error})") from None
    if header and header != SQLITE_HEADER:
        raise StoreError(f"{path}: not an SQLite database; hsc refuses to touch it")


# SQLite's error names -> (what happened, what to do), in a person's words.
_CAUSES = {
    "SQLITE_FULL": ("the disk is full", "free some space and run again; what was committed so far is kept"),
    "SQLITE_READONLY": ("the database is read-only", "check the permissions of the file and folder"),
    "SQLITE_BUSY": ("the database is locked by another process", "try again when it has finished"),
    "SQLITE_LOCKED": ("the database is locked by another connection", "try again when it has finished"),
    "SQLITE_NOTADB": ("not an SQLite database", "hsc refuses to touch it"),
    "SQLITE_CANTOPEN": ("the database file cannot be opened", "check that its folder exists and is writable"),
    "SQLITE_CORRUPT": ("the database file is damaged", "move it away and index again"),
    "SQLITE_IOERR": ("an I/O error on the database", "check the disk"),
    "SQLITE_PERM": ("permission denied", "check the file's permissions"),
}


def is_unwritable(path: Path) -> bool:
    """The database or its folder cannot be written (permissions or a read-only disk)."""
    return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def explain(error: BaseException, doing: str = "", path: Path | None = None) -> str:
    """One line for an SQLite (or OS) error: what happened (while what), SQLite's own words, what to do.
    With ``path``, "cannot open" on a file that cannot be written says read-only (SQLite
    cannot even read a WAL database it may not write beside)."""
    if isinstance(error, StoreError):
        return str(error)
    while_ = f" while {doing}" if doing else ""
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_CANTOPEN") and path is not None and is_unwritable(path):
        cause, advice = _CAUSES["SQLITE_READONLY"]
        return f"{cause}{while_} ({error}); {advice}"
    if isinstance(error, OSError):
        if error.errno == errno.ENOSPC:
            cause, advice = _CAUSES["SQLITE_FULL"]
            return f"{cause}{while_} ({error.strerror}); {advice}"
        return f"{error.strerror or error}{while_}"
    for prefix, (cause, advice) in _CAUSES.items():
        if name == prefix or name.startswith(prefix + "_"):
            return f"{cause}{while_} ({error}); {advice}"
    return f"{error}{while_}"


@contextmanager
def translated_errors(path: Path, doing: str) -> Iterator[None]:
    """Turn an SQLite or OS error into one :class:`StoreError` line naming the file."""
    try:
        yield
    except StoreError:
        raise
    except (sqlite3.Error, OSError) as error:
        raise StoreError(f"{path}: {explain(error, doing, path)}") from error


class StoreBusy(StoreError):
    """Another process is writing the same database (indexing or building)."""


def claim_writer(path: Path, doing: str) -> Any:
    """An exclusive, non-blocking lock on ``<database>.lock``, holding who has it."""
    lock_path = path.with_name(path.name + ".lock")
    try:
        handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 (held for the whole run)
    except OSError as error:
        raise StoreError(f"{lock_path}: cannot create the lock file ({explain(error)})") from None
    if fcntl is None:  # no flock on this platform: no cross-process claim, as before
        return handle
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StoreBusy(
            f"{path}: another hsc run is already writing it ({holder}); wait for it to finish, then run again"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{doing}, pid {os.getpid()}, since {time.strftime('%H:%M:%S')}")
    handle.flush()
    return handle
