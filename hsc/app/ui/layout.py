"""What every page does first: page settings, the shared index, a first-start
index run, and the sidebar with the navigation."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from hsc import Index
from hsc.app.ui.context import active_repository, get_index
from hsc.app.ui.params import current_parameters, take_moved_widgets
from hsc.app.ui.progress import index_default_repository_once
from hsc.app.ui.sidebar import render_sidebar
from hsc.app.ui.state import publish_view, restore_view, view_problems

# A file of our own: a ":material/...:" icon would be fetched from the internet as the favicon.
FAVICON = str(Path(__file__).resolve().parent / "favicon.png")

# Streamlit's own page list would call the main script "app"; these links name
# every page after its stage. Paths are relative to app.py.
PAGES = (
    ("app.py", "Repository", ":material/folder_open:"),
    ("pages/2_Leaves.py", "Leaves", ":material/eco:"),
    ("pages/3_Similarity.py", "Similarity", ":material/show_chart:"),
    ("pages/4_Hierarchy.py", "Hierarchy", ":material/account_tree:"),
    ("pages/5_Query.py", "Query", ":material/search:"),
    ("pages/6_Evaluate.py", "Evaluate", ":material/analytics:"),
    ("pages/7_Walkthrough.py", "Walkthrough", ":material/school:"),
)


def page_setup(page: str, own_parameters: tuple[str, ...] = ()) -> Index:
    """Call first on every page (``page`` is its title); returns the app's index.

    ``own_parameters`` are edited by widgets on the page itself, so the
    sidebar shows their values instead of a second widget.

    Each page is a script Streamlit runs on its own (a link to any page works,
    even on a server that has just started), so each sets itself up here.
    """
    st.set_page_config(page_title="hsc · hierarchical semantic chunking", page_icon=FAVICON, layout="wide")
    take_moved_widgets()
    with st.sidebar:
        for path, label, icon in PAGES:
            st.page_link(path, label=label, icon=icon)
        st.divider()
    index = get_index()
    index_default_repository_once(index, current_parameters())
    restore_view(index)  # once per session: the URL's view, else the last one kept in the database
    render_sidebar(index, page, own_parameters)
    publish_view(index, active_repository(index))
    for problem in view_problems():
        st.warning(problem)
    return index
