"""Elixir: every definition is a call (``defmodule``, ``def``, ``defp``,
``defmacro``, ``defprotocol``, ``defimpl``) told apart by its target; its
body is the ``do`` block. ``alias``, ``import``, ``require`` and ``use`` import
modules (inside a module body, where Elixir writes them; the facts record
module-level statements only). Docs are ``@doc`` strings, not comments, and
are not read.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text

KINDS = {"call": "function"}
DEFINERS = {
    "defmodule": "module",
    "defprotocol": "protocol",
    "defimpl": "impl",
    "def": "function",
    "defp": "function",
    "defmacro": "macro",
    "defmacrop": "macro",
    "defguard": "function",
    "defdelegate": "function",
}
IMPORTERS = frozenset({"alias", "import", "require", "use"})


def _target(data: bytes, node: Any) -> str:
    target = node.child_by_field_name("target")
    return node_text(data, target) if target is not None and target.type == "identifier" else ""


def refine(data: bytes, node: Any, kind: str) -> str | None:
    return DEFINERS.get(_target(data, node)) if node.type == "call" else kind


def name_node(node: Any) -> Any:
    """``Acme.Order`` of ``defmodule Acme.Order``; ``add`` of ``def add(a) when a > 0``."""
    if node.type != "call":
        return None
    arguments = next((c for c in node.named_children if c.type == "arguments"), None)
    head = arguments.named_children[0] if arguments is not None and arguments.named_child_count else None
    for _ in range(4):
        if head is None or head.type in ("alias", "identifier"):
            return head
        if head.type == "binary_operator":  # a guard: def f(x) when x > 0
            head = head.child_by_field_name("left")
        elif head.type == "call":
            head = head.child_by_field_name("target")
        else:
            return None
    return None


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    if _target(data, node) not in IMPORTERS:
        return []
    arguments = next((c for c in node.named_children if c.type == "arguments"), None)
    first = arguments.named_children[0] if arguments is not None and arguments.named_child_count else None
    return [ImportForm(node_text(data, first))] if first is not None and first.type == "alias" else []


TABLES = LanguageTables(
    name="elixir",
    display="Elixir",
    extensions=(".ex", ".exs"),
    kinds=KINDS,
    containers=frozenset({"call"}),
    bodies=frozenset({"do_block"}),
    comments=frozenset({"comment"}),
    identifiers=("identifier", "alias"),
    name_types=(),
    import_types=frozenset({"call"}),
    read_imports=read_imports,
    refine=refine,
    special_name=name_node,
    doc_prefixes=("#",),
)
