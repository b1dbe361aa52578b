"""Single-file components (Vue, Svelte): the script parts, cut with the script's own grammar.

A component's grammar sees its ``<script>`` as raw text. The script's parts
are parsed again with JavaScript or TypeScript restricted to their byte
ranges (tree-sitter's included ranges), so definitions, scopes and facts
come from the script's syntax tree, at the component file's byte offsets;
the template and the styles between them are cut along the component's
elements.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from tree_sitter import Range
from tree_sitter_language_pack import get_parser

COMPONENT_LANGUAGES = {".vue": "vue", ".svelte": "svelte"}
_LANG_ATTRIBUTE = re.compile(rb"""\blang\s*=\s*["']?(\w+)""")
SCRIPT_GRAMMARS = {"ts": "typescript", "typescript": "typescript", "tsx": "tsx", "jsx": "javascript"}


@dataclass(frozen=True)
class ScriptPart:
    """The text of one ``<script>`` element: its byte range and the grammar it is written in."""

    lo: int
    hi: int
    language: str


def script_parts(data: bytes, root: Any) -> list[ScriptPart]:
    """The component's script parts in order (top-level ``<script>`` elements with text)."""
    parts = []
    for element in root.named_children:
        if element.type != "script_element":
            continue
        text = next((c for c in element.named_children if c.type == "raw_text"), None)
        if text is None or text.end_byte <= text.start_byte:
            continue
        start_tag = next((c for c in element.named_children if c.type == "start_tag"), None)
        found = _LANG_ATTRIBUTE.search(data[start_tag.start_byte : start_tag.end_byte]) if start_tag else None
        language = (
            SCRIPT_GRAMMARS.get(found.group(1).decode().lower(), "javascript") if found else "javascript"
        )
        parts.append(ScriptPart(text.start_byte, text.end_byte, language))
    return parts


def script_language(parts: list[ScriptPart]) -> str:
    """One grammar for all the parts, read as one program: TypeScript when any part is."""
    languages = {part.language for part in parts}
    return next((name for name in ("tsx", "typescript") if name in languages), "javascript")


def parse_scripts(data: bytes, parts: list[ScriptPart], language: str) -> Any:
    """The syntax tree of the script parts alone, at the file's byte offsets (a parser of its
    own: included ranges would change the shared one)."""
    parser = get_parser(language)  # type: ignore[arg-type]
    newlines = [match.start() for match in re.finditer(b"\n", data)]

    def point(offset: int) -> tuple[int, int]:
        row = bisect_left(newlines, offset)
        return row, offset - (newlines[row - 1] + 1 if row else 0)

    parser.included_ranges = [Range(point(p.lo), point(p.hi), p.lo, p.hi) for p in parts]
    return parser.parse(data).root_node
