"""The sidebar every page shares: what is active, and the parameters."""

from __future__ import annotations

import streamlit as st

from hsc import Index
from hsc.app.ui.context import active_repository, database_path, summariser_text
from hsc.app.ui.params import parameter_editor
from hsc.app.ui.text import glossary_markdown, md


def render_sidebar(index: Index, page: str, own_parameters: tuple[str, ...] = ()) -> None:
    with st.sidebar:
        repository = active_repository(index)
        st.subheader("Active")
        if repository is None:
            st.caption("**Repository** none yet")
        else:
            # Files indexed, as the pages count them; the others were skipped (binary, too large, failed).
            indexed, seen = (
                repository.get("indexed_file_count", repository["file_count"]),
                repository["file_count"],
            )
            skipped = f", {seen - indexed} skipped" if seen > indexed else ""
            st.caption(
                f"**Repository** {md(repository['name'])} "
                f"({repository['leaf_count']} leaves in {indexed} files indexed{skipped})"
            )
        model = (repository or {}).get("embedding_model") or index.settings.embedding_model
        st.caption(f"**Embedding model** {md(model)}")
        st.caption(f"**Tokenizer** {md(index.settings.tokenizer)}")
        st.caption(f"**Summariser** {md(summariser_text(index))}")
        st.caption(f"**Database** {md(database_path())}")
        parameter_editor(page, own_parameters)
        with st.expander("Glossary", key="sidebar:glossary"):
            st.markdown(glossary_markdown())
