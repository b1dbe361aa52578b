"""What a context pack reads of the stored facts: import bindings, and the facts of a file's
leaves on given lines (hsc.search.contexts)."""

from __future__ import annotations

import json

from hsc.model import ImportBinding, LeafFacts
from hsc.store.database import Database
from hsc.store.schema import BINDING_COLUMNS


class CodeFactTables(Database):
    """Reads of the facts tables by file and by lines."""

    def file_languages(self, repository_id: int) -> dict[str, str]:
        """path -> language of every indexed file of the repository."""
        return {
            row[0]: row[1] or "text"
            for row in self.conn.execute(
                "SELECT path, language FROM files WHERE repository_id = ? AND status = 'indexed'",
                (repository_id,),
            )
        }

    def import_bindings(self, repository_id: int, path: str) -> list[ImportBinding]:
        """The names a file's imports bind, in the order written (none for a file read by an older
        hsc: it is read again by the next index run)."""
        if not self._has_table("import_bindings"):
            return []
        return [
            ImportBinding(*row)
            for row in self.conn.execute(
                f"""SELECT {", ".join("b." + c for c in BINDING_COLUMNS)} FROM import_bindings b
                    JOIN files f ON f.id = b.file_id WHERE f.repository_id = ? AND f.path = ?
                    ORDER BY b.ordinal""",
                (repository_id, path),
            )
        ]

    def facts_on_lines(self, repository_id: int, path: str, start: int, end: int) -> list[LeafFacts]:
        """The facts of the file's leaves that overlap lines ``start..end``, in order."""
        return [
            LeafFacts(*(tuple(json.loads(value)) for value in row))
            for row in self.conn.execute(
                f"""SELECT x.imports, x.defines, x.uses, {self.refs_column.replace("refs", "x.refs")}
                    FROM leaves l JOIN files f ON f.id = l.file_id JOIN leaf_facts x ON x.leaf_id = l.id
                    WHERE f.repository_id = ? AND f.path = ? AND l.end_line >= ? AND l.start_line <= ?
                    ORDER BY l.ordinal""",
                (repository_id, path, start, end),
            )
        ]

    def file_text_hash(self, repository_id: int, path: str) -> str:
        row = self.conn.execute(
            "SELECT content_hash FROM files WHERE repository_id = ? AND path = ?", (repository_id, path)
        ).fetchone()
        return str(row[0]) if row else ""

    def file_leaf_texts(self, repository_id: int, path: str) -> list[tuple[int, str]]:
        """(start line, text) of a file's leaves in order: the file as far as its leaves hold it."""
        return [
            (int(row[0]), str(row[1]))
            for row in self.conn.execute(
                """SELECT l.start_line, l.text FROM leaves l JOIN files f ON f.id = l.file_id
                   WHERE f.repository_id = ? AND f.path = ? ORDER BY l.ordinal""",
                (repository_id, path),
            )
        ]
