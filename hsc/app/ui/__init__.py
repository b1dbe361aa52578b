"""Shared pieces of the Streamlit app (kept out of ``pages/``, where every
module would become a page)."""

from hsc.app.ui.context import (
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
from hsc.app.ui.jobs import last_job, live_jobs, recent_jobs, start_job, watch_job
from hsc.app.ui.layout import page_setup
from hsc.app.ui.params import (
    current_parameters,
    differing_from_defaults,
    editor_label_is_stale,
    parameter_input,
    parameters_from,
    set_parameters,
    take_moved_widgets,
)
from hsc.app.ui.progress import index_default_repository_once, remember_report, run_build
from hsc.app.ui.sidebar import render_sidebar
from hsc.app.ui.state import publish_view, set_picker
from hsc.app.ui.text import (
    WHY_NO_SMOOTHING,
    blank_missing,
    cell,
    code_language,
    line_range,
    md,
    plot_text,
    shorten,
    signed,
)
from hsc.index.jobs import Job
from hsc.model import common_prefix, common_scope

__all__ = [
    "Job",
    "WHY_NO_SMOOTHING",
    "active_repository",
    "blank_missing",
    "cell",
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
    "last_job",
    "live_jobs",
    "recent_jobs",
    "remember_report",
    "leaf_frame",
    "leaf_rows",
    "line_range",
    "md",
    "parameter_input",
    "page_setup",
    "parameters_from",
    "plot_text",
    "publish_view",
    "set_picker",
    "repository_path_problem",
    "require_repository",
    "run_build",
    "start_job",
    "watch_job",
    "sample_repositories",
    "saved_hierarchies",
    "set_active_repository",
    "set_parameters",
    "common_prefix",
    "common_scope",
    "shorten",
    "signed",
    "take_moved_widgets",
    "render_sidebar",
    "summariser_text",
]
