"""What a page shows, kept where a reload finds it: the URL and the app's database.

The view is the active repository (by the name ``hsc stats`` shows, or its root
folder when two repositories share a name), the parameter set the pages trace
and the parameters changed from their defaults::

    ?repo=flask&set=tuned&similarity_drop_threshold=0.45

A session's first run takes its view from the URL; a URL that names nothing
(a bare address, a new tab) takes the last view any tab showed, kept in the
database's ``meta`` table. After that, every run writes the session's view
back to both, so a reload, a second tab or a link sent to a colleague opens
the same view. A name that is not indexed (or a bad value) is said once, and
the rest of the view still applies.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from hsc import Index
from hsc.app.ui.context import ACTIVE_REPOSITORY, index_lock, repositories_by_id
from hsc.app.ui.params import FIELDS, differing_from_defaults, parameter_values, set_parameters

REPO = "repo"
SET = "set"
ACTIVE_SET = "active_parameter_set"  # the saved set's name the pages trace (None: "default")
VIEW_META = "app:view"  # the last view, as JSON, in the database's meta table
RESTORED = "view:restored"  # the session took its first view (from the URL or the database)
PROBLEMS = "view:problems"  # what the first view named that is not there, said on the page
WRITTEN = "view:written"  # the view last written to the database by this session


def repository_handle(repository: dict[str, Any], repositories: list[dict[str, Any]]) -> str:
    """The name a URL gives ``repository`` by: its name, or its root where the name is shared."""
    shared = sum(1 for r in repositories if r["name"] == repository["name"]) > 1
    return str(repository["root"] if shared else repository["name"])


def view_from(values: dict[str, str]) -> dict[str, str]:
    """The keys of a URL's query that make a view (others, e.g. a page's own, are left)."""
    return {k: v for k, v in values.items() if k in (REPO, SET) or k in FIELDS}


def _saved_view(index: Index) -> dict[str, str]:
    with index_lock():
        text = index.store.meta(VIEW_META)
    try:
        saved = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in saved.items()} if isinstance(saved, dict) else {}


def restore_view(index: Index) -> None:
    """Once per session: take the view from the URL, else from the database."""
    if st.session_state.get(RESTORED):
        return
    st.session_state[RESTORED] = True
    given = view_from({k: st.query_params[k] for k in st.query_params})
    from_url = bool(given)
    if not from_url:
        given = _saved_view(index)
        if ACTIVE_REPOSITORY in st.session_state:  # chosen before this first run: the session's own
            given.pop(REPO, None)
    problems: list[str] = []
    name = given.get(REPO, "").strip()
    if name:
        try:
            with index_lock():
                st.session_state[ACTIVE_REPOSITORY] = index.find_repository(name)
        except ValueError as error:
            if from_url:  # a view kept in the database names a repository removed since: no news
                problems.append(
                    f"The link names the repository {name!r}, which is not indexed in this database "
                    f"({error}). Index it on the Repository page; shown meanwhile: the active one."
                )
    if given.get(SET, "").strip():
        st.session_state[ACTIVE_SET] = given[SET].strip()
    changed = {k: v for k, v in given.items() if k in FIELDS}
    if changed:
        try:
            set_parameters(changed)
        except ValueError as error:
            problems.append(f"The link's parameters were not applied: {error}")
    st.session_state[PROBLEMS] = problems


def view_problems() -> list[str]:
    """What the session's first view named that is not there (said on its first page)."""
    return st.session_state.pop(PROBLEMS, [])


def current_view(index: Index, repository: dict[str, Any] | None) -> dict[str, str]:
    """The session's view as a URL's query: repo, set (when not the default) and the changed parameters."""
    view: dict[str, str] = {}
    if repository is not None:
        view[REPO] = repository_handle(repository, list(repositories_by_id(index).values()))
    chosen = st.session_state.get(ACTIVE_SET)
    if chosen and chosen != "default":
        view[SET] = str(chosen)
    for name, value in differing_from_defaults(parameter_values()).items():
        view[name] = str(value)
    return view


def publish_view(index: Index, repository: dict[str, Any] | None) -> None:
    """Write the session's view into the URL and, when it changed, into the database."""
    view = current_view(index, repository)
    shown = view_from({k: st.query_params[k] for k in st.query_params})
    if shown != view:
        for key in set(shown) - set(view):
            del st.query_params[key]
        st.query_params.update(view)
    text = json.dumps(view, sort_keys=True)
    if st.session_state.get(WRITTEN) != text:
        with index_lock():
            index.store.set_meta(VIEW_META, text)
        st.session_state[WRITTEN] = text


def set_picker(where: Any, names: list[str], key: str, **kwargs: Any) -> str:
    """A "Parameter set" selectbox (``where``: a column or ``st``) that starts on the session's
    set and makes the one chosen the session's (and so the URL's); a set the view named that
    this repository has not saved falls back to "default"."""
    wanted = st.session_state.get(ACTIVE_SET) or "default"
    start = names.index(wanted) if wanted in names else (names.index("default") if "default" in names else 0)
    chosen = str(where.selectbox("Parameter set", names, index=start, key=key, **kwargs))
    if chosen != wanted:
        st.session_state[ACTIVE_SET] = chosen
        # The URL now (the page is past publish_view); the database with the next run's.
        if chosen == "default":
            st.query_params.pop(SET, None)
        else:
            st.query_params[SET] = chosen
    return chosen
