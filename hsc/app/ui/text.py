"""Making repository text safe to show.

File paths, scopes and summaries come from whatever repository was indexed.
Streamlit renders labels, captions and progress texts as Markdown, and plotly
renders a small set of HTML tags (``<b>``, ``<br>``, ``<a href>``) in chart
text; a file called ``__init__.py`` would turn bold and a scope holding
``<a href=...>`` would become a link. These helpers neutralise both.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

import pandas as pd

# CommonMark lets any ASCII punctuation be escaped with a backslash, and an
# escaped character is always literal text: so escaping all of it is safe
# whatever the renderer's extensions (emphasis, links, LaTeX "$", directives).
_ASCII_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# GFM finds bare links ("www.x", "http://x", "a@b.c") in text after escapes are
# resolved, so escaping cannot stop them; a zero-width space inside the marker can.
_AUTOLINK_MARKERS = re.compile(r"(?i)(www|://|@)")
_ZERO_WIDTH_SPACE = "\u200b"


def md(text: object) -> str:
    """``text`` as literal Markdown: one line, every punctuation mark escaped,
    no bare link recognised."""
    one_line = " ".join(str(text).split())
    unlinked = _AUTOLINK_MARKERS.sub(lambda m: m.group(1)[0] + _ZERO_WIDTH_SPACE + m.group(1)[1:], one_line)
    return _ASCII_PUNCTUATION.sub(r"\\\1", unlinked)


def plot_text(text: object) -> str:
    """``text`` for plotly labels and hovers: its tags shown, not interpreted."""
    return html.escape(str(text), quote=False)


def cell(value: Any) -> str:
    """A table cell that may be missing: "" for None or NaN (a grid shows them as "None"),
    a whole number without ".0", anything else as it prints."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def blank_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every column that has a missing value as text, missing ones empty."""
    frame = frame.copy()
    for column in frame.columns[frame.isna().any()]:
        frame[column] = [cell(value) for value in frame[column]]
    return frame


def signed(change: int) -> str:
    """A change with its sign, for a metric's delta drawn without an arrow ("↓ -156" says it twice)."""
    return f"{change:+,d}".replace("-", "−")


def shorten(text: str, limit: int) -> str:
    """At most ``limit`` characters, with an ellipsis when cut."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# tree-sitter language names that the code highlighter (Prism) spells
# differently; every other name is passed on unchanged.
_HIGHLIGHTER_NAMES: dict[str, str | None] = {
    "": None,
    "text": None,
    "c_sharp": "csharp",
    "commonlisp": "lisp",
    "embedded_template": "erb",
}


def code_language(language: str | None) -> str | None:
    """The ``st.code`` language for a leaf's tree-sitter language name."""
    name = (language or "").lower()
    return _HIGHLIGHTER_NAMES.get(name, name)


def line_range(start: int, end: int) -> str:
    return f"L{start}" if start == end else f"L{start}–{end}"


# Why the shipped smoothing_window_size is 1, for the pages that teach smoothing (figures: README,
# "Retrieval quality", point (a)).
WHY_NO_SMOOTHING = (
    "Why window 1 (no smoothing) ships: on the standard-library benchmark the valley rule alone already "
    "puts one cut per topic change, and the smaller groups it leaves (median 4 leaves) let stage 1 open a "
    "tenth of the leaves at Recall@10 0.669, 0.012 below the flat search; with the seed's window 3 and "
    "threshold 0.5 no setting came within 0.02 of flat at a quarter of the leaves. The dotted curve is the "
    "seed's window 3 on the same pairs, for comparison: it decides nothing."
)


# The words the pages use without explaining them each time; shown once, in the sidebar's glossary.
GLOSSARY = (
    (
        "the seed",
        "the design hsc started from: its algorithm, parameter names and defaults (window 3, "
        "threshold 0.5, the threshold rule, stage 1 opening exactly mid_level_top_k groups, one vector a "
        'leaf). Every departure is a named parameter whose seed value is still one setting away; "the '
        "seed's rule\" is that original behaviour.",
    ),
    (
        "leaf",
        "a piece of a file cut along its syntax tree (a function, method or class; long ones split, "
        "tiny ones merged), embedded once.",
    ),
    ("group", "a run of neighbouring leaves of one file with no topic boundary inside: the mid level."),
    (
        "stage 1, stage 2",
        "a query first ranks the groups and opens the nearest; then it scores only the leaves inside them.",
    ),
    (
        "two-stage, hybrid, flat",
        "the retrieval modes: two-stage is the seed's dense two stages; hybrid "
        "(shipped) adds BM25 over identifier-split terms to both stages; flat scores every leaf exactly, "
        "the baseline.",
    ),
    (
        "HNSW",
        "a graph index for nearest neighbours, used by stage 1 when it asks for few groups; a widened "
        "stage 1 (over 2% of the groups) scores every group exactly instead. Each page says which ran.",
    ),
    ("Recall@10", "the share of queries whose answer is among the first ten results."),
)


def glossary_markdown() -> str:
    return "\n".join(f"- **{md(term)}**: {md(meaning)}" for term, meaning in GLOSSARY)


def scope_in_file(scope: str, path: str) -> str:
    """``scope`` without the module prefix its file's path already says ("inventory.pricing.PriceBook.add"
    in inventory/pricing.py -> "PriceBook.add"), so a narrow column shows the end that differs."""
    module = path.rsplit(".", 1)[0].replace("/", ".")
    for prefix in (module, module.removesuffix(".__init__")):
        if prefix and scope.startswith(prefix + "."):
            return scope[len(prefix) + 1 :]
    return scope


def once_per_run(values: list[str]) -> list[str]:
    """Each value where it differs from the row above, else blank: a table in document order
    names each file once, at its first row."""
    return [value if n == 0 or value != values[n - 1] else "" for n, value in enumerate(values)]
