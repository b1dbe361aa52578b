"""Summaries, saved hierarchies, their nodes and memberships."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from hsc.model import common_scope
from hsc.store.database import Database


class HierarchyTables(Database):
    """The tables of the hierarchies built over a repository's leaves."""

    # -- summaries ----------------------------------------------------------------

    def summary(self, summariser: str, model: str, content_hash: str) -> dict[str, Any] | None:
        return self.row(
            "SELECT * FROM summaries WHERE summariser = ? AND model = ? AND content_hash = ?",
            (summariser, model, content_hash),
        )

    def save_summary(self, summariser: str, model: str, content_hash: str, text: str, note: str = "") -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO summaries (summariser, model, content_hash, text, note, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (summariser, model, content_hash, text, note, time.time()),
        )

    # -- hierarchies --------------------------------------------------------------

    def save_hierarchy(
        self,
        repository_id: int,
        name: str,
        parameters: dict[str, Any],
        model: str,
        counts: dict[str, int],
        mid_rows: list[dict[str, Any]],
        top_rows: list[dict[str, Any]],
        memberships: list[tuple[int, int]],
    ) -> int:
        """Replace the hierarchy called ``name``. ``mid_rows[i]["parent"]`` is the
        index of its top row; ``memberships`` pairs (leaf id, mid row index).
        A fresh id each time, so anything keyed by id (the HNSW file) is new."""
        with self.transaction():
            self.conn.execute(
                "DELETE FROM hierarchies WHERE repository_id = ? AND name = ?", (repository_id, name)
            )
            hierarchy_id = int(
                self.conn.execute(
                    """INSERT INTO hierarchies (repository_id, name, parameters, embedding_model, created_at,
                           leaf_count, group_count, document_count, topic_boundaries)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        repository_id,
                        name,
                        json.dumps(parameters),
                        model,
                        time.time(),
                        counts["leaves"],
                        counts["groups"],
                        counts["documents"],
                        counts["topic_boundaries"],
                    ),
                ).lastrowid
                or 0
            )
            mid_ids = self._insert_nodes(hierarchy_id, mid_rows, top_rows)
            self.conn.executemany(
                "INSERT INTO memberships (hierarchy_id, leaf_id, node_id) VALUES (?, ?, ?)",
                [(hierarchy_id, leaf_id, mid_ids[mid]) for leaf_id, mid in memberships],
            )
            self._save_group_scopes(hierarchy_id, mid_ids)
        return hierarchy_id

    def replace_hierarchy_files(
        self,
        hierarchy_id: int,
        repository_id: int,
        paths: list[str],
        mid_rows: list[dict[str, Any]],
        top_rows: list[dict[str, Any]],
        memberships: list[tuple[int, int]],
    ) -> None:
        """Swap the groups and documents of the files in ``paths`` (and of files
        no longer indexed) for new ones, in one transaction; the hierarchy keeps
        its id, its ordinals follow document order again and its counts are
        recounted. Rows are as for :meth:`save_hierarchy`."""
        marks = ", ".join("?" * len(paths))
        with self.transaction():
            stale = [
                row[0]
                for row in self.conn.execute(
                    f"""SELECT n.id FROM nodes n WHERE n.hierarchy_id = ? AND (n.file_id NOT IN
                           (SELECT id FROM files) OR n.file_id IN
                           (SELECT id FROM files WHERE repository_id = ? AND path IN ({marks})))""",
                    (hierarchy_id, repository_id, *paths),
                )
            ]
            self.conn.executemany(
                "DELETE FROM memberships WHERE hierarchy_id = ? AND node_id = ?",
                [(hierarchy_id, node_id) for node_id in stale],
            )
            self.conn.executemany("DELETE FROM nodes WHERE id = ?", [(node_id,) for node_id in stale])
            mid_ids = self._insert_nodes(hierarchy_id, mid_rows, top_rows)
            self.conn.executemany(
                "INSERT INTO memberships (hierarchy_id, leaf_id, node_id) VALUES (?, ?, ?)",
                [(hierarchy_id, leaf_id, mid_ids[mid]) for leaf_id, mid in memberships],
            )
            self._save_group_scopes(hierarchy_id, mid_ids)
            self.conn.execute(
                """UPDATE nodes SET ordinal = ranked.position FROM (
                       SELECT n.id, ROW_NUMBER() OVER (PARTITION BY n.level
                           ORDER BY f.path, n.start_line, n.id) - 1 AS position
                       FROM nodes n JOIN files f ON f.id = n.file_id WHERE n.hierarchy_id = ?) AS ranked
                   WHERE nodes.id = ranked.id""",
                (hierarchy_id,),
            )
            self.conn.execute(
                """UPDATE hierarchies SET created_at = ?,
                       leaf_count = (SELECT COUNT(*) FROM memberships WHERE hierarchy_id = ?),
                       group_count = (SELECT COUNT(*) FROM nodes WHERE hierarchy_id = ? AND level = 'mid'),
                       document_count = (SELECT COUNT(*) FROM nodes WHERE hierarchy_id = ? AND level = 'top')
                   WHERE id = ?""",
                (time.time(), hierarchy_id, hierarchy_id, hierarchy_id, hierarchy_id),
            )
            # Every file's groups are its document's plus one per topic boundary inside it.
            self.conn.execute(
                "UPDATE hierarchies SET topic_boundaries = group_count - document_count WHERE id = ?",
                (hierarchy_id,),
            )

    NODE_COLUMNS = (
        "file_id",
        "start_line",
        "end_line",
        "token_count",
        "leaf_count",
        "summariser",
        "summary_model",
        "summary_hash",
    )

    def _insert_nodes(
        self, hierarchy_id: int, mid_rows: list[dict[str, Any]], top_rows: list[dict[str, Any]]
    ) -> list[int]:
        """Insert documents, then groups under them; the groups' new ids, in order."""
        columns = self.NODE_COLUMNS
        insert = (
            f"INSERT INTO nodes (hierarchy_id, level, ordinal, parent_id, {', '.join(columns)}) "
            f"VALUES (?, ?, ?, ?, {', '.join('?' * len(columns))})"
        )
        top_ids = []
        for ordinal, top in enumerate(top_rows):
            values = (hierarchy_id, "top", ordinal, None, *(top.get(c) for c in columns))
            top_ids.append(int(self.conn.execute(insert, values).lastrowid or 0))
        mid_ids = []
        for ordinal, mid in enumerate(mid_rows):
            values = (hierarchy_id, "mid", ordinal, top_ids[mid["parent"]], *(mid.get(c) for c in columns))
            mid_ids.append(int(self.conn.execute(insert, values).lastrowid or 0))
        return mid_ids

    def _save_group_scopes(self, hierarchy_id: int, mid_ids: list[int]) -> None:
        """The common scope of each new group's leaves (in the caller's transaction)."""
        members = self.members_of(hierarchy_id, mid_ids, with_text=False)
        self.conn.executemany(
            "INSERT OR REPLACE INTO group_scopes (node_id, scope) VALUES (?, ?)",
            [(node_id, common_scope([leaf["scope"] for leaf in rows])) for node_id, rows in members.items()],
        )

    def group_labels(self, node_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """Node id -> what a query shows of a group: its path, lines, number of
        leaves, summary and common scope (None for a group made before scopes
        were stored: its leaves must be read), in a few queries."""
        ids = sorted(set(node_ids))  # in key order: neighbouring lookups share pages
        # A database from before the table, opened read-only, cannot be given it.
        scope = "g.scope" if self._has_table("group_scopes") else "NULL"
        joined = " LEFT JOIN group_scopes g ON g.node_id = n.id" if scope != "NULL" else ""
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for row in self.conn.execute(
                f"""SELECT n.id, f.path, n.start_line, n.end_line, n.leaf_count, s.text, {scope}
                    FROM nodes n JOIN files f ON f.id = n.file_id
                    LEFT JOIN summaries s ON s.summariser = n.summariser AND s.model = n.summary_model
                         AND s.content_hash = n.summary_hash{joined}
                    WHERE n.id IN ({", ".join("?" * len(chunk))})""",
                chunk,
            ):
                found[int(row[0])] = dict(zip(self.GROUP_LABEL, row[1:]))
        return found

    GROUP_LABEL = ("path", "start_line", "end_line", "leaf_count", "summary", "scope")

    def hierarchies(self, repository_id: int) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM hierarchies WHERE repository_id = ? ORDER BY name", (repository_id,))

    def hierarchy(self, hierarchy_id: int) -> dict[str, Any] | None:
        return self.row("SELECT * FROM hierarchies WHERE id = ?", (hierarchy_id,))

    def hierarchy_by_name(self, repository_id: int, name: str) -> dict[str, Any] | None:
        return self.row(
            "SELECT * FROM hierarchies WHERE repository_id = ? AND name = ?", (repository_id, name)
        )

    def delete_hierarchy(self, hierarchy_id: int) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM hierarchies WHERE id = ?", (hierarchy_id,))

    NODE_SELECT = """SELECT n.*, f.path, f.language, s.text AS summary, s.note AS summary_note
                     FROM nodes n JOIN files f ON f.id = n.file_id
                     LEFT JOIN summaries s ON s.summariser = n.summariser AND s.model = n.summary_model
                          AND s.content_hash = n.summary_hash"""

    def nodes(self, hierarchy_id: int, level: str) -> list[dict[str, Any]]:
        return self.rows(
            f"{self.NODE_SELECT} WHERE n.hierarchy_id = ? AND n.level = ? ORDER BY n.ordinal",
            (hierarchy_id, level),
        )

    def node(self, node_id: int) -> dict[str, Any] | None:
        return self.row(f"{self.NODE_SELECT} WHERE n.id = ?", (node_id,))

    def child_nodes(self, node_id: int) -> list[dict[str, Any]]:
        return self.rows(f"{self.NODE_SELECT} WHERE n.parent_id = ? ORDER BY n.ordinal", (node_id,))

    def group_members(
        self, hierarchy_id: int, node_id: int | None = None, with_text: bool = True
    ) -> dict[int, list[dict[str, Any]]]:
        """Mid node id -> its leaf rows in document order, for one node or all, in one query."""
        text = ", l.text" if with_text else ""
        node_filter = " AND m.node_id = ?" if node_id is not None else ""
        hierarchy = "+m.hierarchy_id" if node_id is not None else "m.hierarchy_id"  # as in members_of
        members: dict[int, list[dict[str, Any]]] = {} if node_id is None else {node_id: []}
        for row in self.rows(
            f"""SELECT m.node_id, l.id, l.scope{text} FROM memberships m
                JOIN leaves l ON l.id = m.leaf_id JOIN files f ON f.id = l.file_id
                WHERE {hierarchy} = ?{node_filter} ORDER BY f.path, l.ordinal""",
            (hierarchy_id, node_id) if node_id is not None else (hierarchy_id,),
        ):
            members.setdefault(int(row.pop("node_id")), []).append(row)
        return members

    def nodes_by_id(self, node_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """Node id -> its row, for many nodes in a few queries (missing ids are left out)."""
        ids = list(dict.fromkeys(node_ids))
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):  # stay under SQLite's variable limit
            chunk = ids[start : start + 500]
            for row in self.rows(f"{self.NODE_SELECT} WHERE n.id IN ({', '.join('?' * len(chunk))})", chunk):
                found[int(row["id"])] = row
        return found

    def members_of(
        self, hierarchy_id: int, node_ids: Iterable[int], with_text: bool = True
    ) -> dict[int, list[dict[str, Any]]]:
        """Mid node id -> its leaf rows in document order, for many nodes in a few queries."""
        ids = list(dict.fromkeys(node_ids))
        text = ", l.text" if with_text else ""
        members: dict[int, list[dict[str, Any]]] = {node_id: [] for node_id in ids}
        # "+m.hierarchy_id": look the nodes up by memberships_by_node, not the hierarchy's
        # primary key (SQLite chose that, and read all of the hierarchy's memberships).
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for row in self.rows(
                f"""SELECT m.node_id, l.id, l.scope{text} FROM memberships m
                    JOIN leaves l ON l.id = m.leaf_id JOIN files f ON f.id = l.file_id
                    WHERE +m.hierarchy_id = ? AND m.node_id IN ({", ".join("?" * len(chunk))})
                    ORDER BY f.path, l.ordinal""",
                (hierarchy_id, *chunk),
            ):
                members[int(row.pop("node_id"))].append(row)
        return members

    def memberships(self, hierarchy_id: int) -> dict[int, int]:
        """leaf id -> mid node id."""
        return {
            int(leaf): int(node)
            for leaf, node in self.conn.execute(
                "SELECT leaf_id, node_id FROM memberships WHERE hierarchy_id = ?", (hierarchy_id,)
            )
        }

    def membership_arrays(self, hierarchy_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(leaf ids, their mid node ids) of a hierarchy, as arrays."""
        pairs = np.array(
            self.conn.execute(
                "SELECT leaf_id, node_id FROM memberships WHERE hierarchy_id = ?", (hierarchy_id,)
            ).fetchall(),
            dtype=np.int64,
        ).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]

    def parent_of_leaf(self, hierarchy_id: int, leaf_id: int) -> int | None:
        found = self.row(
            "SELECT node_id FROM memberships WHERE hierarchy_id = ? AND leaf_id = ?", (hierarchy_id, leaf_id)
        )
        return int(found["node_id"]) if found else None
