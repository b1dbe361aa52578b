"""The outline vectors' table (hsc.embed.outlines, hsc.search.region_outlines): which outlines a
repository has, by path and lines, and the embeddings they are stored under."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import numpy as np

from hsc.store.database import Database
from hsc.store.schema import blobs_to_matrix

OutlineRow = tuple[str, int, int, str]  # path, the definition's first and last line, content hash


class OutlineTables(Database):
    """Writes and reads of ``outline_vectors``."""

    def leaf_lines(
        self, repository_id: int, paths: Collection[str] | None = None
    ) -> dict[str, tuple[list[str], list[int], list[int]]]:
        """path -> its leaves' scopes, first and last lines, in order (what an outline needs); of
        every file, or of ``paths`` only."""
        found: dict[str, tuple[list[str], list[int], list[int]]] = {}
        only = f" AND f.path IN ({', '.join('?' * len(paths))})" if paths is not None else ""
        for path, scope, start, end in self.conn.execute(
            f"""SELECT f.path, l.scope, l.start_line, l.end_line
               FROM leaves l JOIN files f ON f.id = l.file_id
               WHERE f.repository_id = ?{only} ORDER BY f.path, l.ordinal""",
            (repository_id, *(paths or ())),
        ):
            scopes, starts, ends = found.setdefault(path, ([], [], []))
            scopes.append(scope)
            starts.append(int(start))
            ends.append(int(end))
        return found

    def replace_outlines(
        self, repository_id: int, rows: Iterable[OutlineRow], paths: Collection[str] | None = None
    ) -> None:
        """The repository's outlines, all at once (none: it has none, as before the option), or
        those of ``paths`` only (``rows`` then theirs)."""
        only = f" AND path IN ({', '.join('?' * len(paths))})" if paths is not None else ""
        with self.transaction():
            self.conn.execute(
                f"DELETE FROM outline_vectors WHERE repository_id = ?{only}", (repository_id, *(paths or ()))
            )
            self.conn.executemany(
                "INSERT OR REPLACE INTO outline_vectors (repository_id, path, start_line, end_line, "
                "content_hash) VALUES (?, ?, ?, ?, ?)",
                [(repository_id, *row) for row in rows],
            )

    def outline_count(self, repository_id: int) -> int:
        row = self.row(
            "SELECT COUNT(*) AS count FROM outline_vectors WHERE repository_id = ?", (repository_id,)
        )
        return int(row["count"]) if row else 0

    def outline_vectors(
        self, repository_id: int, model: str
    ) -> tuple[list[tuple[str, int, int]], np.ndarray]:
        """The repository's outlines whose vectors ``model`` has: (path, first, last line) each,
        and their vectors, one row each (an index from before the table: none)."""
        if not self._has_table("outline_vectors"):  # an older database opened read-only
            return [], np.zeros((0, 1), dtype=np.float32)
        found = self.conn.execute(
            """SELECT o.path, o.start_line, o.end_line, e.vector, e.dimension FROM outline_vectors o
               JOIN embeddings e ON e.model = ? AND e.content_hash = o.content_hash
               WHERE o.repository_id = ? ORDER BY o.path, o.start_line, o.end_line""",
            (model, repository_id),
        ).fetchall()
        if not found:
            return [], np.zeros((0, 1), dtype=np.float32)
        spans = [(str(row[0]), int(row[1]), int(row[2])) for row in found]
        return spans, blobs_to_matrix([row[3] for row in found], [row[4] for row in found])
