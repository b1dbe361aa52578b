"""Shared pieces of the Streamlit app (kept out of ``pages/``, where every
module would become a page)."""

from hsc.model import common_prefix, common_scope
from ui.context import (
    active_repository,
    chunk_limits,
    database_path,
    default_repository_path,
    folder_survey,
    get_index,
    hierarchy_tiers,
    index_lock,
    leaf_frame,
    leaf_rows,
    repository_path_problem,
    require_repository,
    sample_repositories,
    saved_hierarchies,
    set_active_repository,
    summariser_text,
)
from ui.layout import page_setup
from ui.params import (
    current_parameters,
    differing_from_defaults,
    editor_label_is_stale,
    parameter_input,
    parameters_from,
    set_parameters,
    take_moved_widgets,
)
from ui.progress import index_default_repository_once, interrupted_indexing, run_build, run_indexing
from ui.sidebar import render_sidebar
from ui.text import WHY_NO_SMOOTHING, code_language, line_range, md, plot_text, shorten

__all__ = [
    "WHY_NO_SMOOTHING",
    "active_repository",
    "chunk_limits",
    "code_language",
    "current_parameters",
    "database_path",
    "differing_from_defaults",
    "editor_label_is_stale",
    "default_repository_path",
    "folder_survey",
    "get_index",
    "hierarchy_tiers",
    "index_default_repository_once",
    "index_lock",
    "interrupted_indexing",
    "leaf_frame",
    "leaf_rows",
    "line_range",
    "md",
    "parameter_input",
    "page_setup",
    "parameters_from",
    "plot_text",
    "repository_path_problem",
    "require_repository",
    "run_build",
    "run_indexing",
    "sample_repositories",
    "saved_hierarchies",
    "set_active_repository",
    "set_parameters",
    "common_prefix",
    "common_scope",
    "shorten",
    "take_moved_widgets",
    "render_sidebar",
    "summariser_text",
]
