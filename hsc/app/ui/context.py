"""The app's one index, which repository is active, and where things live."""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pandas as pd
import streamlit as st

from hsc import Index, Settings
from hsc.api import NodeView
from hsc.app import DEFAULT_SAMPLE, SAMPLES_DIR
from hsc.app.ui.text import line_range
from hsc.chunk.roles import file_role
from hsc.embed.base import encoder_cache_dir
from hsc.embed.onnx_export import needs_export
from hsc.explore.views import FolderSurvey

ACTIVE_REPOSITORY = "active_repository_id"


def database_path() -> Path:
    """``HSC_APP_DB``, or ``.hsc/app.db`` under the current directory."""
    configured = os.environ.get("HSC_APP_DB", "").strip()
    path = Path(configured).expanduser() if configured else Path.cwd() / ".hsc" / "app.db"
    return path.resolve()


def default_repository_path() -> Path:
    """``HSC_APP_REPO``, or the bundled Python sample."""
    configured = os.environ.get("HSC_APP_REPO", "").strip()
    return Path(configured).expanduser().resolve() if configured else DEFAULT_SAMPLE


def sample_repositories() -> list[Path]:
    if not SAMPLES_DIR.is_dir():
        return []
    return sorted(p for p in SAMPLES_DIR.iterdir() if p.is_dir() and not p.name.startswith("."))


def repository_path_problem(text: str) -> str | None:
    """Why ``text`` cannot be indexed as a repository, or None when it can."""
    if not text.strip():
        return "Type the path of a folder on this machine."
    path = Path(text.strip()).expanduser()
    if not path.exists():
        return f"There is no file or folder at {path}."
    if not path.is_dir():
        return f"{path} is a file; give the repository's top folder instead."
    try:
        empty = next(path.iterdir(), None) is None
    except PermissionError:
        return f"{path} cannot be read (permission denied)."
    if empty:
        return f"{path} is an empty folder: there is nothing to index."
    return None


