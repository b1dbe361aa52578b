"""Index runs as jobs (hsc.index.jobs): a real worker process per run, recorded in a real
SQLite file; it finishes on its own, stops when asked, never overlaps a second run of
its folder, and a worker killed mid-run is reported as crashed and resumed by the next."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import sysconfig
import time
from pathlib import Path

import pytest
from conftest import SAMPLE_REPOS
from test_database_faults import integrity

from hsc import Index, Parameters
from hsc.index.jobs import Job, get_job, last_job, live_jobs, recent_jobs, request_stop, start_job

STDLIB = Path(sysconfig.get_paths()["stdlib"])
WAIT_SECONDS = 600


def wait_for(store, job_id: int, ready) -> Job:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        job = get_job(store, job_id)
        assert job is not None
        if ready(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never got there: {get_job(store, job_id)}")


def committed_files(database: Path) -> int:
    with sqlite3.connect(database) as conn:
        count = conn.execute("SELECT COUNT(*) FROM files WHERE status = 'indexed'").fetchone()[0]
    conn.close()
    return int(count)


def test_a_job_runs_in_its_own_process_and_a_second_run_of_its_folder_joins_it(tmp_path: Path) -> None:
    repo = shutil.copytree(SAMPLE_REPOS / "inventory_py", tmp_path / "inventory_py")
    with Index.open(tmp_path / "app.db") as index:
        job, new = start_job(index.store, repo, Parameters(), leaves_expected=90)
        assert new and job.live and job.pid != os.getpid()
        again, new_again = start_job(index.store, repo, Parameters())
        assert (again.id, new_again) == (job.id, False)  # two runs of one folder never overlap
        done = wait_for(index.store, job.id, lambda j: not j.live)
        assert done.state == "finished", done.outcome
        assert done.outcome["report"]["files_seen"] >= 5
        assert done.stage("files") is not None and done.leaves_embedded > 0
        assert index.repository_id(repo) == done.outcome["repository_id"]
        # Once it has ended, the folder is free: a new run is a new job (all cached, nothing embedded).
        rerun, new = start_job(index.store, repo, Parameters())
        assert new and rerun.id != job.id
        finished = wait_for(index.store, rerun.id, lambda j: not j.live)
        assert finished.outcome["report"]["leaves_embedded"] == 0
        assert [j.id for j in recent_jobs(index.store)] == [rerun.id, job.id]
        assert live_jobs(index.store) == []


@pytest.fixture()
def large_repo(tmp_path: Path) -> Path:
    """The standard library's email, json and http packages: about 40 files, over a thousand leaves."""
    root = tmp_path / "repo"
    for package in ("email", "json", "http"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_worker_killed_mid_run_is_reported_crashed_and_the_next_run_resumes(
    large_repo: Path, tmp_path: Path
) -> None:
    database = tmp_path / "app.db"
    with Index.open(database) as index:
        job, _ = start_job(index.store, large_repo, Parameters())
        running = wait_for(index.store, job.id, lambda j: not j.live or committed_files(database) >= 1)
        assert running.live, running.outcome  # still going with a file committed: kill it now
        os.killpg(running.pid, signal.SIGKILL)  # the worker and its encoders, as an OOM kill
        crashed = wait_for(index.store, job.id, lambda j: not j.live)
        assert crashed.state == "crashed" and "index again to resume" in crashed.outcome["message"]
        kept = committed_files(database)
        assert kept >= 1 and integrity(database) == "ok"
        assert last_job(index.store, large_repo).state == "crashed"

        resumed, new = start_job(index.store, large_repo, Parameters())
        assert new  # a crashed job does not hold its folder
        done = wait_for(index.store, resumed.id, lambda j: not j.live)
        assert done.state == "finished", done.outcome
        assert done.outcome["report"]["files_unchanged"] >= kept  # what the crashed run committed


def test_a_job_asked_to_stop_keeps_what_it_committed(large_repo: Path, tmp_path: Path) -> None:
    database = tmp_path / "app.db"
    with Index.open(database) as index:
        job, _ = start_job(index.store, large_repo, Parameters())
        wait_for(index.store, job.id, lambda j: not j.live or committed_files(database) >= 1)
        request_stop(index.store, job.id)
        stopped = wait_for(index.store, job.id, lambda j: not j.live)
        assert stopped.state == "stopped", stopped.outcome
        assert stopped.outcome["files_kept"] == committed_files(database) >= 1
        assert integrity(database) == "ok"
