"""The public face of the library: one :class:`Index` over one SQLite file.

The command line and the app call only this. It keeps the expensive things
(the embedding model, leaf tables, HNSW indexes) loaded once per process.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hsc.dbfile import StoreBusy
from hsc.embed import Embedder, EncoderSpec, encoder_cache_dir, make_embedder, resolve_spec, spec_of
from hsc.hierarchy import HierarchyPlan, LeafTable, mean_pool, plan_hierarchy
from hsc.lexical import match_expression, term_text
from hsc.model import LeafContext, LeafFacts, common_scope, leaf_context
from hsc.params import Parameters, Settings, with_values
from hsc.retrieve import (
    LEXICAL_MODES,
    RETRIEVAL_MODES,
    MidLevelIndex,
    Retrieval,
    TwoStageRetriever,
    flat_search,
)
from hsc.store import Store

# Parsing, the pipeline, summarisers and the tokenizer are imported where they
# are used: a query needs none of them, and a cold query is timed (README).
if TYPE_CHECKING:
    from hsc.pipeline import IndexReport, ProgressCallback
    from hsc.summarize import Summarizer
    from hsc.tokens import TokenCounter

DEFAULT_HIERARCHY = "default"
CHUNK_FIELDS = ("minimum_chunk_token_length", "maximum_chunk_token_length")


def _table_rows(table: LeafTable, keep: np.ndarray) -> LeafTable:
    """The rows of ``table`` where ``keep`` is true, still in document order."""
    rows = np.flatnonzero(keep)
    old_files = table.file_index[rows]
    used, file_index = np.unique(old_files, return_inverse=True)
    return LeafTable(
        leaf_ids=table.leaf_ids[rows],
        file_index=file_index.astype(np.int32),
        paths=[table.paths[i] for i in used],
        scopes=[table.scopes[i] for i in rows],
        start_lines=table.start_lines[rows],
        end_lines=table.end_lines[rows],
        token_counts=table.token_counts[rows],
        vectors=table.vectors[rows],
    )


def default_database(repository: str | Path | None = None) -> Path:
    """``.hsc/index.db`` inside the repository, or the current directory."""
    return Path(repository or ".") / ".hsc" / "index.db"


EMPTY_QUERY = "the query is empty: type what you are looking for"


def check_query(text: str | None) -> str:
    """The query text, or the one message every front end gives for an empty one."""
    if text is None or not str(text).strip():
        raise ValueError(EMPTY_QUERY)
    return str(text)


def parse_node_id(node_id: str) -> tuple[str, int]:
    level, sep, number = str(node_id).partition(":")
    if not sep or level not in ("leaf", "mid", "top") or not number.isdigit():
        raise ValueError(f"not a node id: {node_id!r} (expected leaf:N, mid:N or top:N)")
    return level, int(number)


@dataclass
class NodeView:
    """One node of any level, with explicit links up and down."""

    id: str
    level: str  # "leaf", "mid" or "top"
    path: str
    language: str
    start_line: int
    end_line: int
    scope: str
    node_type: str
    token_count: int
    parent_id: str | None
    children: list[str]
    summary: str | None = None
    summariser: str | None = None
    summary_model: str | None = None
    text: str = ""
    context: LeafContext | None = None  # a leaf's facts from the syntax tree (None for groups and files)


@dataclass
class QueryResult:
    rank: int
    score: float
    leaf_id: str
    path: str
    start_line: int
    end_line: int
    scope: str
    parent_id: str | None
    parent_score: float | None
    text: str = ""
    language: str = ""
    parent: NodeView | None = None

    def to_json(self) -> dict[str, Any]:
        keys = (
            "rank",
            "score",
            "leaf_id",
            "path",
            "start_line",
            "end_line",
            "scope",
            "parent_id",
            "parent_score",
        )
        return {k: getattr(self, k) for k in keys}


@dataclass
class GroupResult:
    rank: int
    node_id: str
    score: float
    path: str
    start_line: int
    end_line: int
    scope: str
    leaf_count: int
    summary: str | None


@dataclass
class QueryResponse:
    query: str
    mode: str  # one of hsc.retrieve.RETRIEVAL_MODES
    results: list[QueryResult]
    groups: list[GroupResult]
    flat: list[QueryResult]
    leaves_compared: int
    flat_leaves_compared: int
    elapsed_ms: float  # retrieval only, without embedding the query
    embedding_ms: float
    hierarchy_id: int | None = None
    query_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "results": [r.to_json() for r in self.results],
            "leaves_compared": self.leaves_compared,
        }


@dataclass
class _Loaded:
    """A hierarchy ready to answer queries: its leaf table, node ids, HNSW."""

    hierarchy_id: int
    table: LeafTable
    group_starts: np.ndarray
    group_ends: np.ndarray
    mid_ids: list[int]
    retriever: TwoStageRetriever
    row_of_leaf: dict[int, int] | None = None  # set when the lexical terms are in place


@dataclass
class _Cache:
    tables: dict[tuple[int, float], LeafTable] = field(default_factory=dict)
    loaded: dict[int, _Loaded] = field(default_factory=dict)


class Index:
    """An hsc index: repositories, their leaves and vectors, named hierarchies."""

    def __init__(
        self,
        store: Store,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or Settings()
        # One encoder per spec, loaded once per process; a given embedder is
        # used for every repository (its caller chose it).
        self._embedders: dict[str, Embedder] = {}
        self._given_spec = spec_of(embedder) if embedder is not None else None
        if embedder is not None:
            self._embedders[spec_of(embedder).key] = embedder
        self._summarizer = summarizer
        self._cache = _Cache()

    # -- opening --------------------------------------------------------------------

    @classmethod
    def open(
        cls, database: str | Path, settings: Settings | None = None, create: bool = True, **kwargs: Any
    ) -> Index:
        """Open (or, with ``create``, make) hsc's database at ``database``;
        anything else there is refused untouched with a one-line
        :class:`~hsc.store.StoreError`."""
        return cls(Store(database, create=create), settings, **kwargs)

    @classmethod
    def for_repository(cls, repository: str | Path, settings: Settings | None = None, **kwargs: Any) -> Index:
        return cls.open(default_database(repository), settings, **kwargs)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the expensive parts, made once -------------------------------------------

    @property
    def counter(self) -> TokenCounter:
        from hsc.tokens import get_counter

        return get_counter(self.settings.tokenizer)

    def encoder_spec(self, repository_id: int | None = None) -> EncoderSpec:
        """The encoder for a repository (the only one when not given): the
        settings' backend, or with ``auto`` the one that made its vectors."""
        if self._given_spec is not None:
            return self._given_spec
        if repository_id is None:
            repositories = self.store.repositories()
            repository = repositories[0] if len(repositories) == 1 else {}
        else:
            repository = self.store.repository(repository_id) or {}
        return resolve_spec(self.settings, repository.get("embedding_model"))

    def embedder_for(self, spec: EncoderSpec) -> Embedder:
        if spec.key not in self._embedders:
            self._embedders[spec.key] = make_embedder(
                spec, encoder_cache_dir(self.store.path.parent), self.settings.device
            )
        return self._embedders[spec.key]

    def use_embedder(self, embedder: Embedder) -> None:
        """Use an encoder already loaded for its own spec (it is not loaded again)."""
        self._embedders[spec_of(embedder).key] = embedder

    @property
    def embedder(self) -> Embedder:
        """The encoder of the only repository, or the one the settings name."""
        return self.embedder_for(self.encoder_spec())

    @property
    def summarizer(self) -> Summarizer:
        if self._summarizer is None:
            from hsc.summarize import make_summarizer

            self._summarizer = make_summarizer(self.settings, self.counter)
        return self._summarizer

    def use_summarizer(self, summarizer: Summarizer) -> None:
        self._summarizer = summarizer

    def summariser_description(self) -> str:
        from hsc.summarize import describe_summarizer

        return describe_summarizer(self.summarizer)

    # -- repositories ---------------------------------------------------------------

    def repositories(self) -> list[dict[str, Any]]:
        return self.store.repositories()

    def repository_id(self, path: str | Path) -> int | None:
        root = str(Path(path).resolve())
        for repository in self.store.repositories():
            if repository["root"] == root:
                return int(repository["id"])
        return None

    def _only_repository(self, repository_id: int | None) -> int:
        if repository_id is not None:
            return repository_id
        repositories = self.store.repositories()
        if len(repositories) != 1:
            raise ValueError(
                "this database holds no repository yet; index one first"
                if not repositories
                else "this database holds several repositories; say which"
            )
        return int(repositories[0]["id"])

    def index(
        self, path: str | Path, params: Parameters | None = None, progress: ProgressCallback | None = None
    ) -> IndexReport:
        """Index (or bring up to date) a repository, then rebuild its named
        hierarchies if anything changed (a ``default`` one is made the first time)."""
        root = Path(path)
        if not root.exists():
            raise FileNotFoundError(f"no such folder: {root}")
        if not root.is_dir():
            raise NotADirectoryError(f"not a folder: {root} (give the repository's top folder)")
        from hsc.pipeline import index_repository

        params = params or Parameters()
        spec = self.encoder_spec(self.repository_id(root))
        with self.store.writer("indexing"):
            report = index_repository(
                self.store,
                root,
                params,
                self.settings,
                self.counter,
                lambda: self.embedder_for(spec),
                progress,
                vector_key=spec.key,
            )
            existing = self.store.hierarchies(report.repository_id)
            # The first "default" set is built from the default parameters, whatever
            # ``params`` say about grouping: it is the reference every set is compared with.
            first = [{"name": DEFAULT_HIERARCHY, "parameters": json.dumps(asdict(Parameters()))}]
            if report.changed or not existing:
                notes = []
                for row in existing or first:
                    # A saved set keeps its own grouping and query values; its chunk
                    # sizes become the ones the leaves were just cut with.
                    chunking = {f: getattr(params, f) for f in CHUNK_FIELDS}
                    saved = with_values(Parameters(), {**json.loads(row["parameters"]), **chunking})
                    if self._can_update(row, saved, report, spec.key):
                        self._update(row, saved, report.changed_paths, progress)
                    else:
                        built = self.build(report.repository_id, saved, name=row["name"], progress=progress)
                        notes.append(built["summariser_note"])
                report.summariser_note = next((note for note in notes if note), "")
        return report

    # A hierarchy is updated file by file when a few files changed; more than
    # this many paths rebuild it whole (one SQL statement names them all).
    MAX_UPDATED_FILES = 500

    def _can_update(self, row: dict[str, Any], params: Parameters, report: IndexReport, key: str) -> bool:
        """Only the changed files' groups need replacing: the hierarchy was built
        from these vectors with these chunk sizes, and only some files changed."""
        if "id" not in row or row["embedding_model"] != key:
            return False
        stored = json.loads(row["parameters"])
        same_chunks = all(stored.get(f) == getattr(params, f) for f in CHUNK_FIELDS)
        changed = len(report.changed_paths)
        return same_chunks and 0 < changed <= self.MAX_UPDATED_FILES and changed < report.files_seen

    def _update(
        self, row: dict[str, Any], params: Parameters, paths: list[str], progress: ProgressCallback | None
    ) -> None:
        from hsc.pipeline import update_hierarchy

        repository_id, hierarchy_id = int(row["repository_id"]), int(row["id"])
        changed = self.store.leaf_table(repository_id, row["embedding_model"], sorted(set(paths)))
        update_hierarchy(
            self.store, hierarchy_id, repository_id, changed, paths, params, self.summarizer, progress
        )
        self._forget(hierarchy_id)

    def files(self, repository_id: int | None = None) -> list[dict[str, Any]]:
        return self.store.files(self._only_repository(repository_id))

    def leaves(self, repository_id: int | None = None, with_text: bool = True) -> list[dict[str, Any]]:
        rows = self.store.leaf_rows(self._only_repository(repository_id), with_text=with_text)
        for row in rows:
            row["id"] = f"leaf:{row['id']}"
        return rows

    def leaf_table(self, repository_id: int | None = None) -> LeafTable:
        """The repository's leaves and vectors in document order (cached until re-indexed)."""
        repository_id = self._only_repository(repository_id)
        repository = self.store.repository(repository_id) or {}
        key = (repository_id, float(repository.get("indexed_at") or 0.0))
        if key not in self._cache.tables:
            self._cache.tables = {k: v for k, v in self._cache.tables.items() if k[0] != repository_id}
            model = repository.get("embedding_model") or self.settings.embedding_model
            self._cache.tables[key] = self.store.leaf_table(repository_id, model)
        return self._cache.tables[key]

    # -- hierarchies ------------------------------------------------------------------

    def preview(self, repository_id: int | None, params: Parameters) -> HierarchyPlan:
        """The hierarchy these parameters give, from cached vectors; nothing written."""
        return plan_hierarchy(self.leaf_table(repository_id), params)

    def build(
        self,
        repository_id: int | None,
        params: Parameters | None = None,
        name: str = DEFAULT_HIERARCHY,
        progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Build and store the hierarchy ``name`` (replacing one of that name)."""
        repository_id = self._only_repository(repository_id)
        params = params or Parameters()
        table = self.leaf_table(repository_id)
        repository = self.store.repository(repository_id) or {}
        model = repository.get("embedding_model") or self.settings.embedding_model
        old = self.store.hierarchy_by_name(repository_id, name)
        from hsc.pipeline import build_hierarchy

        start_run = getattr(self.summarizer, "start_run", None)
        if start_run is not None:
            start_run()
        with self.store.writer("building"):
            hierarchy_id, _ = build_hierarchy(
                self.store,
                repository_id,
                table,
                params,
                name,
                model,
                self.summarizer,
                progress,
            )
        if old:
            self._forget(int(old["id"]))
        # Why the summaries are not what the settings asked for ("" when they are): say it once, visibly.
        from hsc.summarize import fallback_note

        return {**self.hierarchy(hierarchy_id), "summariser_note": fallback_note(self.summarizer)}

    def _forget(self, hierarchy_id: int) -> None:
        self._cache.loaded.pop(hierarchy_id, None)
        self._hnsw_path(hierarchy_id).unlink(missing_ok=True)

    def hierarchies(self, repository_id: int | None = None) -> list[dict[str, Any]]:
        rows = self.store.hierarchies(self._only_repository(repository_id))
        for row in rows:
            row["parameters"] = json.loads(row["parameters"])
        return rows

    def hierarchy(self, hierarchy_id: int) -> dict[str, Any]:
        row = self.store.hierarchy(hierarchy_id)
        if row is None:
            raise KeyError(f"no hierarchy {hierarchy_id}")
        row["parameters"] = json.loads(row["parameters"])
        return row

    def hierarchy_parameters(self, hierarchy_id: int, **overrides: Any) -> Parameters:
        """The parameters a hierarchy was built with, with query-time ``overrides``
        (e.g. ``leaf_level_top_k=20``)."""
        return with_values(Parameters(), {**self.hierarchy(hierarchy_id)["parameters"], **overrides})

    def delete_hierarchy(self, hierarchy_id: int) -> None:
        self.store.delete_hierarchy(hierarchy_id)
        self._forget(hierarchy_id)

    def default_hierarchy(self, repository_id: int | None = None) -> int:
        """The ``default`` hierarchy's id, built with default parameters if missing."""
        repository_id = self._only_repository(repository_id)
        row = self.store.hierarchy_by_name(repository_id, DEFAULT_HIERARCHY)
        if row is None:
            return int(self.build(repository_id)["id"])
        return int(row["id"])

    # -- nodes ------------------------------------------------------------------------

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

    def _top_view(self, row: dict[str, Any]) -> NodeView:
        from hsc.parse import module_name

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

    def compare(self, first_id: int, second_id: int) -> dict[str, Any]:
        """How two hierarchies of one repository differ: group counts and
        sizes, and the leaves whose group is not the same run of leaves."""
        first, second = self.hierarchy(first_id), self.hierarchy(second_id)
        if first["repository_id"] != second["repository_id"]:
            raise ValueError("compare hierarchies of the same repository")
        table = self.leaf_table(first["repository_id"])

        def runs(hierarchy_id: int) -> tuple[list[int], np.ndarray]:
            membership = self.store.memberships(hierarchy_id)
            owners = np.array([membership.get(int(i), -1) for i in table.leaf_ids])
            _, sizes = np.unique(owners, return_counts=True)
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

    # -- retrieval ------------------------------------------------------------------------

    def _hnsw_path(self, hierarchy_id: int) -> Path:
        return self.store.path.parent / "hnsw" / f"{self.store.path.stem}-h{hierarchy_id}.bin"

    def _load(self, hierarchy_id: int) -> _Loaded:
        if hierarchy_id in self._cache.loaded:
            return self._cache.loaded[hierarchy_id]
        hierarchy = self.hierarchy(hierarchy_id)
        table = self.leaf_table(hierarchy["repository_id"])
        membership = self.store.memberships(hierarchy_id)
        owners = np.array([membership.get(int(i), -1) for i in table.leaf_ids], dtype=np.int64)
        if len(table) and (owners < 0).any():
            # The leaves changed under this hierarchy; rebuild it with its own parameters.
            params = with_values(Parameters(), hierarchy["parameters"])
            try:
                rebuilt = self.build(hierarchy["repository_id"], params, name=hierarchy["name"])
            except StoreBusy:
                # Another run is indexing this database now and will rebuild it: answer from the
                # leaves the hierarchy still holds, without caching that partial view.
                keep = owners >= 0
                return self._loaded_from(hierarchy_id, _table_rows(table, keep), owners[keep], cache=False)
            return self._load(int(rebuilt["id"]))
        return self._loaded_from(hierarchy_id, table, owners, cache=True)

    def _loaded_from(self, hierarchy_id: int, table: LeafTable, owners: np.ndarray, cache: bool) -> _Loaded:
        if len(table):
            group_starts = np.concatenate(([0], np.flatnonzero(np.diff(owners)) + 1)).astype(np.int64)
        else:
            group_starts = np.zeros(0, dtype=np.int64)
        group_ends = np.append(group_starts[1:], len(table)).astype(np.int64)
        mid_ids = owners[group_starts].tolist()
        path = self._hnsw_path(hierarchy_id)
        dim = table.vectors.shape[1] if len(table) else 1
        mid_index = MidLevelIndex.load(path, dim, len(group_starts)) if cache else None
        if mid_index is None:
            # Pooled only when the saved index is missing: a cold query skips it.
            group_vectors = (
                mean_pool(table.vectors, group_starts) if len(table) else np.zeros((0, 1), np.float32)
            )
            mid_index = MidLevelIndex.build(group_vectors)
            if cache:
                mid_index.save(path)
        loaded = _Loaded(
            hierarchy_id,
            table,
            group_starts,
            group_ends,
            mid_ids,
            TwoStageRetriever(table.vectors, group_starts, group_ends, mid_index),
        )
        if cache:
            self._cache.loaded[hierarchy_id] = loaded
        return loaded

    def query_encoder(self, repository_id: int | None = None) -> Embedder:
        """The encoder that made the repository's vectors; a backend named in
        the settings that did not is an error, not a silent mismatch."""
        repository_id = self._only_repository(repository_id)
        spec = self.encoder_spec(repository_id)
        recorded = (self.store.repository(repository_id) or {}).get("embedding_model")
        if recorded and recorded != spec.key and self._given_spec is None:
            raise ValueError(
                f"this repository's vectors were made by {EncoderSpec.from_key(recorded).describe()}, not "
                f"{spec.describe()}: query with embedding_backend=auto, or re-index with the new backend"
            )
        return self.embedder_for(spec)

    def embed_query(self, text: str, repository_id: int | None = None) -> np.ndarray:
        return self.query_encoder(repository_id).embed([text])[0]

    def query(
        self,
        text: str,
        repository_id: int | None = None,
        hierarchy_id: int | None = None,
        params: Parameters | None = None,
        flat: bool = False,
        record: bool = True,
        compare: bool = True,
        mode: str | None = None,
    ) -> QueryResponse:
        """Retrieve with ``mode`` (one of :data:`hsc.retrieve.RETRIEVAL_MODES`;
        ``flat=True`` is short for ``mode="flat"``). With ``compare`` (the
        default) the flat ranking is computed too, so both can be shown side
        by side; without it only the one asked for runs, and the other is empty."""
        check_query(text)
        mode = mode or ("flat" if flat else "two-stage")
        if mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}")
        flat = mode in ("flat", "hybrid-flat")
        if hierarchy_id is None:
            hierarchy_id = self.default_hierarchy(repository_id)
        hierarchy = self.hierarchy(hierarchy_id)
        params = params or with_values(Parameters(), hierarchy["parameters"])
        loaded = self._load(hierarchy_id)
        hierarchy_id = loaded.hierarchy_id  # a stale hierarchy is rebuilt under a new id
        started = time.perf_counter()
        vector = self.embed_query(text, int(hierarchy["repository_id"]))
        embedding_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        lexical = self._lexical(loaded, hierarchy, text, params) if mode in LEXICAL_MODES else None
        lexical_ms = (time.perf_counter() - started) * 1000
        staged, staged_ms = Retrieval([], [], 0), 0.0
        if compare or not flat:
            started = time.perf_counter()
            staged = loaded.retriever.search(
                vector,
                params.mid_level_top_k,
                params.leaf_level_top_k,
                math.ceil(params.stage1_leaf_share * len(loaded.table)),
                params.group_score_weight,
                lexical,
                params.lexical_weight,
            )
            staged_ms = (time.perf_counter() - started) * 1000 + lexical_ms
        exact, flat_ms = Retrieval([], [], len(loaded.table)), 0.0
        if compare or flat:
            # The flat ranking of the same family: fused with BM25 in the hybrid modes.
            started = time.perf_counter()
            exact = flat_search(
                loaded.table.vectors, vector, params.leaf_level_top_k, lexical, params.lexical_weight
            )
            flat_ms = (time.perf_counter() - started) * 1000 + lexical_ms
        # A node or leaf replaced by an index run since this hierarchy was loaded is left out.
        nodes = {
            mid_id: self.store.node(mid_id) for mid_id in {loaded.mid_ids[g.ordinal] for g in staged.groups}
        }
        mid_rows = {mid_id: self._mid_view(node) for mid_id, node in nodes.items() if node is not None}
        groups: list[GroupResult] = []
        for hit in staged.groups:
            view = mid_rows.get(loaded.mid_ids[hit.ordinal])
            if view is None:
                continue
            groups.append(
                GroupResult(
                    len(groups) + 1,
                    view.id,
                    hit.score,
                    view.path,
                    view.start_line,
                    view.end_line,
                    view.scope,
                    len(view.children),
                    view.summary,
                )
            )
        two_stage = self._results(loaded, staged, mid_rows)
        flat_results = self._results(loaded, exact, mid_rows)
        response = QueryResponse(
            query=text,
            mode=mode,
            results=flat_results if flat else two_stage,
            groups=groups,
            flat=flat_results,
            leaves_compared=exact.leaves_compared if flat else staged.leaves_compared,
            flat_leaves_compared=exact.leaves_compared,
            elapsed_ms=flat_ms if flat else staged_ms,
            embedding_ms=embedding_ms,
            hierarchy_id=hierarchy_id,
        )
        if record:
            rows = [("mid", g.rank, g.node_id, g.score) for g in groups]
            rows += [("leaf", r.rank, r.leaf_id, r.score) for r in two_stage]
            rows += [("flat", r.rank, r.leaf_id, r.score) for r in flat_results]
            response.query_id = self.store.save_query(
                int(hierarchy["repository_id"]),
                hierarchy_id,
                text,
                response.mode,
                asdict(params),
                response.leaves_compared,
                response.elapsed_ms,
                rows,
            )
        return response

    def _lexical(
        self, loaded: _Loaded, hierarchy: dict[str, Any], text: str, params: Parameters
    ) -> dict[int, float]:
        """Leaf row -> BM25 score of the query's best ``lexical_candidates`` leaves
        (the terms table is brought up to date on the first hybrid query)."""
        repository_id = int(hierarchy["repository_id"])
        if loaded.row_of_leaf is None:
            self.store.sync_leaf_terms(repository_id, term_text)
            loaded.row_of_leaf = {int(leaf_id): row for row, leaf_id in enumerate(loaded.table.leaf_ids)}
        found = self.store.lexical_search(repository_id, match_expression(text), params.lexical_candidates)
        return {loaded.row_of_leaf[i]: score for i, score in found if i in loaded.row_of_leaf}

    def _results(self, loaded: _Loaded, retrieval: Retrieval, mids: dict[int, NodeView]) -> list[QueryResult]:
        leaf_ids = [int(loaded.table.leaf_ids[hit.row]) for hit in retrieval.leaves]
        rows = self.store.leaves_by_id(leaf_ids)
        group_of_row = (
            np.searchsorted(loaded.group_starts, [hit.row for hit in retrieval.leaves], side="right") - 1
        )
        results: list[QueryResult] = []
        for hit, leaf_id, group in zip(retrieval.leaves, leaf_ids, group_of_row):
            row = rows.get(leaf_id)
            if row is None:  # rewritten by an index run since the hierarchy was loaded
                continue
            mid_id = loaded.mid_ids[int(group)]
            if mid_id not in mids:  # a flat hit's group, not among stage 1's
                mids[mid_id] = self._mid_view(self.store.node(mid_id) or {})
            results.append(
                QueryResult(
                    rank=len(results) + 1,
                    score=hit.score,
                    leaf_id=f"leaf:{leaf_id}",
                    path=row["path"],
                    start_line=row["start_line"],
                    end_line=row["end_line"],
                    scope=row["scope"],
                    parent_id=f"mid:{mid_id}",
                    parent_score=None if hit.group < 0 else hit.group_score,
                    text=row["text"],
                    language=row["language"] or "",
                    parent=mids[mid_id],
                )
            )
        return results

    def query_history(self, repository_id: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.store.queries(self._only_repository(repository_id), limit)
        for row in rows:
            row["parameters"] = json.loads(row["parameters"])
        return rows

    # -- reporting --------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        repositories = []
        for repository in self.store.repositories():
            files = self.store.files(int(repository["id"]))
            by_language: dict[str, dict[str, int]] = {}
            for row in files:
                entry = by_language.setdefault(row["language"] or "unknown", {"files": 0, "leaves": 0})
                entry["files"] += 1
                entry["leaves"] += row["leaf_count"]
            by_status: dict[str, int] = {}
            for row in files:
                by_status[row["status"]] = by_status.get(row["status"], 0) + 1
            repositories.append(
                {
                    "id": repository["id"],
                    "root": repository["root"],
                    "name": repository["name"],
                    "embedding_model": repository["embedding_model"],
                    "files": by_status,
                    "leaves": repository["leaf_count"],
                    "languages": by_language,
                    "hierarchies": [
                        {k: h[k] for k in ("id", "name", "group_count", "document_count", "topic_boundaries")}
                        for h in self.store.hierarchies(int(repository["id"]))
                    ],
                }
            )
        size = sum(p.stat().st_size for p in self.store.path.parent.glob(self.store.path.name + "*"))
        return {
            "database": str(self.store.path),
            "database_bytes": size,
            "tokenizer": self.settings.tokenizer,
            "tables": self.store.counts(),
            "repositories": repositories,
        }

    def export(
        self, hierarchy_id: int | None = None, repository_id: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every node of a hierarchy, top to leaf, as rows with explicit links."""
        if hierarchy_id is None:
            hierarchy_id = self.default_hierarchy(repository_id)
        for top in self.documents(hierarchy_id):
            yield self._export_row(top)
        for mid in self.groups(hierarchy_id, with_text=True):
            yield self._export_row(mid)
            for leaf_id in mid.children:
                yield self._export_row(self.node(leaf_id, hierarchy_id))

    @staticmethod
    def _export_row(view: NodeView) -> dict[str, Any]:
        text = view.text if view.level == "leaf" else (view.summary or view.text)
        return {
            "id": view.id,
            "level": view.level,
            "path": view.path,
            "start_line": view.start_line,
            "end_line": view.end_line,
            "parent_id": view.parent_id,
            "children": view.children,
            "scope": view.scope,
            "node_type": view.node_type,
            "token_count": view.token_count,
            "language": view.language,
            "text": text,
            "summariser": view.summariser,
        }
