"""Julia: modules, functions (``function f(x) ... end`` and ``f(x) = ...``),
macros, structs and abstract types. Docstrings are string literals above a
definition, not comments, and are not read; ``using`` and ``import`` import
modules (``import Base: show`` binds ``show`` from ``Base``).
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text

KINDS = {
    "module_definition": "module",
    "function_definition": "function",
    "macro_definition": "macro",
    "struct_definition": "struct",
    "abstract_definition": "type",
    "assignment": "function",
}


def _called(node: Any) -> Any:
    """The name of ``f(x)``, ``Base.show(io, x)`` or ``f(x)::T where T`` (a signature's call)."""
    for _ in range(4):
        if node is None or node.type in ("identifier", "field_expression", "operator"):
            return node
        if node.type == "call_expression":
            return node.named_children[0] if node.named_child_count else None
        node = node.named_children[0] if node.named_child_count else None
    return None


def refine(data: bytes, node: Any, kind: str) -> str | None:
    if node.type == "assignment":  # f(x) = ..., a function in one line
        target = node.named_children[0] if node.named_child_count else None
        return kind if target is not None and target.type == "call_expression" else None
    return kind


def name_node(node: Any) -> Any:
    if node.type in ("function_definition", "macro_definition"):
        signature = next((c for c in node.named_children if c.type == "signature"), None)
        return _called(signature)
    if node.type in ("struct_definition", "abstract_definition"):
        head = next((c for c in node.named_children if c.type == "type_head"), None)
        return _called(head)
    if node.type == "assignment":
        return _called(node.named_children[0]) if node.named_child_count else None
    return None


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    forms = []
    for child in node.named_children:
        if child.type == "selected_import":
            names = [node_text(data, c) for c in child.named_children]
            forms += [ImportForm(names[0], name) for name in names[1:]] if names else []
        elif child.type in ("identifier", "scoped_identifier", "import_path"):
            forms.append(ImportForm(node_text(data, child)))
    return forms


TABLES = LanguageTables(
    name="julia",
    display="Julia",
    extensions=(".jl",),
    kinds=KINDS,
    containers=frozenset({"module_definition"}),
    bodies=frozenset({"block"}),
    comments=frozenset({"line_comment", "block_comment"}),
    identifiers=("identifier",),
    name_types=("identifier",),
    import_types=frozenset({"using_statement", "import_statement"}),
    read_imports=read_imports,
    refine=refine,
    special_name=name_node,
    doc_prefixes=("#",),
)
