"""The query history and table counts."""

from __future__ import annotations

import json
import time
from typing import Any

from hsc.store.database import Database


class QueryTables(Database):
    """The tables that serve and record queries."""

    def leaf_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM leaves").fetchone()[0])

    # -- queries --------------------------------------------------------------------

    def save_query(
        self,
        repository_id: int,
        hierarchy_id: int | None,
        text: str,
        mode: str,
        parameters: dict[str, Any],
        leaves_compared: int,
        elapsed_ms: float,
        results: list[tuple[str, int, str, float]],
    ) -> int:
        """``results`` are (stage, rank, node id, score)."""
        with self.transaction():
            query_id = int(
                self.conn.execute(
                    """INSERT INTO queries (repository_id, hierarchy_id, text, mode, parameters,
                           leaves_compared, elapsed_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        repository_id,
                        hierarchy_id,
                        text,
                        mode,
                        json.dumps(parameters),
                        leaves_compared,
                        elapsed_ms,
                        time.time(),
                    ),
                ).lastrowid
                or 0
            )
            self.conn.executemany(
                "INSERT INTO query_results (query_id, stage, rank, node_id, score) VALUES (?, ?, ?, ?, ?)",
                [(query_id, *result) for result in results],
            )
        return query_id

    def queries(self, repository_id: int, limit: int = 50) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT * FROM queries WHERE repository_id = ? ORDER BY id DESC LIMIT ?", (repository_id, limit)
        )

    # -- statistics ---------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        tables = [
            "repositories",
            "files",
            "leaves",
            "embeddings",
            "hierarchies",
            "nodes",
            "summaries",
            "definitions",
            "queries",
        ]
        return {t: int(self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in tables}
