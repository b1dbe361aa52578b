"""Saved retrieval-quality runs (``hsc.quality``): each one a row of JSON."""

from __future__ import annotations

import json
import time
from typing import Any

from hsc.store.database import Database


class EvaluationTables(Database):
    """The ``quality_runs`` table: a benchmark run's corpus, parameters and result."""

    def save_quality_run(self, corpus: str, parameters: dict[str, Any], result: dict[str, Any]) -> int:
        """Save one run in one transaction; returns its id."""
        with self.transaction():
            cursor = self.conn.execute(
                "INSERT INTO quality_runs (created_at, corpus, parameters, result) VALUES (?, ?, ?, ?)",
                (time.time(), corpus, json.dumps(parameters), json.dumps(result)),
            )
        return int(cursor.lastrowid or 0)

    def quality_runs(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest runs first, without their results: id, created_at, corpus, parameters."""
        rows = self.rows(
            "SELECT id, created_at, corpus, parameters FROM quality_runs ORDER BY id DESC LIMIT ?", (limit,)
        )
        for row in rows:
            row["parameters"] = json.loads(row["parameters"])
        return rows

    def quality_run(self, run_id: int) -> dict[str, Any] | None:
        """One run with its ``result``, or None when there is no such run."""
        row = self.row("SELECT * FROM quality_runs WHERE id = ?", (run_id,))
        if row is not None:
            row["parameters"], row["result"] = json.loads(row["parameters"]), json.loads(row["result"])
        return row

    def delete_quality_run(self, run_id: int) -> bool:
        """Whether a run was deleted."""
        with self.transaction():
            deleted = self.conn.execute("DELETE FROM quality_runs WHERE id = ?", (run_id,)).rowcount
        return deleted > 0
