"""What a context pack reads of the stored facts: import bindings, and the facts of a file's
leaves on given lines (hsc.search.contexts)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from hsc.model import Definition, ImportBinding, LeafFacts
from hsc.store.database import Database
from hsc.store.schema import BINDING_COLUMNS, DEFINITION_COLUMNS

CHUNK = 500  # paths per IN list


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

    def _by_path(self, select: str, repository_id: int, paths: list[str]) -> Iterator[tuple]:
        """Rows of ``select`` (its first column the path; ``{marks}`` where the paths go), for
        the files ``paths`` of the repository, a few hundred paths a statement."""
        for start in range(0, len(paths), CHUNK):
            chunk = paths[start : start + CHUNK]
            marks = ", ".join("?" * len(chunk))
            yield from self.conn.execute(select.format(marks=marks), (repository_id, *chunk))

    def _file_rows(
        self, table: str, columns: list[str], repository_id: int, paths: list[str]
    ) -> Iterator[tuple]:
        """(path, *columns) of a per-file table's rows for ``paths``, by path and ordinal."""
        return self._by_path(
            f"""SELECT f.path, {", ".join("t." + c for c in columns)} FROM {table} t
                JOIN files f ON f.id = t.file_id WHERE f.repository_id = ? AND f.path IN ({{marks}})
                ORDER BY f.path, t.ordinal""",
            repository_id,
            paths,
        )

    def files_facts(
        self, repository_id: int, paths: list[str]
    ) -> dict[str, tuple[str, list[Definition], list[ImportBinding]]]:
        """path -> (content hash, definitions, import bindings) of each of ``paths`` indexed."""
        out: dict[str, tuple[str, list[Definition], list[ImportBinding]]] = {}
        for path, digest in self._by_path(
            "SELECT path, content_hash FROM files WHERE repository_id = ? AND path IN ({marks})",
            repository_id,
            paths,
        ):
            out[path] = (digest, [], [])
        for row in self._file_rows("definitions", DEFINITION_COLUMNS, repository_id, paths):
            out[row[0]][1].append(Definition(*row[1:]))
        if self._has_table("import_bindings"):
            for row in self._file_rows("import_bindings", BINDING_COLUMNS, repository_id, paths):
                out[row[0]][2].append(ImportBinding(*row[1:]))
        return out

    def definitions_named(self, repository_id: int, names: list[str]) -> list[tuple[str, str, str, int, int]]:
        """(path, name, qualified scope, first line, last line) of the repository's definitions
        called one of ``names`` (as written: case counts), in indexed files."""
        if not names:
            return []
        marks = ", ".join("?" * len(names))
        return [
            (str(path), str(name), str(scope), int(start), int(end))
            for path, name, scope, start, end in self.conn.execute(
                f"""SELECT f.path, d.name, d.scope, d.start_line, d.end_line FROM definitions d
                    JOIN files f ON f.id = d.file_id
                    WHERE d.name IN ({marks}) AND f.repository_id = ? AND f.status = 'indexed'""",
                (*names, repository_id),
            )
        ]

    def namespace_scopes(self, repository_id: int) -> list[tuple[str, str]]:
        """(path, scope) of every namespace definition of the repository (C#, PHP), by path."""
        return [
            (str(path), str(scope))
            for path, scope in self.conn.execute(
                """SELECT f.path, d.scope FROM definitions d JOIN files f ON f.id = d.file_id
                   WHERE f.repository_id = ? AND f.status = 'indexed' AND d.kind = 'namespace'
                   ORDER BY f.path, d.ordinal""",
                (repository_id,),
            )
        ]

    def files_leaf_texts(self, repository_id: int, paths: list[str]) -> dict[str, list[tuple[int, str]]]:
        """path -> (start line, text) of its leaves in order: each file as far as its leaves hold it."""
        out: dict[str, list[tuple[int, str]]] = {path: [] for path in paths}
        for path, start_line, text in self._by_path(
            """SELECT f.path, l.start_line, l.text FROM leaves l JOIN files f ON f.id = l.file_id
               WHERE f.repository_id = ? AND f.path IN ({marks}) ORDER BY f.path, l.ordinal""",
            repository_id,
            paths,
        ):
            out[path].append((int(start_line), str(text)))
        return out

    def import_bindings(self, repository_id: int, path: str) -> list[ImportBinding]:
        """The names a file's imports bind, in the order written (none for a file read by an older
        hsc: it is read again by the next index run)."""
        return self.files_facts(repository_id, [path]).get(path, ("", [], []))[2]

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
