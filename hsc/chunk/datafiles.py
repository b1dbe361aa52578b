"""Data and generated files: tables of literals, generated modules, minified text.

Such a file is indexed and searchable, but cut as data (runs of whole lines packed up to
the maximum, chunker ``data``) rather than along a syntax tree whose one "definition" is a
55,000-token literal, and the hierarchy's statistics and charts leave it out by default.

The rule (:func:`data_reason`), measured on the standard library and an installed
environment's site-packages (README, Command line): a file is data when

- at least ``LITERAL_SHARE`` of its lines of code (and at least ``MIN_LINES`` of them) hold
  only literals: strings, numbers, ``True``/``False``/``None``, punctuation and a trailing
  comment (comment-only and punctuation-only lines are not counted), or
- a generated-file marker ("@generated", "do not edit", "auto-generated") is in its first
  lines and at least ``GENERATED_LITERAL_SHARE`` of its lines of code are literals, or (in
  Python) it defines no function or class (protocol buffer modules, serialised patterns), or
- its non-blank lines average more than ``MINIFIED_MEAN_LINE`` characters.
"""

from __future__ import annotations

import re

# A file with fewer lines of literals or code than this is never called data on its literal share.
MIN_LINES = 40
LITERAL_SHARE = 0.7
# The share that makes a file marked as generated data (protocol buffer descriptors, tables).
GENERATED_LITERAL_SHARE = 0.4
MINIFIED_MEAN_LINE = 250
HEADER_LINES = 5
_GENERATED = re.compile(
    r"(@generated|do\s+not\s+edit|don't\s+edit|auto-?generated|automatically\s+generated|"
    r"this\s+file\s+(is|was)\s+generated|generated\s+(file|code)\b|code\s+generated\s+by)",
    re.IGNORECASE,
)
_STRING = re.compile(r"""[rbuRBU]{0,2}("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""")
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(0[xXoObB][0-9a-fA-F_]+|\d[\d_]*(\.\d*)?([eE][-+]?\d+)?[jJlLuU]*)(?![\w])"
)
_WORDS = re.compile(r"\b(True|False|None|true|false|null|nil)\b")
# Line comments by language; a language not named has none (its '#' may be code).
_HASH_COMMENTS = ("python", "ruby", "bash", "text", "perl", "r", "elixir", "julia")
_SLASH_COMMENTS = ("c", "cpp", "java", "javascript", "typescript", "tsx", "go", "rust", "csharp", "kotlin")
_LINE_COMMENT = {
    **dict.fromkeys(_HASH_COMMENTS, r"#"),
    **dict.fromkeys((*_SLASH_COMMENTS, "swift", "scala", "php"), r"//"),
    "lua": r"--",
}
_DEFINITION = re.compile(r"^\s*(async\s+def|def|class)\s", re.MULTILINE)
_PUNCTUATION = re.compile(r"[\s,:;()\[\]{}=>|]+")


def line_kind(line: str, language: str = "python") -> str:
    """ "literal" (``"1st_place": "🥇",``, ``(0, 31, 2),``), "neutral" (only punctuation or a
    comment) or "code"."""
    marker = _LINE_COMMENT.get(language)
    stripped = line.strip()
    if marker and stripped.startswith(marker.replace("\\", "")):
        return "neutral"
    if stripped.startswith(("/*", "*", "*/")) and language not in _HASH_COMMENTS:
        return "neutral"
    rest = _STRING.sub("\0", line)
    if marker:
        rest = re.sub(f"{marker}.*$", "", rest)
    rest = _WORDS.sub("\0", _NUMBER.sub("\0", rest))
    literals = rest.count("\0")
    rest = _PUNCTUATION.sub("", rest.replace("\0", ""))
    if rest:
        return "code"
    return "literal" if literals else "neutral"


def data_reason(source: str, language: str = "python") -> str:
    """Why ``source`` is data or generated, in a few words; "" when it reads as code or prose."""
    lines = [line for line in source.splitlines() if line.strip()]
    if not lines:
        return ""
    mean = sum(len(line) for line in lines) / len(lines)
    if mean > MINIFIED_MEAN_LINE:
        return f"minified or table-like: lines average {mean:,.0f} characters"
    kinds = [line_kind(line, language) for line in lines]
    literal, code = kinds.count("literal"), kinds.count("code")
    generated = any(_GENERATED.search(line) for line in lines[:HEADER_LINES])
    if literal + code < MIN_LINES and not generated:
        return ""
    share = literal / max(1, literal + code)
    # A generated marker alone is no sign of data: much generated code is code to read.
    if share >= LITERAL_SHARE or (generated and share >= GENERATED_LITERAL_SHARE):
        marked = "generated, " if generated else ""
        return f"data ({marked}{literal:,} of {literal + code:,} lines of code are literals)"
    if generated and language == "python" and not _DEFINITION.search(source):
        return "generated declarations (no function or class)"
    return ""