class SharedIndex:
    """One :class:`hsc.Index` for every browser session, one call at a time.

    Streamlit runs each session's script in its own thread, while the index
    holds a single SQLite connection and unsynchronised caches; serialising
    the calls keeps two open tabs from interleaving a transaction.
    """

    def __init__(self, index: Index) -> None:
        self._index = index
        self.lock = threading.RLock()
        self.encoder_ready = False  # the embedding model loaded (once per process)

    def __getattr__(self, name: str) -> Any:
        with self.lock:
            value = getattr(self._index, name)
        if not callable(value):
            return value

        @functools.wraps(value)
        def serialised(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return value(*args, **kwargs)

        return cast(Callable[..., Any], serialised)


@st.cache_resource(show_spinner="Opening the index…")
def _open_index(database: str) -> SharedIndex:
    return SharedIndex(Index.open(database, settings=Settings()))


def encoder_message(index: Index, database: Path) -> str:
    """What the first start waits for: loading the model, or (once per machine) making its ONNX export."""
    spec = index.encoder_spec()
    if needs_export(spec, encoder_cache_dir(database.parent)):
        return (
            f"Preparing the encoder, once: exporting the bundled model {spec.model} to ONNX ({spec.backend}) "
            "and checking it against the original, about 20–30 s on 2 cores. The export is kept beside the "
            "database, so later starts load it in about a second."
        )
    return f"Loading the embedding model ({spec.describe()})…"


def shared_index() -> SharedIndex:
    database = database_path()
    index = _open_index(str(database))
    if not index.encoder_ready:
        # Load the model now, once per process, rather than inside someone's first query.
        with index.lock:
            if not index.encoder_ready:
                with st.spinner(encoder_message(cast(Index, index), database)):
                    _ = index.embedder
                index.encoder_ready = True
    return index


def get_index() -> Index:
    """The app's index (typed as :class:`hsc.Index`; every call is serialised)."""
    return cast(Index, shared_index())


def index_lock() -> threading.RLock:
    """Hold this around a check-then-act sequence of index calls."""
    return shared_index().lock


def repositories_by_id(index: Index) -> dict[int, dict[str, Any]]:
    return {int(row["id"]): row for row in index.repositories()}


def active_repository(index: Index) -> dict[str, Any] | None:
    """The repository this session works on: the one chosen last, else the
    default repository when it is indexed, else the first one."""
    known = repositories_by_id(index)
    chosen = st.session_state.get(ACTIVE_REPOSITORY)
    if chosen not in known:
        default_id = index.repository_id(default_repository_path())
        chosen = default_id if default_id in known else next(iter(known), None)
        st.session_state[ACTIVE_REPOSITORY] = chosen
    return known.get(chosen) if chosen is not None else None


def set_active_repository(repository_id: int) -> None:
    st.session_state[ACTIVE_REPOSITORY] = int(repository_id)


def require_repository(index: Index) -> dict[str, Any]:
    """The active repository, or a pointer to the Repository page and a stop."""
    repository = active_repository(index)
    if repository is None:
        st.info("No repository is indexed yet. Choose one on the Repository page first.")
        st.page_link("app.py", label="Go to Repository", icon=":material/folder_open:")
        st.stop()
    return cast(dict[str, Any], repository)


def summariser_text(index: Index) -> str:
    """Which summariser writes the summaries, and, when they are not what the
    settings asked for (Ollama failed, or "auto" found no server), why."""
    from hsc.hierarchy.summarize import fallback_note

    note = fallback_note(index.summarizer)
    return index.summariser_description() + (f" ({note})" if note else "")


def saved_hierarchies(index: Index, repository_id: int) -> list[dict[str, Any]]:
    """The repository's saved parameter sets, building the default one if there is none yet."""
    hierarchies = index.hierarchies(repository_id)
    if not hierarchies:
        with index_lock():
            index.default_hierarchy(repository_id)
        hierarchies = index.hierarchies(repository_id)
    return hierarchies


_CHUNK_LIMITS = re.compile(r"(?:^|;)min=(\d+);max=(\d+)(?:;|$)")


def chunk_limits(repository: dict[str, Any]) -> tuple[int, int] | None:
    """The minimum and maximum leaf lengths a repository was cut with.

    Recorded in the repository's ``parameters``; databases written before
    that have them only inside ``chunk_key`` ("min=24;max=256;tok=...").
    None when neither says.
    """
    recorded = json.loads(repository.get("parameters") or "{}")
    if "minimum_chunk_token_length" in recorded:
        return int(recorded["minimum_chunk_token_length"]), int(recorded["maximum_chunk_token_length"])
    found = _CHUNK_LIMITS.search(str(repository.get("chunk_key") or ""))
    return (int(found.group(1)), int(found.group(2))) if found else None


# -- what does not change between reruns, kept once per process --------------------------------------
# Keyed by the database and the time the repository was indexed or the parameter set built, so a
# re-index or a rebuild is read afresh. Shared between sessions and never modified by a page.


@st.cache_resource(max_entries=4, show_spinner=False)
def _leaf_rows(_index: Index, database: str, repository_id: int, indexed_at: float) -> list[dict[str, Any]]:
    return _index.leaves(repository_id, with_text=False)


def leaf_rows(index: Index, repository: dict[str, Any]) -> list[dict[str, Any]]:
    """The repository's leaves without their text (read-only; cached until it is re-indexed)."""
    key = (str(database_path()), int(repository["id"]), float(repository.get("indexed_at") or 0.0))
    return _leaf_rows(index, *key)


@st.cache_resource(max_entries=4, show_spinner=False)
def _leaf_frame(_index: Index, database: str, repository_id: int, indexed_at: float) -> pd.DataFrame:
    frame = pd.DataFrame(_leaf_rows(_index, database, repository_id, indexed_at))
    frame["lines"] = [line_range(s, e) for s, e in zip(frame["start_line"], frame["end_line"], strict=True)]
    if len(frame):  # what each file is for (hsc.chunk.roles), as stored with its leaves
        roles = _index.store.file_roles(repository_id)
        frame["role"] = [roles.get(path) or file_role(path) for path in frame["path"]]
    return frame


def leaf_frame(index: Index, repository: dict[str, Any]) -> pd.DataFrame:
    """:func:`leaf_rows` as a table with "lines" and "role" columns (read-only; cached until
    re-indexed)."""
    key = (str(database_path()), int(repository["id"]), float(repository.get("indexed_at") or 0.0))
    return _leaf_frame(index, *key)


@st.cache_resource(max_entries=8, show_spinner=False)
def _tiers(
    _index: Index, database: str, hierarchy_id: int, created_at: float
) -> tuple[list[NodeView], list[NodeView]]:
    return _index.documents(hierarchy_id), _index.groups(hierarchy_id)


def hierarchy_tiers(index: Index, hierarchy: dict[str, Any]) -> tuple[list[NodeView], list[NodeView]]:
    """A saved parameter set's documents and groups (read-only; cached until it is rebuilt)."""
    return _tiers(index, str(database_path()), int(hierarchy["id"]), float(hierarchy["created_at"]))


@st.cache_data(ttl=60, max_entries=16, show_spinner="Counting the files…")
def folder_survey(path: Path, excludes: tuple[str, ...] | None = None) -> FolderSurvey:
    """How many files indexing ``path`` would parse, and an estimate (kept a minute);
    ``excludes``: patterns typed on the page (None: the ones kept for the repository)."""
    return shared_index().survey(path, None if excludes is None else list(excludes))


def opening_roles(present: list[str]) -> list[str] | None:
    """The roles a page opens on: code, when the repository has code beside other roles (as the
    agents' tools search, hsc.params tool_roles); else every role (None)."""
    return ["code"] if "code" in present and len(present) > 1 else None
