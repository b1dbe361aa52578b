"""The prose of docs and comments: first sentences, doc comments without their
markers, signatures with their whitespace collapsed. Plain text handling; the
syntax tree already said where each doc and header is."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Comment lines that are tooling, not description; a licence is not a description either.
_DOC_NOISE = re.compile(
    r"-\*-|^!|eslint|prettier|noqa|type:\s*ignore|pylint:|@ts-|nolint|go:build|go:generate|\+build|"
    r"frozen_string_literal|rubocop:|^\s*(?:todo|fixme|xxx)\b",
    re.IGNORECASE,
)
LICENCE = re.compile(r"copyright|licen[cs]e|spdx-", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_COMMENT_MARKERS = ("///", "//!", "//", "/**", "/*", "*/", "*", "#'", "#", "---", "--")
# C# XML doc comments: the summary's tags go, a reference keeps its name, a section other than the
# summary (<param>, <returns>, ...) ends the description as a Javadoc tag does.
_XML_DOC_TAG = re.compile(r"</?(?:summary|remarks|para|value|c|code)\s*>")
_XML_REFERENCE = re.compile(r'<(?:see|seealso|paramref|typeparamref)\s+(?:cref|name|langword)="([^"]*)"\s*/>')
_XML_DOC_SECTION = re.compile(r"<(?:param|typeparam|returns|exception|example|seealso|inheritdoc)\b")


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word end to at most ``limit`` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;") + " …"


def first_sentence(text: str, limit: int = 220) -> str:
    text = " ".join(text.replace("``", "`").split())
    # A sentence ends at . ! or ? before a capital or an opening mark, so "e.g. a list" stays whole.
    match = _SENTENCE_BREAK.search(text)
    return shorten(text[: match.start()] if match else text, limit)


def doc_sentence(lines: Iterable[str]) -> str:
    """First sentence of the first paragraph of doc lines, skipping tooling
    pragmas; a tag (``@param``) or a heading ends the description."""
    paragraph: list[str] = []
    for text in lines:
        if text.startswith("@") or (text.startswith("# ") and paragraph):
            break
        if not text or _DOC_NOISE.search(text):
            if paragraph:
                break
            continue
        paragraph.append(text)
    return first_sentence(" ".join(paragraph)) if paragraph else ""


def comment_lines(text: str) -> list[str]:
    """The prose of a comment node, one entry per line, without comment markers."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        for marker in _COMMENT_MARKERS:
            if stripped.startswith(marker):
                stripped = stripped[len(marker) :]
                break
        if stripped.endswith("*/"):
            stripped = stripped[:-2]
        stripped = stripped.lstrip("/*!# ").rstrip()
        if "<" in stripped:
            stripped = _xml_doc(stripped)
        lines.append(stripped)
    return lines


def _xml_doc(line: str) -> str:
    if _XML_DOC_SECTION.match(line):
        return "@" + line
    return _XML_DOC_TAG.sub("", _XML_REFERENCE.sub(r"\1", line)).strip()


def clean_signature(text: str) -> str:
    text = " ".join(text.split())
    text = text.replace("( ", "(").replace("[ ", "[").replace(", )", ")").replace(",)", ")")
    text = text.replace(" )", ")").replace(", ]", "]").replace(" ]", "]")
    return text.rstrip(" {:;=").rstrip()
