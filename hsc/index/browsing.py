"""The browsing half of :class:`hsc.api.Index`: a node by id, its parent and
children, a hierarchy's groups and documents, and two hierarchies compared.

:class:`Browsing` is a base of ``Index`` and reads only through its Store.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hsc.hierarchy.groups import LeafTable
from hsc.model import LeafContext, LeafFacts, common_scope, leaf_context
from hsc.search.results import NodeView, parse_node_id
from hsc.store import Store

DEFAULT_HIERARCHY = "default"


class Browsing:
    """Views of a stored hierarchy's nodes (a base of :class:`hsc.api.Index`)."""

    store: Store

    def hierarchy(self, hierarchy_id: int) -> dict[str, Any]:
        raise NotImplementedError  # Index's

    def leaf_table(self, repository_id: int | None = None) -> LeafTable:
        raise NotImplementedError  # Index's

    def _mid_view(self, row: dict[str, Any], members: list[dict[str, Any]] | None = None) -> NodeView:
        """``members``: the group's leaf rows in order (looked up when not given)."""
        if members is None:
            members = self.store.group_members(int(row["hierarchy_id"]), node_id=int(row["id"]))[
                int(row["id"])
            ]
        leaf_ids = [int(leaf["id"]) for leaf in members]
        return NodeView(
            id=f"{row['level']}:{row['id']}",
            level=row["level"],
            path=row["path"],
            language=row["language"] or "",
            start_line=row["start_line"],
            end_line=row["end_line"],
            scope=common_scope([leaf["scope"] for leaf in members]),
            node_type="group",
            token_count=row["token_count"],
            parent_id=f"top:{row['parent_id']}" if row["parent_id"] else None,
            children=[f"leaf:{i}" for i in leaf_ids],
            summary=row["summary"],
            summariser=row["summariser"],
            summary_model=row["summary_model"],
            text="\n\n".join(leaf.get("text", "") for leaf in members),
        )

    def _mid_views(self, hierarchy_id: int, node_ids: list[int], with_text: bool) -> dict[int, NodeView]:
        """Views of many groups in a few queries (a widened stage 1 opens thousands)."""
        rows = self.store.nodes_by_id(node_ids)
        members = self.store.members_of(hierarchy_id, list(rows), with_text)
        return {node_id: self._mid_view(row, members[node_id]) for node_id, row in rows.items()}

    def _top_view(self, row: dict[str, Any]) -> NodeView:
        from hsc.chunk.parse import module_name

        children = self.store.child_nodes(int(row["id"]))
        return NodeView(
            id=f"top:{row['id']}",
            level="top",
            path=row["path"],
            language=row["language"] or "",
            start_line=row["start_line"],
            end_line=row["end_line"],
            scope=module_name(row["path"]),
            node_type="document",
            token_count=row["token_count"],
            parent_id=None,
            children=[f"mid:{child['id']}" for child in children],
            summary=row["summary"],
            summariser=row["summariser"],
            summary_model=row["summary_model"],
        )

    def leaf_context(self, leaf_ids: list[str]) -> dict[str, LeafContext]:
        """Leaf id ("leaf:N") -> what the syntax tree said about it when it was cut: imports,
        defined and used names, and the definitions it starts or sits inside (signatures and
        first doc sentences), read from the database without parsing anything again."""
        numbers = [parse_node_id(leaf_id)[1] for leaf_id in leaf_ids]
        rows = self.store.leaves_by_id(numbers)
        facts = self.store.leaf_facts(numbers)
        definitions: dict[tuple[int, str], list[Any]] = {}
        contexts: dict[str, LeafContext] = {}
        for number in numbers:
            row = rows.get(number)
            if row is None:
                continue
            key = (int(row["repository_id"]), row["path"])
            if key not in definitions:
                definitions[key] = self.store.definitions(*key).get(row["path"], [])
            contexts[f"leaf:{number}"] = leaf_context(
                facts.get(number, LeafFacts()), definitions[key], row["start_line"], row["end_line"]
            )
        return contexts

    def _leaf_view(self, row: dict[str, Any], hierarchy_id: int | None) -> NodeView:
        parent = None
        if hierarchy_id is not None:
            found = self.store.parent_of_leaf(hierarchy_id, int(row["id"]))
            parent = f"mid:{found}" if found else None
        return NodeView(
            id=f"leaf:{row['id']}",
            level="leaf",
            path=row["path"],
            language=row["language"] or "",
            start_line=row["start_line"],
            end_line=row["end_line"],
            scope=row["scope"],
            node_type=row["node_type"],
            token_count=row["token_count"],
            parent_id=parent,
            children=[],
            text=row["text"],
            context=self.leaf_context([f"leaf:{row['id']}"]).get(f"leaf:{row['id']}"),
        )

    def node(self, node_id: str, hierarchy_id: int | None = None) -> NodeView:
        """Any node by id. A leaf belongs to one group per hierarchy: pass the
        hierarchy to get its parent (the ``default`` one is used otherwise)."""
        level, number = parse_node_id(node_id)
        if level == "leaf":
            row = self.store.leaf(number)
            if row is None:
                raise KeyError(f"no node {node_id}")
            if hierarchy_id is None:
                found = self.store.hierarchy_by_name(int(row["repository_id"]), DEFAULT_HIERARCHY)
                hierarchy_id = int(found["id"]) if found else None
            return self._leaf_view(row, hierarchy_id)
        row = self.store.node(number)
        if row is None or row["level"] != level:
            raise KeyError(f"no node {node_id}")
        return self._mid_view(row) if level == "mid" else self._top_view(row)

    def parent(self, node_id: str, hierarchy_id: int | None = None) -> NodeView | None:
        parent_id = self.node(node_id, hierarchy_id).parent_id
        return self.node(parent_id) if parent_id else None

    def children(self, node_id: str) -> list[NodeView]:
        return [self.node(child) for child in self.node(node_id).children]

    def groups(self, hierarchy_id: int, with_text: bool = False) -> list[NodeView]:
        members = self.store.group_members(hierarchy_id, with_text=with_text)
        return [
            self._mid_view(row, members.get(int(row["id"]), []))
            for row in self.store.nodes(hierarchy_id, "mid")
        ]

    def documents(self, hierarchy_id: int) -> list[NodeView]:
        return [self._top_view(row) for row in self.store.nodes(hierarchy_id, "top")]

    def data_files(self, repository_id: int | None = None) -> set[str]:
        """Paths of the files cut as data or generated (hsc.chunk.datafiles): indexed and
        searchable, left out of the hierarchy's statistics and charts by default."""
        return self.store.data_paths(self._only_repository(repository_id))

    def compare(self, first_id: int, second_id: int, with_data: bool = False) -> dict[str, Any]:
        """How two hierarchies of one repository differ: group counts and
        sizes, and the leaves whose group is not the same run of leaves.
        The sizes leave out the groups of data files unless ``with_data``."""
        first, second = self.hierarchy(first_id), self.hierarchy(second_id)
        if first["repository_id"] != second["repository_id"]:
            raise ValueError("compare hierarchies of the same repository")
        table = self.leaf_table(first["repository_id"])
        data = self.data_files(first["repository_id"]) if not with_data else set()
        counted = np.array([table.paths[f] not in data for f in table.file_index], dtype=bool)

        def runs(hierarchy_id: int) -> tuple[list[int], np.ndarray]:
            membership = self.store.memberships(hierarchy_id)
            owners = np.array([membership.get(int(i), -1) for i in table.leaf_ids])
            _, sizes = np.unique(owners[counted], return_counts=True)
            return sizes.tolist(), owners

        sizes_a, owners_a = runs(first_id)
        sizes_b, owners_b = runs(second_id)
        # A leaf stayed when its group holds exactly the same leaves in both.
        members_a = {o: tuple(np.flatnonzero(owners_a == o)) for o in np.unique(owners_a)}
        members_b = {o: tuple(np.flatnonzero(owners_b == o)) for o in np.unique(owners_b)}
        moved = [i for i in range(len(table)) if members_a[owners_a[i]] != members_b[owners_b[i]]]
        return {
            "first": {
                "id": first_id,
                "name": first["name"],
                "parameters": first["parameters"],
                "group_count": first["group_count"],
                "group_sizes": sizes_a,
            },
            "second": {
                "id": second_id,
                "name": second["name"],
                "parameters": second["parameters"],
                "group_count": second["group_count"],
                "group_sizes": sizes_b,
            },
            "leaf_count": len(table),
            "moved_leaves": [
                {
                    "leaf_id": f"leaf:{int(table.leaf_ids[i])}",
                    "path": table.paths[table.file_index[i]],
                    "scope": table.scopes[i],
                    "start_line": int(table.start_lines[i]),
                    "first_group": f"mid:{int(owners_a[i])}",
                    "second_group": f"mid:{int(owners_b[i])}",
                }
                for i in moved
            ],
        }
