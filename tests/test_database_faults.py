"""The database under faults: other people's files, folders, a full disk, a
read-only disk, two writers. Each ends in one line naming the file and the
cause, and nothing that was there is lost or changed."""

from __future__ import annotations

import gc
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT

from hsc.api import Index
from hsc.store import APPLICATION_ID, Store
from hsc.store.dbfile import StoreBusy, StoreError

FUNCTIONS = [
    ("parse_config", "import tomllib\n\n\ndef parse_config(path):\n    with open(path, 'rb') as f:\n"),
    ("send_email", "import smtplib\n\n\ndef send_email(to, body):\n    server = smtplib.SMTP('localhost')\n"),
    ("resize_image", "def resize_image(image, width, height):\n    return image.resize((width, height))\n"),
]


def hsc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "hsc", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def one_line_error(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if not line.startswith(("Loading weights", "["))]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def small_repository(parent: Path, copies: int = 4) -> Path:
    root = parent / "repo"
    root.mkdir()
    for number in range(copies):
        for name, body in FUNCTIONS:
            (root / f"{name}_{number}.py").write_text(body + f"        return {number}\n")
    return root


def sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


@pytest.fixture()
def foreign_db(tmp_path: Path) -> Path:
    (tmp_path / "other").mkdir()
    path = tmp_path / "other" / "notes.db"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        other.execute("INSERT INTO notes (body) VALUES ('keep me')")
    other.close()
    return path


def test_a_foreign_sqlite_file_is_refused_untouched(foreign_db: Path, tmp_path: Path) -> None:
    repo = small_repository(tmp_path, copies=1)
    before, listing = sha1(foreign_db), sorted(os.listdir(foreign_db.parent))
    for args in (("stats",), ("query", "anything"), ("export",), ("index", str(repo))):
        message = one_line_error(hsc(*args, "--db", str(foreign_db)))
        assert message == (
            f"hsc: {foreign_db}: another application's SQLite database (tables: notes); "
            "hsc opens only its own databases"
        )
    assert sha1(foreign_db) == before
    assert sorted(os.listdir(foreign_db.parent)) == listing  # no -wal, -shm or lock file either
    with sqlite3.connect(foreign_db) as other:  # and another application id is refused as well
        other.execute("PRAGMA application_id = 1234")
    other.close()
    with pytest.raises(StoreError, match="application_id 0x000004d2"):
        Store(foreign_db)


def test_folders_non_databases_and_empty_files_get_one_line(tmp_path: Path) -> None:
    (tmp_path / "folder.db").mkdir()
    (tmp_path / "text.db").write_text("not a database\n")
    (tmp_path / "empty.db").touch()
    assert one_line_error(hsc("stats", "--db", str(tmp_path / "folder.db"))).endswith(
        "folder.db: is a folder, not a database file"
    )
    assert one_line_error(hsc("stats", "--db", str(tmp_path / "text.db"))).endswith(
        "text.db: not an SQLite database; hsc refuses to touch it"
    )
    assert (tmp_path / "text.db").read_text() == "not a database\n"
    # A read-only command never creates tables, even in an empty file.
    assert one_line_error(hsc("stats", "--db", str(tmp_path / "empty.db"))).endswith(
        "empty.db: no hsc index here yet; index a repository into it first"
    )
    assert (tmp_path / "empty.db").stat().st_size == 0


def test_hsc_marks_its_databases_and_still_opens_unmarked_older_ones(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.db")
    assert store.conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    store.conn.execute("PRAGMA application_id = 0")  # as a database made before the id existed
    store.close()
    assert Store(tmp_path / "new.db", create=False).conn.execute("PRAGMA application_id").fetchone()[0] == 0
    Store(tmp_path / "new.db").close()  # a writing open marks it
    reopened = sqlite3.connect(tmp_path / "new.db")
    assert reopened.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    reopened.close()


def canonical_dump(database: Path) -> list[tuple]:
    """What an index holds, without ids, times or file bytes: comparable across runs."""
    with sqlite3.connect(database) as conn:
        files = conn.execute(
            "SELECT path, language, status, reason, size, content_hash, leaf_count FROM files ORDER BY path"
        ).fetchall()
        leaves = conn.execute(
            """SELECT f.path, l.ordinal, l.node_type, l.scope, l.start_byte, l.end_byte, l.start_line,
                      l.end_line, l.token_count, l.content_hash, l.text
               FROM leaves l JOIN files f ON f.id = l.file_id ORDER BY f.path, l.ordinal"""
        ).fetchall()
        vectors = conn.execute("SELECT model, content_hash, vector FROM embeddings ORDER BY 1, 2").fetchall()
        nodes = conn.execute(
            """SELECT h.name, n.level, n.ordinal, f.path, n.start_line, n.end_line, n.token_count,
                      n.leaf_count, n.summariser, n.summary_hash
               FROM nodes n JOIN hierarchies h ON h.id = n.hierarchy_id JOIN files f ON f.id = n.file_id
               ORDER BY h.name, n.level, n.ordinal"""
        ).fetchall()
        summaries = conn.execute(
            "SELECT summariser, model, content_hash, text FROM summaries ORDER BY 1, 2, 3"
        ).fetchall()
    conn.close()
    return [*files, *leaves, *vectors, *nodes, *summaries]


def integrity(database: Path) -> str:
    with sqlite3.connect(database) as conn:
        answer = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    return answer


@contextmanager
def small_tmpfs(size: str) -> Iterator[Path]:
    """A real, small file system (root only)."""
    mount_point = Path(f"/tmp/hsc-full-{uuid.uuid4().hex[:8]}")
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)])
    if done.returncode != 0:
        mount_point.rmdir()
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail("CI runs as root, where mounting a tmpfs must work")
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)
        mount_point.rmdir()


