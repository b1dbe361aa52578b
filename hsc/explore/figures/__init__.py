"""Plotly figures shared by the app's teaching and tuning views and the HTML
report. Pure functions of library data (no Streamlit): the
similarity curve and overview in :mod:`hsc.explore.figures.similarity`, leaves and
groups in :mod:`hsc.explore.figures.hierarchy`, what they share in
:mod:`hsc.explore.figures.style`.

Sized for real repositories: each figure is a handful of traces whatever the
number of groups (group bands are one filled path, not one shape each), large
point sets go through WebGL, and callers pass a window, not a repository.
Every string that came from a repository is escaped (:func:`plot_text`).
"""

from hsc.explore.figures.hierarchy import group_strips, leaf_map_figure, leaf_size_figure
from hsc.explore.figures.similarity import (
    SimilarityView,
    file_similarity_curve,
    overview_curve,
    plan_similarity_curve,
    similarity_curve,
)
from hsc.explore.figures.style import (
    BAND_COLOURS,
    FLAG_COLOURS,
    LIMIT_COLOUR,
    MAX_FILE_LABELS,
    MAX_STRIP_LEAVES,
    PALETTE,
    RAW_COLOUR,
    SMOOTHED_COLOUR,
    STRIP_COLOURS,
    WEBGL_POINTS,
    chart_config,
    plot_text,
)

__all__ = [
    "BAND_COLOURS",
    "FLAG_COLOURS",
    "LIMIT_COLOUR",
    "MAX_FILE_LABELS",
    "MAX_STRIP_LEAVES",
    "PALETTE",
    "RAW_COLOUR",
    "SMOOTHED_COLOUR",
    "STRIP_COLOURS",
    "WEBGL_POINTS",
    "SimilarityView",
    "chart_config",
    "file_similarity_curve",
    "group_strips",
    "leaf_map_figure",
    "leaf_size_figure",
    "overview_curve",
    "plan_similarity_curve",
    "plot_text",
    "similarity_curve",
]
