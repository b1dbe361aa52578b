"""What a coding agent can do with an index, as plain functions that return
JSON-ready dicts: index, sync, search, give the context for a query at a token
budget, walk the hierarchy, report status.

No protocol here: the MCP server (``hsc.integrations.mcp_server``) only wraps
these. Bad input raises :class:`ToolInputError` with a message an agent can act
on. One lock serialises the calls, since they share one SQLite connection.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

from hsc.api import Index, NodeView, QueryResult, parse_node_id
from hsc.chunk.roles import parse_roles
from hsc.index.pipeline import PendingChanges, ProgressCallback, pending_changes
from hsc.params import RETRIEVAL_MODES, Parameters, with_values
from hsc.search.regions import level_overrides

SHOWN_PATHS = 20  # paths listed per kind of change; the counts are always complete
MAX_LIMIT = 100
DEFAULT_BUDGET = 2048  # cl100k tokens: the budget hsc's context policy was chosen at
MAX_BUDGET = 100_000


class ToolInputError(ValueError):
    """The caller asked for something that cannot be done; the message says why and what to do."""


def _iso(timestamp: float | None) -> str | None:
    if not timestamp:
        return None
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="seconds")


def _brief(view: NodeView) -> dict[str, Any]:
    return {
        "id": view.id,
        "level": view.level,
        "path": view.path,
        "start_line": view.start_line,
        "end_line": view.end_line,
        "scope": view.scope,
    }


def _changes_json(changes: PendingChanges) -> dict[str, Any]:
    return {
        "count": changes.count,
        **{kind: getattr(changes, kind)[:SHOWN_PATHS] for kind in ("added", "modified", "removed")},
        **{f"{kind}_count": len(getattr(changes, kind)) for kind in ("added", "modified", "removed")},
    }


class CodeSearch:
    """Index, sync, search and walk one hsc database."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._lock = threading.RLock()

    # -- repositories -------------------------------------------------------------------

    def _folder(self, path: str) -> Path:
        root = Path(path).expanduser()
        if not root.exists():
            raise ToolInputError(f"no such folder: {path}")
        if not root.is_dir():
            raise ToolInputError(f"not a folder: {path} (give the repository's top folder)")
        return root.resolve()

    def _indexed_id(self, path: str) -> int:
        repository_id = self.index.repository_id(path)
        if repository_id is None:
            known = ", ".join(r["root"] for r in self.index.repositories()) or "none yet"
            raise ToolInputError(f"{path} is not indexed yet; call index_repository first (indexed: {known})")
        return repository_id

    def _parameters(self, repository_id: int | None) -> Parameters:
        """The chunk sizes the repository was cut with, so an update re-cuts only changed files."""
        repository = self.index.store.repository(repository_id) if repository_id else None
        stored = json.loads(repository["parameters"]) if repository and repository["parameters"] else {}
        return with_values(Parameters(), stored)

    def index_repository(self, path: str, progress: ProgressCallback | None = None) -> dict[str, Any]:
        root = self._folder(path)
        with self._lock:
            params = self._parameters(self.index.repository_id(root))
            report = self.index.index(root, params, progress=progress)
        return {**report.to_json(), "database": str(self.index.store.path)}

    def sync(self, path: str, progress: ProgressCallback | None = None) -> dict[str, Any]:
        root = self._folder(path)
        with self._lock:
            repository_id = self._indexed_id(str(root))
            changes = pending_changes(self.index.store, repository_id, root)
            if not changes.count:
                return {"root": str(root), "changes": _changes_json(changes), "reindexed": False}
            report = self.index.index(root, self._parameters(repository_id), progress=progress)
        return {"root": str(root), "changes": _changes_json(changes), "reindexed": True, **report.to_json()}

    def status(self) -> dict[str, Any]:
        with self._lock:
            repositories = []
            for repository in self.index.repositories():
                root = Path(repository["root"])
                entry: dict[str, Any] = {
                    "root": str(root),
                    "name": repository["name"],
                    "indexed_at": _iso(repository["indexed_at"]),
                    "files": repository["file_count"],
                    "leaves": repository["leaf_count"],
                    "languages": sorted(
                        {f["language"] or "text" for f in self.index.files(repository["id"])}
                    ),
                    "embedding_model": repository["embedding_model"],
                }
                if root.is_dir():
                    entry["changed_on_disk"] = _changes_json(
                        pending_changes(self.index.store, int(repository["id"]), root)
                    )
                else:
                    entry["changed_on_disk"] = None
                    entry["note"] = "the folder no longer exists"
                repositories.append(entry)
        return {"database": str(self.index.store.path), "repositories": repositories}

    # -- search --------------------------------------------------------------------------

    @staticmethod
    def _check_query(query: str, mode: str | None) -> None:
        if not query.strip():
            raise ToolInputError("the query is empty; describe the code you are looking for")
        if mode is not None and mode not in RETRIEVAL_MODES:
            raise ToolInputError(f"unknown mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}")

    @staticmethod
    def _check_roles(roles: str | None) -> None:
        if roles is not None and roles.strip().lower() not in ("all", "*"):
            try:
                parse_roles(roles)
            except ValueError as error:
                raise ToolInputError(f"{error}, or 'all'") from None

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: str | None = None,
        path_prefix: str | None = None,
        language: str | None = None,
        repository: str | None = None,
        roles: str | None = None,
    ) -> dict[str, Any]:
        """``roles``: files of these roles only (comma-separated; "all": every file); default
        the hierarchy's ``tool_roles`` (code), or every file of a repository without such files."""
        self._check_query(query, mode)
        self._check_roles(roles)
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolInputError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        with self._lock:
            repository_ids, roots = self._asked(repository)
            found: list[tuple[int, QueryResult]] = []
            compared = 0
            modes = []
            for repository_id in repository_ids:
                results, leaves_compared, used = self._search_one(
                    repository_id, query, limit, mode, path_prefix, language, roles
                )
                found += [(repository_id, r) for r in results]
                compared += leaves_compared
                modes.append(used)
        found.sort(key=lambda pair: -pair[1].score)
        results = [
            self._result_json(rank, roots[repository_id], result)
            for rank, (repository_id, result) in enumerate(found[:limit], start=1)
        ]
        first_rank: dict[str, int] = {}  # a group's summary is given once, at its best hit
        for result in results:
            parent = result["parent"]
            if parent and parent["id"] in first_rank:
                parent["summary"] = f"(the same group as rank {first_rank[parent['id']]})"
            elif parent:
                first_rank[parent["id"]] = result["rank"]
        shown = mode or ", ".join(dict.fromkeys(modes))  # each hierarchy's own when not given
        return {"query": query, "mode": shown, "leaves_compared": compared, "results": results}

    def _search_one(
        self,
        repository_id: int,
        query: str,
        limit: int,
        mode: str | None,
        path_prefix: str | None,
        language: str | None,
        roles: str | None = None,
    ) -> tuple[list[QueryResult], int, str]:
        """Filters apply to the retrieved leaves; with a filter, ask for more
        (4x, 16x, ...) until ``limit`` pass or every leaf has been ranked.
        Also returns the mode that answered (``mode``, or the hierarchy's)."""
        hierarchy_id = self.index.default_hierarchy(repository_id)
        stored = self.index.hierarchy_parameters(hierarchy_id)
        total = len(self.index.leaf_table(repository_id))
        searched = self.index.tool_roles(roles, repository_id, stored)
        factor = 1
        while True:
            params = self.index.hierarchy_parameters(
                hierarchy_id, leaf_level_top_k=limit * factor, mid_level_top_k=stored.mid_level_top_k * factor
            )
            response = self.index.query(
                query,
                hierarchy_id=hierarchy_id,
                params=params,
                mode=mode,
                record=False,
                compare=False,
                regions=False,
                roles=searched,
            )
            kept = [
                r
                for r in response.results
                if (not path_prefix or r.path.startswith(path_prefix.removeprefix("./")))
                and (not language or r.language == language)
            ]
            if len(kept) >= limit or not (path_prefix or language) or limit * factor >= total:
                return kept[:limit], response.leaves_compared, response.mode
            factor *= 4

    def _asked(self, repository: str | None) -> tuple[list[int], dict[int, str]]:
        """The ids of the repositories a call asks about (the one named, else every one) and each
        indexed repository's root folder; nothing indexed is the caller's error."""
        repositories = self.index.repositories()
        if repository is not None:
            repository_ids = [self._indexed_id(repository)]
        elif repositories:
            repository_ids = [int(r["id"]) for r in repositories]
        else:
            raise ToolInputError("nothing is indexed yet; call index_repository with a folder first")
        return repository_ids, {int(r["id"]): r["root"] for r in repositories}

    def locate(
        self, query: str, limit: int = 10, repository: str | None = None, level: str = "any"
    ) -> dict[str, Any]:
        """The files and the definitions to open first: :attr:`QueryResponse.files` and
        :attr:`QueryResponse.regions` of each repository asked, merged by score. ``level``
        "definition" draws the regions from definitions alone (a definition, not its file), "type"
        from types alone, nested ones too (a question about a class; docs/hierarchy.md, "Asking at
        one level" and "The type level")."""
        self._check_query(query, None)
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolInputError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        try:
            levels = level_overrides(level)
        except ValueError as error:
            raise ToolInputError(str(error)) from None
        with self._lock:
            repository_ids, roots = self._asked(repository)
            files: list[tuple[str, Any]] = []
            regions: list[tuple[str, Any]] = []
            for repository_id in repository_ids:
                hierarchy_id = self.index.default_hierarchy(repository_id)
                params = self.index.hierarchy_parameters(hierarchy_id, region_count=limit, **levels)
                response = self.index.query(
                    query, hierarchy_id=hierarchy_id, params=params, record=False, compare=False
                )
                files += [(roots[repository_id], found) for found in response.files]
                regions += [(roots[repository_id], found) for found in response.regions]

        def listed(pairs: list[tuple[str, Any]]) -> list[dict[str, Any]]:
            pairs = sorted(pairs, key=lambda pair: -pair[1].score)[:limit]
            return [
                {"rank": rank, "repository": root, **found.to_json()}
                for rank, (root, found) in enumerate(pairs, 1)
            ]

        return {"query": query, "files": listed(files), "regions": listed(regions)}

    @staticmethod
    def _result_json(rank: int, root: str, result: QueryResult) -> dict[str, Any]:
        parent = result.parent
        return {
            "rank": rank,
            "id": result.leaf_id,
            "repository": root,
            "path": result.path,
            "start_line": result.start_line,
            "end_line": result.end_line,
            "scope": result.scope,
            "language": result.language,
            "score": round(result.score, 4),
            "code": result.text,
            "parent": None
            if parent is None
            else {
                **_brief(parent),
                "score": None if result.parent_score is None else round(result.parent_score, 4),
                "summary": parent.summary,
                "leaf_count": len(parent.children),
            },
        }

    # -- context -------------------------------------------------------------------------

    def context(
        self,
        query: str,
        budget_tokens: int = DEFAULT_BUDGET,
        path_prefix: str | None = None,
        language: str | None = None,
        repository: str | None = None,
        roles: str | None = None,
    ) -> dict[str, Any]:
        """The context pack of one repository (:meth:`hsc.Index.context`) as its
        ``--json`` object, with the repository's folder added. A pack fills one
        budget from one repository, so with several indexed, ``repository`` says which.
        The retrieval mode is the hierarchy's (``retrieval_mode``); ``roles`` as :meth:`search`'s
        (a pack spends its budget on docs only when the repository has no code, or when asked)."""
        self._check_query(query, None)
        self._check_roles(roles)
        if not 1 <= budget_tokens <= MAX_BUDGET:
            raise ToolInputError(f"budget_tokens must be between 1 and {MAX_BUDGET}, not {budget_tokens}")
        with self._lock:
            repositories = self.index.repositories()
            if repository is not None:
                repository_id = self._indexed_id(repository)
            elif len(repositories) == 1:
                repository_id = int(repositories[0]["id"])
            elif not repositories:
                raise ToolInputError("nothing is indexed yet; call index_repository with a folder first")
            else:
                roots = ", ".join(r["root"] for r in repositories)
                raise ToolInputError(
                    f"{len(repositories)} repositories are indexed; say which with repository "
                    f"(one of: {roots})"
                )
            root = next(r["root"] for r in repositories if int(r["id"]) == repository_id)
            hierarchy_id = self.index.default_hierarchy(repository_id)
            stored = self.index.hierarchy_parameters(hierarchy_id)
            pack = self.index.context(
                query,
                budget_tokens,
                repository_id=repository_id,
                roles=self.index.tool_roles(roles, repository_id, stored),
                path_prefix=path_prefix or None,
                language=language or None,
            )
        return {"repository": root, **pack.to_json()}

    # -- nodes ---------------------------------------------------------------------------

    def node(self, node_id: str) -> dict[str, Any]:
        try:
            parse_node_id(node_id)
        except ValueError as error:
            raise ToolInputError(f"{error}; ids come from search_code results") from None
        with self._lock:
            try:
                view = self.index.node(node_id)
            except KeyError:
                raise ToolInputError(
                    f"no node {node_id} in this index (re-indexing renumbers nodes)"
                ) from None
            parent = self.index.node(view.parent_id) if view.parent_id else None
            children = [self.index.node(child) for child in view.children]
        return {
            **_brief(view),
            "language": view.language,
            "node_type": view.node_type,
            "token_count": view.token_count,
            "summary": view.summary,
            # A leaf's code; a group's code when it is short enough to need no summary.
            "code": view.text if view.level == "leaf" or not view.summary else None,
            "parent": _brief(parent) if parent else None,
            "children": [_brief(child) for child in children],
        }
