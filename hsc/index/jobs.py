"""Index runs as jobs: a worker process per run, recorded in the database.

A run started from the app belongs to its own process (``python -m
hsc.index.jobs DATABASE JOB``), not to the browser session that asked for
it: closing the tab, or every tab, leaves it running, and any session reads
its progress from the ``index_jobs`` table and can ask it to stop. The worker
writes its progress there (throttled), checks for a stop request at each
progress event (so a stop lands between two files or batches; what was
committed is kept), and writes its outcome when it ends.

A worker that dies without writing an outcome (killed, out of memory) is
found by its process being gone and is recorded as crashed; the files it
committed are kept, so the next run of the same folder resumes from them.
Two runs of one folder never overlap: a job is only started, in a write
transaction, when no live job holds the folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hsc.params import Parameters, with_values
from hsc.store import Store

LIVE = ("starting", "running")
# A job the app started but whose worker never said it began (it could not start): crashed after this.
START_GRACE_SECONDS = 120.0
# Progress is written at most this often (and at each stage's last step).
WRITE_EVERY_SECONDS = 0.5

_WINDOW_LEAVES = re.compile(r"of (\d+) leaves")


class StopRequested(Exception):
    """Raised inside the run when a session asked the job to stop."""


@dataclass
class EmbedCount:
    """Leaves embedded so far, from the pipeline's "embed" events, and the seconds spent since the
    first one: the rate of leaves actually embedded (a run whose vectors are all cached embeds none).

    The pipeline embeds in windows and reports each window's batches, so the leaves done are the
    windows finished plus this one's batches."""

    batch_size: int
    finished_windows: int = 0
    window: tuple[int, int] = (0, 0)  # (batches done, leaves) of the window being embedded
    first_at: float | None = None
    last_at: float | None = None

    def __call__(self, stage: str, done: int, total: int, message: str, now: float) -> None:
        if stage != "embed":
            return
        found = _WINDOW_LEAVES.search(message)
        leaves = int(found.group(1)) if found else total * self.batch_size
        if done < self.window[0]:  # a new window began: the last one is done
            self.finished_windows += self.window[1]
        self.window = (done, leaves)
        self.first_at = now if self.first_at is None else self.first_at
        self.last_at = now

    @property
    def embedded(self) -> int:
        done, leaves = self.window
        return self.finished_windows + min(leaves, done * self.batch_size)

    @property
    def seconds(self) -> float:
        return 0.0 if self.first_at is None or self.last_at is None else self.last_at - self.first_at


@dataclass
class Job:
    """One row of ``index_jobs``; ``progress`` holds each stage's last (done, total, message),
    the leaves embedded and expected, and the seconds spent embedding."""

    id: int
    root: str
    state: str  # starting, running, finished, stopped, failed, crashed
    pid: int | None
    parameters: dict[str, Any]
    excludes: list[str] | None
    started_at: float
    updated_at: float
    ended_at: float | None
    stop_requested: bool
    progress: dict[str, Any] = field(default_factory=dict)
    outcome: dict[str, Any] = field(default_factory=dict)

    @property
    def live(self) -> bool:
        return self.state in LIVE

    @property
    def name(self) -> str:
        return Path(self.root).name

    def stage(self, name: str) -> tuple[int, int, str] | None:
        found = self.progress.get("stages", {}).get(name)
        return (int(found[0]), int(found[1]), str(found[2])) if found else None

    @property
    def leaves_embedded(self) -> int:
        return int(self.progress.get("leaves_embedded", 0))

    @property
    def embed_seconds(self) -> float:
        return float(self.progress.get("embed_seconds", 0.0))

    @property
    def leaves_expected(self) -> int:
        return int(self.progress.get("leaves_expected", 0))

    def describe(self) -> str:
        """One line: what the job is doing or how it ended."""
        if self.live:
            files = self.stage("files")
            where = f"{files[0]} of {files[1]} files" if files else "starting"
            asked = " (stop asked)" if self.stop_requested else ""
            return f"indexing {self.name}: {where}, {self.leaves_embedded} leaves embedded{asked}"
        said = self.outcome.get("message", "")
        return self.state + (f": {said}" if said else "")


