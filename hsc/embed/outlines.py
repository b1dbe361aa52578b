"""Outline texts: what a definition that spans several leaves says as a whole, in one text.

A class question ("JSON decoder that turns a document into Python objects") is about the class,
but no single leaf of the class says it: the signature is in one leaf, the methods in others. An
outline is the definition's scope line (as a leaf's embedding text starts), its signature, then
the signatures of the definitions inside it (names and parameters), one a line in line order,
indented by depth. A file's outline is its module scope and the signatures of its outermost
definitions (its top-level names). Docstrings are left out: they are what a question quotes,
and the code alone is what every definition has.

The definitions are the ones the chunker read from the syntax tree with the leaves
(:attr:`hsc.model.ParsedFile.definitions`, or the ``definitions`` rows of the store); nothing
is parsed again. The encoder reads an outline up to its window; a longer one is embedded from
its start (the definition's own signature and its first members).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from hsc.model import Definition, common_scope

# A file's own description (its module docstring) spans the file: not a definition of its own.
NOT_OUTLINED = frozenset({"file"})
INDENT = "    "
FILE_KEY = (0, 0)  # the key of a file's own outline in :func:`file_outlines`


def _signature(definition: Definition) -> str:
    return definition.signature or f"{definition.kind} {definition.name}"


def _outermost(definitions: Sequence[Definition]) -> list[tuple[Definition, list[tuple[int, Definition]]]]:
    """Each outermost definition with the definitions inside it and their depth below it."""
    out: list[tuple[Definition, list[tuple[int, Definition]]]] = []
    open_spans: list[Definition] = []  # the chain of definitions holding the current one
    for d in sorted(definitions, key=lambda d: (d.start_line, -d.end_line)):
        if d.kind in NOT_OUTLINED:
            continue
        while open_spans and not (d.end_line <= open_spans[-1].end_line):
            open_spans.pop()
        if not open_spans:
            out.append((d, []))
        else:
            out[-1][1].append((len(open_spans), d))
        open_spans.append(d)
    return out


def leaves_spanned(definition: Definition, leaf_starts: Sequence[int], leaf_ends: Sequence[int]) -> int:
    """How many of a file's leaves (their first and last lines, in order) ``definition`` overlaps."""
    first = bisect.bisect_left(leaf_ends, definition.start_line)
    last = bisect.bisect_right(leaf_starts, definition.end_line)
    return max(0, last - first)


def definition_outline(definition: Definition, members: Sequence[tuple[int, Definition]]) -> str:
    """The outline of ``definition`` with the definitions inside it (depth, definition)."""
    lines = [definition.scope, _signature(definition)]
    lines += [INDENT * depth + _signature(member) for depth, member in members]
    return "\n".join(lines)


def file_outline(module_scope: str, definitions: Sequence[Definition]) -> str:
    """A file's outline: its module scope, then its outermost definitions' signatures."""
    return "\n".join([module_scope] + [_signature(d) for d, _ in _outermost(definitions)])


def file_outlines(
    module_scope: str,
    definitions: Sequence[Definition],
    leaf_starts: Sequence[int],
    leaf_ends: Sequence[int],
    min_leaves: int = 2,
) -> dict[tuple[int, int], str]:
    """A file's outlines by (first line, last line) of their definition, :data:`FILE_KEY` for the
    file's own: one for every outermost definition that spans more than one of the file's leaves
    (``leaf_starts``, ``leaf_ends``: their lines, in order) and holds other definitions (a
    definition in one leaf is embedded whole by that leaf already), and one for the file when it
    has a definition. ``min_leaves`` 1: every outermost definition that holds others; 0: every
    outermost definition."""
    out: dict[tuple[int, int], str] = {}
    outermost = _outermost(definitions)
    for definition, members in outermost:
        if min_leaves == 0 or (members and leaves_spanned(definition, leaf_starts, leaf_ends) >= min_leaves):
            out[(definition.start_line, definition.end_line)] = definition_outline(definition, members)
    if outermost:
        out[FILE_KEY] = file_outline(module_scope, definitions)
    return out


def module_scope(path: str, definitions: Sequence[Definition], leaf_scopes: Sequence[str]) -> str:
    """The scope a file's outline starts with: its own description's scope (the module), or a
    type's that its file is named after, else the scope its leaves share, else its path."""
    own = next((d.scope for d in definitions if d.kind in NOT_OUTLINED), "")
    if own:
        return own
    from hsc.chunk.parse import module_name  # the chunker's name of a file, read where it is needed

    module = module_name(path)
    if any(d.scope == module for d in definitions):  # a Java type named by its file (java_class_scopes)
        return module  # not the package its statements are scoped by
    return common_scope(list(leaf_scopes)) or path
