"""Files cut by worker processes give the index that cutting them in the
indexing process gives: the same leaves, vectors and hierarchy, the same
one-line reasons for bad files, nothing lost when a worker dies, and a sound
database after kill -9."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_REPOS
from test_database_faults import canonical_dump, integrity
from test_faults_survived import PARAMS, kill_at

from hsc.api import Index
from hsc.embed.pool import MIN_BATCHES_FOR_POOL, EncoderPool, resolve_processes
from hsc.index.file_pool import MIN_FILES_FOR_POOL, resolve_workers
from hsc.index.pipeline import Progress
from hsc.params import SettingError, Settings

FILES = MIN_FILES_FOR_POOL + 6  # enough for the pool to be used


def make_repository(root: Path) -> Path:
    """Small real files in three languages, and files that are skipped for a reason."""
    for number in range(FILES):
        folder = root / f"pkg{number % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        if number % 3 == 2:
            (folder / f"step{number}.go").write_text(
                f"package pkg\n\nfunc Step{number}(x int) int {{\n\treturn x + {number}\n}}\n"
            )
        else:
            (folder / f"mod{number}.py").write_text(
                f"def value_{number}(x):\n    '''Add {number} to x.'''\n    return x + {number}\n\n\n"
                f"class Holder{number}:\n    def get(self):\n        return {number}\n"
            )
    (root / "blob.py").write_bytes(b"\x00\x01binary\x00" * 10)
    (root / "latin.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (root / "empty.py").write_text("")
    (root / "gone.py").symlink_to(root / "nowhere.py")
    return root


def running(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def settings(workers: str) -> Settings:
    return Settings(summariser="digest", index_workers=workers)  # the default encoder, as the fixture


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory, embedder) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("serial")
    repo = make_repository(root / "repo")
    with Index.open(root / "serial.db", settings("0"), embedder=embedder) as index:
        index.index(repo, PARAMS)
    return repo, root / "serial.db"


def test_workers_and_serial_give_the_same_index(serial_run, tmp_path, embedder) -> None:
    repo, serial_db = serial_run
    events: list[Progress] = []
    with Index.open(tmp_path / "parallel.db", settings("2"), embedder=embedder) as index:
        report = index.index(repo, PARAMS, progress=events.append)
    files = [event for event in events if event.stage == "files"]
    assert [event.done for event in files] == list(range(1, report.files_seen + 1))
    assert {problem.path for problem in report.problems} == {"blob.py", "empty.py", "gone.py"}
    assert canonical_dump(tmp_path / "parallel.db") == canonical_dump(serial_db)


# 0: the pool learns of the death from a file's result; 3 s: before the next file is handed to it,
# so submitting raises there.
@pytest.mark.parametrize("wait_after_kill", [0.0, 3.0], ids=["mid-file", "before-the-next-submission"])
def test_a_worker_killed_mid_run_loses_nothing(serial_run, tmp_path, embedder, wait_after_kill) -> None:
    repo, serial_db = serial_run
    killed: list[int] = []

    def kill_a_worker(event: Progress) -> None:
        if event.stage == "files" and not killed:
            workers = multiprocessing.active_children()
            if workers:
                os.kill(workers[0].pid, signal.SIGKILL)
                killed.append(workers[0].pid)
                time.sleep(wait_after_kill)  # the pool's watcher thread marks it broken meanwhile

    with Index.open(tmp_path / "parallel.db", settings("2"), embedder=embedder) as index:
        report = index.index(repo, PARAMS, progress=kill_a_worker)
    assert killed
    assert {problem.path for problem in report.problems} == {"blob.py", "empty.py", "gone.py"}
    assert canonical_dump(tmp_path / "parallel.db") == canonical_dump(serial_db)


def test_kill_9_with_workers_then_a_rerun_ends_as_an_uninterrupted_run(serial_run, tmp_path, embedder):
    repo, serial_db = serial_run
    database = tmp_path / "killed.db"
    workers = kill_at(database, repo, "files", FILES // 2, workers="2")
    assert workers, "the run had started its worker processes"
    deadline = time.monotonic() + 30
    while any(map(running, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if running(pid)], "workers outlived their parent"
    assert integrity(database) == "ok"
    with Index.open(database, settings("2"), embedder=embedder) as index:
        index.index(repo, PARAMS)
    assert integrity(database) == "ok"
    assert canonical_dump(database) == canonical_dump(serial_db)


def test_auto_workers_leave_the_encoder_its_cores() -> None:
    assert resolve_workers("auto", cores=1) == 0
    assert resolve_workers("auto", cores=2) == 1
    assert resolve_workers("auto", cores=16) == 4
    assert resolve_workers("3") == 3
    assert resolve_processes("auto", cores=1) == 1
    assert resolve_processes("auto", cores=2) == 2
    assert resolve_processes("auto", cores=64) == 4
    with pytest.raises(SettingError, match="index_workers"):
        Settings(index_workers="many")


def test_the_encoder_in_processes_gives_this_process_vectors_and_counts_truncation(tmp_path) -> None:
    from hsc.chunk.ingest import load_file, walk_repository
    from hsc.chunk.tokens import get_counter
    from hsc.embed import encoder_cache_dir, make_embedder, resolve_spec
    from hsc.params import Parameters

    repo = SAMPLE_REPOS / "inventory_py"
    texts = [
        leaf.embedding_text
        for rel_path in walk_repository(repo)
        for leaf in load_file(repo, rel_path, Parameters(), Settings(), get_counter()).leaves
    ]
    truncating = Settings(embedding_long_leaves="truncate")  # the rule whose truncation is counted
    pool = make_embedder(resolve_spec(truncating, None), encoder_cache_dir(tmp_path), "cpu", processes=2)
    try:
        assert isinstance(pool, EncoderPool)
        here = pool.local.embed(texts, batch_size=8)
        assert len(texts) >= 8 * MIN_BATCHES_FOR_POOL  # so the workers embed the next call
        there = pool.embed(texts, batch_size=8)
        np.testing.assert_allclose(there, here, atol=1e-5)
        longer = int((pool.local.piece_counts(texts) > pool.max_seq_length).sum())
        assert 0 < longer < len(texts)
        assert pool.local.truncated == longer and pool.truncated == 2 * longer
    finally:
        pool.close()


def test_workers_do_not_run_the_callers_main_script(tmp_path, embedder, monkeypatch):
    """Streamlit runs each page as ``__main__``; a spawned worker would import it first and
    run the page again. The workers start without it."""
    marker = tmp_path / "page-ran"
    page = tmp_path / "page.py"
    page.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    repo = make_repository(tmp_path / "repo")
    with Index.open(tmp_path / "index.db", settings("2"), embedder=embedder) as index:
        report = index.index(repo)
    assert report.files_seen >= FILES
    assert not marker.exists()


def test_closing_the_index_ends_its_encoder_processes(tmp_path):
    """A long-running server opens and closes indexes; each one's encoder processes end with it.
    An encoder the caller handed over stays the caller's."""
    repo = make_repository(tmp_path / "repo")
    # Children of this process before the pool (another test's workers may still be ending) are not its.
    earlier = set(children_of(os.getpid()))
    index = Index.open(tmp_path / "index.db", Settings(encode_processes="2", index_workers="1"))
    try:
        texts = [f"def value_{n}(x):\n    return x + {n}\n" for n in range(32 * MIN_BATCHES_FOR_POOL)]
        pool = index.embedder
        assert isinstance(pool, EncoderPool)
        pool.embed(texts)  # enough batches for the worker processes to start
        workers = [pid for pid in children_of(os.getpid()) if pid not in earlier and running(pid)]
        assert len(workers) >= 2
        with Index.open(tmp_path / "other.db", embedder=pool) as borrower:
            borrower.index(repo)
        assert all(running(pid) for pid in workers)  # not the borrower's to end
    finally:
        index.close()
    assert not any(running(pid) for pid in workers)


def children_of(pid: int) -> list[int]:
    """The spawned worker processes of ``pid`` (not multiprocessing's resource tracker)."""
    listing = Path(f"/proc/{pid}/task/{pid}/children")
    children = [int(child) for child in listing.read_text().split()] if listing.exists() else []
    return [child for child in children if b"resource_tracker" not in command_line(child)]


def command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