def _job(row: dict[str, Any]) -> Job:
    return Job(
        id=int(row["id"]),
        root=str(row["root"]),
        state=str(row["state"]),
        pid=None if row["pid"] is None else int(row["pid"]),
        parameters=json.loads(row["parameters"]),
        excludes=None if row["excludes"] is None else json.loads(row["excludes"]),
        started_at=float(row["started_at"]),
        updated_at=float(row["updated_at"]),
        ended_at=None if row["ended_at"] is None else float(row["ended_at"]),
        stop_requested=bool(row["stop_requested"]),
        progress=json.loads(row["progress"] or "{}"),
        outcome=json.loads(row["outcome"] or "{}"),
    )


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (an exited child not yet waited for counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        # The state follows the parenthesised command name: Z is a zombie, X dead.
        return stat.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True  # no /proc here: kill(0) said it exists


def _crashed(job: Job, now: float) -> bool:
    if not job.live:
        return False
    if job.pid is None:
        return now - job.started_at > START_GRACE_SECONDS
    return not process_alive(job.pid)


def _mark_crashed(store: Store, jobs: list[Job]) -> list[Job]:
    """Record the live jobs whose worker is gone as crashed (once, by whoever notices first)."""
    now = time.time()
    for job in jobs:
        if _crashed(job, now):
            outcome = {"message": "the worker process ended without finishing; index again to resume"}
            store.end_job(job.id, "crashed", json.dumps(outcome))
            job.state, job.ended_at, job.outcome = "crashed", now, outcome
    return jobs


def recent_jobs(store: Store, limit: int = 10) -> list[Job]:
    """The newest jobs first, a crashed worker recorded as such."""
    return _mark_crashed(store, [_job(row) for row in store.job_rows(limit)])


def live_jobs(store: Store) -> list[Job]:
    return [job for job in _mark_crashed(store, [_job(row) for row in store.live_job_rows()]) if job.live]


def get_job(store: Store, job_id: int) -> Job | None:
    row = store.job_row(job_id)
    return None if row is None else _mark_crashed(store, [_job(row)])[0]


def last_job(store: Store, root: str | Path) -> Job | None:
    """The newest job of the folder ``root``."""
    row = store.last_job_row(str(Path(root).resolve()))
    return None if row is None else _mark_crashed(store, [_job(row)])[0]


def start_job(
    store: Store,
    root: str | Path,
    params: Parameters,
    excludes: list[str] | None = None,
    leaves_expected: int = 0,
    python: str = sys.executable,
) -> tuple[Job, bool]:
    """Start indexing ``root`` in a worker process; returns the job and whether it is new.

    When a live job holds the folder already, that job is returned instead (two runs of
    one folder never overlap)."""
    root = str(Path(root).resolve())
    live_jobs(store)  # record crashed workers first, so they do not hold their folder
    row, new = store.add_job_unless_held(
        root,
        json.dumps(asdict(params)),
        None if excludes is None else json.dumps(list(excludes)),
        json.dumps({"leaves_expected": int(leaves_expected)}),
    )
    if not new:
        return _job(row), False
    job_id = int(row["id"])
    worker = subprocess.Popen(
        [python, "-m", "hsc.index.jobs", str(store.path), str(job_id)],
        env=_worker_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not the app's: a Ctrl-C to the server or a closed tab leaves it running
    )
    # Waited for by a thread, so an ended worker does not linger as a zombie that looks alive.
    threading.Thread(target=worker.wait, daemon=True).start()
    store.set_job_pid(job_id, worker.pid)
    job = get_job(store, job_id)
    assert job is not None
    return job, True


def _worker_environment() -> dict[str, str]:
    """The starter's environment, with this hsc first on the path: the worker runs the same code."""
    package_parent = str(Path(__file__).resolve().parent.parent.parent)
    path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}


def request_stop(store: Store, job_id: int) -> None:
    """Ask a job to stop at its next progress event (between two files or batches)."""
    store.request_job_stop(job_id)


class _Reporter:
    """The worker's progress callback: counts, writes the row now and then, and stops when asked."""

    def __init__(self, store: Store, job: Job, batch_size: int) -> None:
        self.store, self.job = store, job
        self.count = EmbedCount(batch_size)
        self.stages: dict[str, list[Any]] = {}
        self.written_at = 0.0

    def __call__(self, event: Any) -> None:
        now = time.monotonic()
        self.count(event.stage, event.done, event.total, event.message, now)
        self.stages[event.stage] = [event.done, event.total, str(event.message)[:200]]
        last_step = bool(event.total) and event.done >= event.total
        if last_step or now - self.written_at >= WRITE_EVERY_SECONDS:
            self.write()

    def progress(self) -> dict[str, Any]:
        return {
            "stages": self.stages,
            "leaves_embedded": self.count.embedded,
            "embed_seconds": round(self.count.seconds, 3),
            "leaves_expected": self.job.leaves_expected,
        }

    def write(self) -> None:
        self.written_at = time.monotonic()
        if self.store.set_job_progress(self.job.id, json.dumps(self.progress())):
            raise StopRequested()


def _finish(store: Store, job_id: int, state: str, outcome: dict[str, Any], reporter: _Reporter) -> None:
    store.end_job(job_id, state, json.dumps(outcome), json.dumps(reporter.progress()))


def run_job(database: str | Path, job_id: int) -> int:
    """The worker: run job ``job_id`` of ``database`` to its end; 0 when it finished."""
    from hsc.api import Index

    with Index.open(database) as index:
        store = index.store
        job = get_job(store, job_id)
        if job is None or job.state != "starting":
            return 2  # not ours to run (already run, or recorded as crashed)
        store.set_job_pid(job_id, os.getpid(), running=True)
        params = with_values(Parameters(), job.parameters)
        reporter = _Reporter(store, job, params.embedding_batch_size)
        try:
            report = index.index(job.root, params, progress=reporter, excludes=job.excludes)
        except StopRequested:
            kept = _files_kept(index, job.root)
            message = f"stopped: {kept} files kept; index again to continue"
            _finish(store, job_id, "stopped", {"message": message, "files_kept": kept}, reporter)
            return 130
        except Exception as error:  # the run's own fault: said in the row, for every tab
            _finish(store, job_id, "failed", {"message": f"{type(error).__name__}: {error}"}, reporter)
            return 1
        message = (
            f"{report.leaves} leaves from {report.files_seen} files ({report.leaves_embedded} embedded, "
            f"{report.leaves_from_cache} from the cache) in {report.seconds:.1f} s"
        )
        outcome = {"message": message, "report": report.to_json(), "repository_id": report.repository_id}
        _finish(store, job_id, "finished", outcome, reporter)
    return 0


def _files_kept(index: Any, root: str) -> int:
    repository_id = index.repository_id(root)
    if repository_id is None:
        return 0
    return sum(f["status"] == "indexed" for f in index.store.files(repository_id))


if __name__ == "__main__":
    raise SystemExit(run_job(sys.argv[1], int(sys.argv[2])))
