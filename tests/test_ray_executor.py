"""``index --executor ray`` on a real Ray cluster of two nodes started on this machine with
``ray start`` (hsc.index.ray_cluster), as an operator starts one: the same index as the local
executor, nothing lost when a worker node's raylet is killed mid-run, a driver killed with
SIGKILL completed by the next run, and Ctrl-C stopping the cluster's work for the run.

``ray start`` subprocesses rather than ``ray.cluster_utils.Cluster``: they are the commands the
docs give for real machines, ``bench ray`` starts the same cluster, and each node's raylet is a
process of its own whose PID the test kills. Skipped, with the reason, where Ray is not
installed or its nodes cannot start."""

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

import numpy as np
import pytest
from conftest import ROOT
from test_database_faults import canonical_dump, integrity
from test_faults_survived import PARAMS
from test_interrupt import left_behind, wait_until_files_are_written
from test_parallel_index import make_repository

from hsc.api import Index
from hsc.params import Settings
from hsc.store.schema import blob_to_vector

pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'hsc[ray]')")

from hsc.index.ray_cluster import LocalCluster, running, start_local_cluster  # noqa: E402

STDLIB = Path(sysconfig.get_paths()["stdlib"])
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def two_nodes(**system: str) -> LocalCluster:
    try:
        return start_local_cluster(nodes=2, cpus_per_node=1, env={**ENV, **system})
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"a Ray cluster cannot start here: {error}")