def test_a_full_disk_then_freed_space_gives_a_sound_complete_index(tmp_path, embedder) -> None:
    repo = small_repository(tmp_path)
    with Index.open(tmp_path / "clean.db", embedder=embedder) as clean:
        clean.index(repo)
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root (the max_page_count test covers the rest)")
    # 4 MB: room for a whole run's write-ahead log once the filler is gone.
    with small_tmpfs("4m") as disk:
        filler = disk / "filler"
        filler.write_bytes(b"\0" * (4096 * 1024 - 240 * 1024))  # 240 kB left: enough to open, not to index
        database = disk / "index.db"
        with Index.open(database, embedder=embedder) as index:
            with pytest.raises(StoreError) as failure:
                index.index(repo)
        message = str(failure.value)
        # The files or the hierarchy built over them (one run does both) may be what fills it.
        full = rf"{re.escape(str(database))}: the disk is full while (indexing|building) \("
        assert re.match(full, message)
        assert "\n" not in message
        del failure  # its traceback holds the run's frames, which may map a side file on the disk
        gc.collect()
        assert integrity(database) == "ok"
        filler.unlink()  # space freed: the next run completes
        with Index.open(database, embedder=embedder) as index:
            index.index(repo)
        assert integrity(database) == "ok"
        assert canonical_dump(database) == canonical_dump(tmp_path / "clean.db")
        assert not (disk / "index.db-wal").exists() or (disk / "index.db-wal").stat().st_size == 0


def test_a_database_that_cannot_grow_fails_cleanly_and_recovers(tmp_path, embedder) -> None:
    """The same without root: SQLite's max_page_count makes the file full."""
    repo = small_repository(tmp_path)
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.store.conn.execute("PRAGMA max_page_count = 12")
        with pytest.raises(StoreError, match=r"the disk is full while indexing .*what was committed so far"):
            index.index(repo)
    assert integrity(database) == "ok"
    with Index.open(database, embedder=embedder) as index:
        report = index.index(repo)
        assert report.files_seen == len(FUNCTIONS) * 4
    with Index.open(tmp_path / "clean.db", embedder=embedder) as clean:
        clean.index(repo)
    assert canonical_dump(database) == canonical_dump(tmp_path / "clean.db")


def test_a_read_only_database_gets_one_line(tmp_path, embedder) -> None:
    if os.geteuid() != 0:
        pytest.skip("a read-only mount needs root")
    repo = small_repository(tmp_path, copies=1)
    with small_tmpfs("2m") as disk:
        with Index.open(disk / "index.db", embedder=embedder) as index:
            index.index(repo)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        (repo / "new_file.py").write_text("def brand_new():\n    return 'new'\n")
        message = one_line_error(hsc("index", str(repo), "--db", str(disk / "index.db")))
        assert message.startswith(f"hsc: {disk / 'index.db'}:")
        assert "read-only" in message or "readonly" in message
        stats = hsc("stats", "--db", str(disk / "index.db"))  # reading still works
        assert stats.returncode == 0 and "leaves" in stats.stdout, stats.stderr


def test_a_second_writer_is_told_and_does_no_work(tmp_path, embedder) -> None:
    repo = small_repository(tmp_path, copies=1)
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as first:
        with first.store.writer("indexing"):  # a run in progress
            second = hsc("index", str(repo), "--db", str(database))
            message = one_line_error(second)
            busy = f"hsc: {database}: another hsc run is already writing it (indexing, pid "
            assert message.startswith(busy)
            assert message.endswith("wait for it to finish, then run again")
            with Index.open(database, embedder=embedder) as same_process_other_handle:
                with pytest.raises(StoreBusy):
                    same_process_other_handle.index(repo)
        assert first.index(repo).files_parsed == len(FUNCTIONS)  # free again once the run ends


def test_a_killed_writer_releases_its_claim(tmp_path) -> None:
    database = tmp_path / "index.db"
    Store(database).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from hsc.store import Store\n"
            f"store = Store({str(database)!r})\n"
            "with store.writer('indexing'):\n    print('held', flush=True); time.sleep(120)",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreBusy, match=f"pid {holder.pid}"):
            with Store(database).writer():
                pass
    finally:
        holder.kill()
        holder.wait()
    with Store(database).writer():  # kill -9 released the OS lock
        pass
