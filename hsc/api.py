"""The public face of the library: one :class:`Index` over one SQLite file.

The command line and the app call only this. It keeps the expensive things
(the embedding model, leaf tables, HNSW indexes) loaded once per process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hsc.embed import Embedder, EncoderSpec, encoder_cache_dir, make_embedder, resolve_spec, spec_of
from hsc.hierarchy.groups import HierarchyPlan, LeafTable, plan_hierarchy
from hsc.index.browsing import DEFAULT_HIERARCHY, Browsing
from hsc.params import CHUNK_FIELDS, Parameters, Settings, with_values
from hsc.search.context import ContextPack, ContextSpan
from hsc.search.contexts import ContextQueries
from hsc.search.results import (
    EMPTY_QUERY,
    GroupResult,
    NodeView,
    QueryResponse,
    QueryResult,
    check_query,
    parse_node_id,
)
from hsc.search.searching import Searching, _Cache
from hsc.store import Store
from hsc.store.evaluations import SAVED_SUITES
from hsc.store.sidecar import SideFiles

# Parsing, the pipeline, summarisers and the tokenizer are imported where they
# are used: a query needs none of them, and a cold query is timed (README).
if TYPE_CHECKING:
    from hsc.chunk.tokens import TokenCounter
    from hsc.hierarchy.summarize import Summarizer
    from hsc.index.estimate import FolderSurvey
    from hsc.index.pipeline import IndexReport, ProgressCallback

# The value types live in hsc.search.results; they are part of this module's public face too.
__all__ = [
    "CHUNK_FIELDS",
    "DEFAULT_HIERARCHY",
    "ContextPack",
    "ContextSpan",
    "EMPTY_QUERY",
    "GroupResult",
    "Index",
    "NodeView",
    "QueryResponse",
    "QueryResult",
    "check_query",
    "default_database",
    "parse_node_id",
]


def default_database(repository: str | Path | None = None) -> Path:
    """``.hsc/index.db`` inside the repository, or the current directory."""
    return Path(repository or ".") / ".hsc" / "index.db"


class Index(Browsing, Searching, ContextQueries):
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
        store.vector_storage = self.settings.vector_storage
        # One encoder per spec, loaded once per process; a given embedder is
        # used for every repository (its caller chose it).
        self._embedders: dict[str, Embedder] = {}
        self._made: set[str] = set()  # keys of the encoders this index loaded (it ends them)
        self._given_spec = spec_of(embedder) if embedder is not None else None
        if embedder is not None:
            self._embedders[spec_of(embedder).key] = embedder
        self._summarizer = summarizer
        self._cache = _Cache()
        self._side = SideFiles(self.store.path.parent / "hnsw", self.store.path.stem)

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
        # Drop the loaded tables too: their vectors may be mapped from side files, and a mapping
        # keeps its file system busy (it could not be unmounted) until it is let go.
        self._cache = _Cache()
        # The encoders this index loaded end with it (a pool's worker processes would otherwise
        # live as long as this process: a server opening one index after another); one handed
        # over (``embedder=``, use_embedder) is its giver's.
        for key in sorted(self._made):
            stop = getattr(self._embedders.pop(key, None), "close", None)
            if stop is not None:
                stop()
        self._made.clear()
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the expensive parts, made once -------------------------------------------

    @property
    def counter(self) -> TokenCounter:
        from hsc.chunk.tokens import get_counter

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
            from hsc.embed.pool import resolve_processes

            self._embedders[spec.key] = make_embedder(
                spec,
                encoder_cache_dir(self.store.path.parent),
                self.settings.device,
                resolve_processes(self.settings.encode_processes),
            )
            self._made.add(spec.key)
        return self._embedders[spec.key]

    def use_embedder(self, embedder: Embedder) -> None:
        """Use an encoder already loaded for its own spec (it is not loaded again, nor ended by
        :meth:`close`: it is the caller's)."""
        key = spec_of(embedder).key
        if self._embedders.get(key) is not embedder:
            self._made.discard(key)  # the one it replaces stays loaded: it may still be in use
        self._embedders[key] = embedder

    @property
    def embedder(self) -> Embedder:
        """The encoder of the only repository, or the one the settings name."""
        return self.embedder_for(self.encoder_spec())

    @property
    def summarizer(self) -> Summarizer:
        if self._summarizer is None:
            from hsc.hierarchy.summarize import make_summarizer

            self._summarizer = make_summarizer(self.settings, self.counter)
        return self._summarizer

    def use_summarizer(self, summarizer: Summarizer) -> None:
        self._summarizer = summarizer

    def summariser_description(self) -> str:
        from hsc.hierarchy.summarize import describe_summarizer

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

    def find_repository(self, name_or_path: str | Path) -> int:
        """The id of the repository with this root folder, or else this name (as ``stats``
        shows it); a ValueError listing the repositories when none (or several) match."""
        found = self.repository_id(name_or_path)
        if found is not None:
            return found
        named = [r for r in self.store.repositories() if r["name"] == str(name_or_path)]
        if len(named) == 1:
            return int(named[0]["id"])
        what = "several repositories are named" if named else "no repository is named or rooted at"
        raise ValueError(f"{what} {str(name_or_path)!r} here; {self.repository_listing()}")

    def repository_listing(self) -> str:
        """ "indexed: NAME (ROOT), ..." for messages that ask a person to choose."""
        shown = [f"{r['name']} ({r['root']})" for r in self.store.repositories()]
        return f"indexed: {', '.join(shown)}" if shown else "nothing is indexed yet"

    def _only_repository(self, repository_id: int | None) -> int:
        if repository_id is not None:
            return repository_id
        repositories = self.store.repositories()
        if len(repositories) != 1:
            raise ValueError(
                "this database holds no repository yet; index one first"
                if not repositories
                else "this database holds several repositories; say which (by name or root folder; "
                f"--repo on the command line): {self.repository_listing()}"
            )
        return int(repositories[0]["id"])

    def index(
        self,
        path: str | Path,
        params: Parameters | None = None,
        progress: ProgressCallback | None = None,
        excludes: list[str] | None = None,
    ) -> IndexReport:
        """Index (or bring up to date) a repository, then rebuild its named
        hierarchies if anything changed (a ``default`` one is made the first time).

        ``excludes``: gitignore-style patterns of paths to leave out, besides the
        repository's ``.hscignore``; kept with the repository, so later runs (None) use
        them again; a list given replaces them (``[]`` clears them)."""
        root = Path(path)
        if not root.exists():
            raise FileNotFoundError(f"no such folder: {root}")
        if not root.is_dir():
            raise NotADirectoryError(f"not a folder: {root} (give the repository's top folder)")
        from hsc.index.pipeline import index_repository

        params = params or Parameters()
        spec = self.encoder_spec(self.repository_id(root))
        executor = self._executor(params, spec)
        with self.store.writer("indexing"):
            try:
                report = index_repository(
                    self.store,
                    root,
                    params,
                    self.settings,
                    self.counter,
                    (lambda: executor.embedder) if executor is not None else lambda: self.embedder_for(spec),
                    progress,
                    vector_key=spec.key,
                    excludes=excludes,
                    executor=executor,
                )
            finally:
                if executor is not None:
                    executor.close()  # Ctrl-C included: the cluster's work for this run stops
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

    def _executor(self, params: Parameters, spec: EncoderSpec) -> Any:
        """The Ray executor when the settings ask for it (hsc.index.ray_executor), else None."""
        if self.settings.executor != "ray":
            return None
        from hsc.index.ray_executor import RayExecutor

        return RayExecutor(params, self.settings, spec, encoder_cache_dir(self.store.path.parent))

    def excludes(self, path: str | Path) -> list[str]:
        """The exclusion patterns a repository keeps for its runs (``index(excludes=...)``)."""
        from hsc.index.pipeline import stored_excludes

        repository_id = self.repository_id(path)
        return [] if repository_id is None else stored_excludes(self.store, repository_id)

    def survey(self, path: str | Path, excludes: list[str] | None = None) -> FolderSurvey:
        """Before indexing ``path``: the files it will parse (those kept out by ``.hscignore``
        and ``excludes``, else the patterns kept for it, left out) and about how long that
        takes at this machine's measured rate (:mod:`hsc.index.estimate`)."""
        from hsc.index.estimate import survey_folder

        patterns = self.excludes(path) if excludes is None else excludes
        return survey_folder(Path(path), self.settings, self.store, patterns)

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
        from hsc.index.pipeline import update_hierarchy

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
        """The repository's leaves and vectors in document order, kept until any
        of its files is written again. Read from the side file made for exactly
        this state of the database (vectors memory-mapped), else from SQLite,
        which then writes that file for the next process (hsc.store.sidecar)."""
        return self._stamped_table(repository_id)[1]

    def leaf_stamp(self, repository_id: int | None = None) -> str:
        """A few bytes naming the state of a repository's leaves: it changes
        whenever any of its files is indexed again (a key for caches of them)."""
        repository_id = self._only_repository(repository_id)
        return self.store.leaf_stamp(repository_id, self._vectors_model(repository_id))

    def _vectors_model(self, repository_id: int) -> str:
        """The model whose vectors the repository's leaves are read with."""
        repository = self.store.repository(repository_id) or {}
        return repository.get("embedding_model") or self.settings.embedding_model

    def _stamped_table(self, repository_id: int | None) -> tuple[str, LeafTable]:
        """The leaf table and the stamp of the database state it was read at."""
        repository_id = self._only_repository(repository_id)
        stamp = self.leaf_stamp(repository_id)
        if stamp not in self._cache.tables:
            table = self._side.load_table(repository_id, stamp) if self.side_files else None
            if table is None:
                model = self._vectors_model(repository_id)
                stamp, table = self.store.leaf_table_snapshot(repository_id, model)
                writable = self.side_files and not self.store.read_only  # read-only: nothing written beside
                if writable and self._side.save_table(repository_id, stamp, table):
                    # The saved copy, memory-mapped: its pages are the system's to keep or drop.
                    table = self._side.load_table(repository_id, stamp) or table
            mine = f"{repository_id}:"
            self._cache.tables = {k: v for k, v in self._cache.tables.items() if not k.startswith(mine)}
            self._cache.tables[stamp] = table
        return stamp, self._cache.tables[stamp]

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
        model = self._vectors_model(repository_id)
        old = self.store.hierarchy_by_name(repository_id, name)
        from hsc.index.pipeline import build_hierarchy

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
        from hsc.hierarchy.summarize import fallback_note

        return {**self.hierarchy(hierarchy_id), "summariser_note": fallback_note(self.summarizer)}

    def _forget(self, hierarchy_id: int) -> None:
        self._cache.loaded.pop(hierarchy_id, None)
        self._side.forget_hierarchy(hierarchy_id)

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

    # -- saved quality runs (hsc.quality) ---------------------------------------------------

    def save_quality_run(self, result: dict[str, Any]) -> int:
        """Keep a :func:`hsc.quality.sweep.run_quality` or ``bench context`` result in this
        database, under its ``suite`` ("quality" or "context"); its id."""
        suite = result.get("suite", "quality")
        if suite not in SAVED_SUITES:
            raise ValueError(f"not a quality or context run (suite {suite!r}); only those are saved")
        return self.store.save_quality_run(result["corpus"]["source"], result["parameters"], result, suite)

    def quality_runs(self, limit: int = 100, suite: str | None = None) -> list[dict[str, Any]]:
        """Saved runs, latest first, without their results: of one suite ("quality", "context"),
        or all of them (each row names its ``suite``)."""
        return self.store.quality_runs(limit, suite)

    def quality_run(self, run_id: int) -> dict[str, Any] | None:
        """One saved run with its ``result`` and ``suite``, or None."""
        return self.store.quality_run(run_id)

    def delete_quality_run(self, run_id: int) -> bool:
        return self.store.delete_quality_run(run_id)

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
