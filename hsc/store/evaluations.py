"""Saved benchmark runs: retrieval quality (``hsc.quality``) and context at a budget
(``bench context``), each one a row of JSON with its suite named."""

from __future__ import annotations

import json
import time
from typing import Any

from hsc.store.database import Database

# The benchmarks whose runs are kept (the quality_runs table's suite column).
SAVED_SUITES = ("quality", "context")


class EvaluationTables(Database):
    """The ``quality_runs`` table: a benchmark run's suite, corpus, parameters and result."""

    def save_quality_run(
        self, corpus: str, parameters: dict[str, Any], result: dict[str, Any], suite: str = "quality"
    ) -> int:
        """Save one run in one transaction; returns its id."""
        with self.transaction():
            cursor = self.conn.execute(
                "INSERT INTO quality_runs (created_at, corpus, parameters, result, suite) "
                "VALUES (?, ?, ?, ?, ?)",
                (time.time(), corpus, json.dumps(parameters), json.dumps(result), suite),
            )
        return int(cursor.lastrowid or 0)

    def quality_runs(self, limit: int = 100, suite: str | None = None) -> list[dict[str, Any]]:
        """The latest runs first (of one suite, or all), without their results: id, created_at,
        corpus, parameters, suite."""
        column = self.added_column("quality_runs", "suite")
        rows = self.rows(
            f"SELECT id, created_at, corpus, parameters, {column} AS suite FROM quality_runs "
            f"WHERE ? IS NULL OR {column} = ? ORDER BY id DESC LIMIT ?",
            (suite, suite, limit),
        )
        for row in rows:
            row["parameters"] = json.loads(row["parameters"])
        return rows

    def quality_run(self, run_id: int) -> dict[str, Any] | None:
        """One run with its ``result`` and ``suite``, or None when there is no such run."""
        column = self.added_column("quality_runs", "suite")
        row = self.row(
            f"SELECT id, created_at, corpus, parameters, result, {column} AS suite FROM quality_runs "
            "WHERE id = ?",
            (run_id,),
        )
        if row is not None:
            row["parameters"], row["result"] = json.loads(row["parameters"]), json.loads(row["result"])
        return row

    def delete_quality_run(self, run_id: int) -> bool:
        """Whether a run was deleted."""
        with self.transaction():
            deleted = self.conn.execute("DELETE FROM quality_runs WHERE id = ?", (run_id,)).rowcount
        return deleted > 0
