"""Ctrl-C (SIGINT to the whole process group, as a terminal sends it) and SIGTERM (to the
indexing process alone, as `kill` sends it) stop `python -m hsc index` with one line, end
its worker processes quietly, and keep every file finished so far; a rerun carries on.

The signal is sent once the first files are committed, while the run is held there
(``tests/index_cli_paused.py``), never after a delay: on a loaded machine a run could
otherwise reach its end before the signal and exit 0."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from conftest import ROOT
from test_database_faults import integrity

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def indexing_process(repo: Path, database: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        # Both pools run: files cut by a worker, batches embedded by encoder processes.
        [sys.executable, str(ROOT / "tests" / "index_cli_paused.py"), str(repo), "--db", str(database)]
        + ["--set", "index_workers=1", "--set", "encode_processes=2", "--set", "summariser=digest"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, like a command started in a terminal
    )


def wait_until_files_are_written(process: subprocess.Popen) -> None:
    """Until the run holds at its first committed file (it says ``paused``)."""
    line = process.stdout.readline()
    if line.strip() != "paused":
        process.kill()
        raise AssertionError("the run ended before writing any file:\n" + line + process.stderr.read())


def left_behind(group: int) -> str:
    """``ps`` lines of the processes still in the group, after they had time to end."""
    for _ in range(30):
        listing = subprocess.run(["pgrep", "-g", str(group)], capture_output=True, text=True).stdout.split()
        if not listing:
            return ""
        time.sleep(1)
    shown = subprocess.run(["ps", "-o", "pid,args", "-p", ",".join(listing)], capture_output=True, text=True)
    return shown.stdout


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """The standard library's email, json and http packages: about 40 files, over a thousand leaves."""
    root = tmp_path / "repo"
    for package in ("email", "json", "http"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupted_index_says_one_line_and_keeps_what_it_finished(repo, tmp_path, how):
    database = tmp_path / "index.db"
    process = indexing_process(repo, database)
    try:
        wait_until_files_are_written(process)
        with sqlite3.connect(database) as conn:
            committed = conn.execute("SELECT COUNT(*) FROM files WHERE status = 'indexed'").fetchone()[0]
        conn.close()
        assert committed >= 1  # the signal comes after the first committed file, not before
        if how == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM)
        out, rest = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    after = [line for line in rest.splitlines() if not line.startswith("[")]
    assert process.returncode == 130, out + rest
    assert len(after) == 1, rest
    found = re.fullmatch(r"interrupted: (\d+) files kept; run again to continue", after[0])
    assert found, after
    for noise in ("Traceback", "KeyboardInterrupt", "leaked semaphore", "resource_tracker"):
        assert noise not in rest
    # No process of the run is left behind (a worker sees its parent gone within a second).
    assert left_behind(process.pid) == ""
    kept = int(found.group(1))
    assert integrity(database) == "ok"
    with sqlite3.connect(database) as conn:
        indexed = conn.execute("SELECT COUNT(*) FROM files WHERE status = 'indexed'").fetchone()[0]
    conn.close()
    assert kept == indexed >= 1
    rerun = subprocess.run(
        [sys.executable, "-m", "hsc", "index", str(repo), "--db", str(database), "--json", "--quiet"]
        + ["--set", "summariser=digest"],
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["files_unchanged"] >= kept


def test_a_progress_line_is_written_whole_so_an_interrupt_cannot_leave_it_open(monkeypatch):
    """print() writes a line's text and its newline in two calls; a signal between them left
    the line open and the "interrupted" line was glued to it (seen once under load)."""
    from hsc.cli import _progress_printer
    from hsc.index.pipeline import Progress

    writes: list[str] = []

    class Stderr:
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stderr", Stderr())
    show = _progress_printer(True)
    show(Progress("files", 1, 3, "a.py"))
    show(Progress("files", 3, 3, "c.py"))
    assert writes == ["[files] 1/3 a.py\n", "[files] 3/3 c.py\n"]
