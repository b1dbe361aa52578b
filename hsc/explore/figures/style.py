"""What every figure shares: colours, limits, the escaping of repository
text, plotly's config, and building a figure without validation."""

from __future__ import annotations

import html
import re
from typing import Any

import plotly.graph_objects as go

RAW_COLOUR = "#9aa5b1"
SMOOTHED_COLOUR = "#1f77b4"
LIMIT_COLOUR = "#d62728"
BAND_COLOURS = ("rgba(31, 119, 180, 0.13)", "rgba(255, 127, 14, 0.16)")
STRIP_COLOURS = ("#6baed6", "#fdae6b")
FLAG_COLOURS = {
    "": SMOOTHED_COLOUR,
    "under minimum": "#ff7f0e",
    "at maximum": "#d62728",
    "over maximum": "#7b1fa2",
}
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
)  # fmt: skip
# Past this many points a trace is drawn with WebGL.
WEBGL_POINTS = 1500
# Past this many files in view, their names along the top of a chart would overlap.
MAX_FILE_LABELS = 30
# Past this many leaves a strip window is refused: a screen shows no more.
MAX_STRIP_LEAVES = 3000


def plot_text(text: object) -> str:
    """``text`` for plotly labels and hovers: its tags shown, not interpreted."""
    return html.escape(str(text), quote=False)


def chart_config(name: str) -> dict[str, Any]:
    """Plotly's ``config`` for a chart: the modebar's camera saves a PNG (drawn
    in the browser, so it works offline) under a file name that says what it is."""
    filename = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "chart"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2},
    }


def _compact(figure: go.Figure, height: int, top: int = 40) -> go.Figure:
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": top, "b": 10})
    return figure


def _fast_figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A figure from plain dicts, not validated property by property: plotly's
    validation cost ~120 ms per similarity chart, most of a slider step."""
    return go.Figure({"data": data, "layout": layout}, _validate=False)