@pytest.fixture(scope="module")
def cluster():
    started = two_nodes()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def real_folder(tmp_path_factory) -> Path:
    """The standard library's email and json packages: real code, about 35 files."""
    root = tmp_path_factory.mktemp("real") / "repo"
    for package in ("email", "json"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def real_expected(real_folder, tmp_path_factory, embedder) -> list[tuple]:
    """The local executor's index of the real folder, made once for the tests that compare with it."""
    return local_run(real_folder, tmp_path_factory.mktemp("local") / "local.db", embedder)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    """Small files in three languages and files skipped for a reason (test_parallel_index's)."""
    return make_repository(tmp_path_factory.mktemp("sample") / "repo")


def local_run(repo: Path, database: Path, embedder) -> list[tuple]:
    with Index.open(database, Settings(summariser="digest"), embedder=embedder) as index:
        index.index(repo, PARAMS)
    return canonical_dump(database)


# Vectors made with other thread counts differ in the last bits (stored as float16, a rounding
# may flip): the encoder's own tolerance, as the encoder pool's test allows.
TOLERANCE = 2e-3


def assert_same_index(database: Path, expected: list[tuple]) -> None:
    """The same files, leaves, groups, documents and summaries; vectors within the tolerance."""
    got = canonical_dump(database)
    assert [row for row in got if not _is_vector(row)] == [row for row in expected if not _is_vector(row)]
    mine = {row[:2]: _vector(row[2]) for row in got if _is_vector(row)}
    theirs = {row[:2]: _vector(row[2]) for row in expected if _is_vector(row)}
    assert mine.keys() == theirs.keys()
    worst = max(float(np.abs(mine[key] - theirs[key]).max()) for key in theirs)
    assert worst <= TOLERANCE


def _is_vector(row: tuple) -> bool:
    return len(row) == 3 and isinstance(row[2], bytes)


def _vector(blob: bytes) -> np.ndarray:
    return blob_to_vector(blob, 384)  # the default encoder's dimension


def hsc_index(repo: Path, database: Path, cluster: LocalCluster, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "hsc", "index", str(repo), "--db", str(database), "--executor", "ray"]
    command += ["--ray-address", cluster.address, "--set", "summariser=digest"]
    command += ["--set", f"embedding_batch_size={PARAMS.embedding_batch_size}", *extra]
    return subprocess.run(command, env={**ENV, **cluster.env}, capture_output=True, text=True, timeout=600)


def index_workers_left(cluster: LocalCluster) -> list[int]:
    """This cluster's processes still holding an hsc worker (Ray titles them with the class)."""
    deadline = time.monotonic() + 30
    while True:
        left = [pid for pid in cluster.processes() if running(pid) and b"IndexWorker" in _command_line(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize("which", ["sample", "real_folder"])
def test_two_nodes_give_the_local_executors_index(cluster, which, request, tmp_path, embedder) -> None:
    repo = request.getfixturevalue(which)
    if which == "real_folder":
        expected = request.getfixturevalue("real_expected")
    else:
        expected = local_run(repo, tmp_path / "local.db", embedder)
    done = hsc_index(repo, tmp_path / "ray.db", cluster, "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files_parsed"] >= 1 and report["leaves_embedded"] >= 1
    # Compared by path, lines, text and vectors (ids may differ with the order files finish).
    assert_same_index(tmp_path / "ray.db", expected)
    # A rerun finds every file unchanged and starts nothing on the cluster.
    again = hsc_index(repo, tmp_path / "ray.db", cluster, "--json", "--quiet")
    assert json.loads(again.stdout)["files_parsed"] == 0
    assert_same_index(tmp_path / "ray.db", expected)
    assert index_workers_left(cluster) == []


def test_a_worker_node_killed_mid_run_loses_nothing(real_folder, real_expected, tmp_path) -> None:
    # Its own cluster (one of its nodes is killed), which notices a lost node within seconds.
    nodes = two_nodes(RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="6")
    try:
        command = [sys.executable, "-m", "hsc", "index", str(real_folder), "--db", str(tmp_path / "ray.db")]
        command += ["--executor", "ray", "--ray-address", nodes.address, "--set", "summariser=digest"]
        command += ["--set", f"embedding_batch_size={PARAMS.embedding_batch_size}", "--json"]
        process = subprocess.Popen(
            command, env={**ENV, **nodes.env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for line in process.stderr:
            if line.startswith("[files] 1/"):  # the workers hold the next files now
                break
        assert process.poll() is None
        killed = nodes.kill_node(1)
        out, rest = process.communicate(timeout=600)
        assert process.returncode == 0, rest
        assert not running(killed)
        assert json.loads(out)["files_failed"] == 0
        assert integrity(tmp_path / "ray.db") == "ok"
        assert_same_index(tmp_path / "ray.db", real_expected)
    finally:
        nodes.stop()


def test_a_driver_killed_with_sigkill_then_rerun_ends_as_an_uninterrupted_run(
    cluster, real_folder, real_expected, tmp_path
) -> None:
    database = tmp_path / "killed.db"
    script = [sys.executable, str(ROOT / "tests" / "index_until.py"), str(database), str(real_folder)]
    script += ["files", "12", str(PARAMS.embedding_batch_size), "auto", cluster.address]
    process = subprocess.Popen(
        script, env={**ENV, **cluster.env}, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout.readline().strip() == "paused"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert integrity(database) == "ok"
    with sqlite3.connect(database) as conn:
        written = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
    conn.close()
    assert written >= 1  # files were committed before the kill
    # The cluster ends the dead driver's workers.
    assert index_workers_left(cluster) == []
    done = hsc_index(real_folder, database, cluster, "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_unchanged"] >= written
    assert integrity(database) == "ok"
    assert_same_index(database, real_expected)


@pytest.mark.parametrize("where", ["cluster", "local-ray"])
def test_ctrl_c_stops_the_clusters_work_and_keeps_what_was_written(cluster, where, real_folder, tmp_path):
    """On the cluster (--ray-address), and on the Ray instance the run starts itself (none given)."""
    database = tmp_path / "index.db"
    # Held at its first committed file until the signal (tests/index_cli_paused.py, as test_interrupt).
    command = [
        sys.executable,
        str(ROOT / "tests" / "index_cli_paused.py"),
        str(real_folder),
        "--db",
        str(database),
    ]
    command += ["--executor", "ray", "--set", "summariser=digest"]
    command += ["--set", f"embedding_batch_size={PARAMS.embedding_batch_size}"]
    command += ["--ray-address", cluster.address] if where == "cluster" else []
    process = subprocess.Popen(
        command,
        env={**ENV, **cluster.env} if where == "cluster" else ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_files_are_written(process)
        os.killpg(process.pid, signal.SIGINT)
        rest = process.communicate(timeout=120)[1]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130, rest
    said = [line for line in rest.splitlines() if line.startswith(("interrupted", "hsc", "Traceback"))]
    found = re.fullmatch(r"interrupted: (\d+) files kept; run again to continue", said[0]) if said else None
    assert found and len(said) == 1, rest
    assert "Traceback" not in rest
    if where == "cluster":
        assert index_workers_left(cluster) == []
    else:  # the Ray the run started ended with it
        assert left_behind(process.pid) == ""
    assert integrity(database) == "ok"
    with sqlite3.connect(database) as conn:
        indexed = conn.execute("SELECT COUNT(*) FROM files WHERE status = 'indexed'").fetchone()[0]
    conn.close()
    assert int(found.group(1)) == indexed >= 1
