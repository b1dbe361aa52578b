"""The ``index_jobs`` table: index runs started as jobs, their progress and outcome (hsc.index.jobs)."""

from __future__ import annotations

import time
from typing import Any

from hsc.store.database import Database

_LIVE = "state IN ('starting', 'running')"


class JobTables(Database):
    def add_job_unless_held(
        self, root: str, parameters: str, excludes: str | None, progress: str
    ) -> tuple[dict[str, Any], bool]:
        """A new job of ``root``, or the live one that holds it already (then False): the check
        and the insert are one write transaction, so two runs of one folder never overlap."""
        with self.transaction():
            held = self.row(
                f"SELECT * FROM index_jobs WHERE root = ? AND {_LIVE} ORDER BY id LIMIT 1", (root,)
            )
            if held is not None:
                return held, False
            now = time.time()
            cursor = self.conn.execute(
                "INSERT INTO index_jobs (root, state, parameters, excludes, started_at, updated_at, "
                "progress) VALUES (?, 'starting', ?, ?, ?, ?, ?)",
                (root, parameters, excludes, now, now, progress),
            )
            added = self.row("SELECT * FROM index_jobs WHERE id = ?", (cursor.lastrowid,))
        assert added is not None
        return added, True

    def job_rows(self, limit: int = 10) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM index_jobs ORDER BY id DESC LIMIT ?", (limit,))

    def live_job_rows(self) -> list[dict[str, Any]]:
        return self.rows(f"SELECT * FROM index_jobs WHERE {_LIVE} ORDER BY id")

    def job_row(self, job_id: int) -> dict[str, Any] | None:
        return self.row("SELECT * FROM index_jobs WHERE id = ?", (job_id,))

    def last_job_row(self, root: str) -> dict[str, Any] | None:
        return self.row("SELECT * FROM index_jobs WHERE root = ? ORDER BY id DESC LIMIT 1", (root,))

    def set_job_pid(self, job_id: int, pid: int, running: bool = False) -> None:
        """The worker's process id; ``running``: the worker itself says it began (a pid set by
        the starter is kept if the worker was quicker)."""
        with self.transaction():
            if running:
                self.conn.execute(
                    "UPDATE index_jobs SET state = 'running', pid = ?, updated_at = ? WHERE id = ?",
                    (pid, time.time(), job_id),
                )
            else:
                self.conn.execute("UPDATE index_jobs SET pid = COALESCE(pid, ?) WHERE id = ?", (pid, job_id))

    def set_job_progress(self, job_id: int, progress: str) -> bool:
        """Write a job's progress; whether a stop was asked for it."""
        with self.transaction():
            self.conn.execute(
                "UPDATE index_jobs SET progress = ?, updated_at = ? WHERE id = ?",
                (progress, time.time(), job_id),
            )
            asked = self.row("SELECT stop_requested FROM index_jobs WHERE id = ?", (job_id,))
        return bool(asked and asked["stop_requested"])

    def request_job_stop(self, job_id: int) -> None:
        with self.transaction():
            self.conn.execute(f"UPDATE index_jobs SET stop_requested = 1 WHERE id = ? AND {_LIVE}", (job_id,))

    def end_job(self, job_id: int, state: str, outcome: str, progress: str | None = None) -> bool:
        """Record how a live job ended (once: False when it had ended already)."""
        now = time.time()
        with self.transaction():
            cursor = self.conn.execute(
                "UPDATE index_jobs SET state = ?, outcome = ?, progress = COALESCE(?, progress), "
                f"ended_at = ?, updated_at = ? WHERE id = ? AND {_LIVE}",
                (state, outcome, progress, now, now, job_id),
            )
        return cursor.rowcount > 0
