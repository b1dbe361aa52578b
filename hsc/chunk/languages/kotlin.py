"""Kotlin: classes, interfaces, enum classes, objects, companions, functions.

This grammar names no fields: a declaration's name is its first
``type_identifier`` or ``simple_identifier`` child and its body the first
``class_body``, ``enum_class_body`` or ``function_body``. ``interface`` and
``enum class`` are ``class_declaration`` nodes told apart by their keyword.
Annotations sit in the declaration's ``modifiers``; KDoc is a
``multiline_comment`` above it (inside the import list, for the first
declaration after the imports). A property is a definition when its value is
a lambda or an anonymous function.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, dotted_path, node_text, split_path

KINDS = {
    "class_declaration": "class",
    "object_declaration": "object",
    "companion_object": "object",
    "function_declaration": "function",
    "secondary_constructor": "method",
    "anonymous_initializer": "method",
    "property_declaration": "property",
    "type_alias": "type",
}
CONTAINERS = frozenset({"class_declaration", "object_declaration", "companion_object"})
BODIES = frozenset({"class_body", "enum_class_body", "function_body", "statements", "block"})
_FUNCTION_VALUES = frozenset({"lambda_literal", "anonymous_function"})


def refine(data: bytes, node: Any, kind: str) -> str | None:
    if node.type == "class_declaration":
        keywords = {child.type for child in node.children if not child.is_named}
        return "interface" if "interface" in keywords else "enum" if "enum" in keywords else kind
    if node.type == "property_declaration":
        return kind if any(child.type in _FUNCTION_VALUES for child in node.named_children) else None
    if node.type == "companion_object" and node.named_child_count == 0:
        return None
    return kind


def name_node(node: Any) -> Any:
    """A property's name is in its variable declaration; a secondary constructor or an ``init``
    block is named by its keyword."""
    if node.type in ("secondary_constructor", "anonymous_initializer"):
        return node.children[0] if node.child_count else None
    if node.type == "property_declaration":
        declaration = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        return (
            declaration.named_children[0]
            if declaration is not None and declaration.named_child_count
            else None
        )
    return None


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    """``import a.b.C``, ``import a.b.*``, ``import a.b.C as D``."""
    path_node = next((c for c in node.named_children if c.type == "identifier"), None)
    if path_node is None:
        return []
    path = dotted_path(data, path_node)
    if any(c.type == "wildcard_import" for c in node.named_children):
        return [ImportForm(path, "*")]
    alias = next((c for c in node.named_children if c.type == "import_alias"), None)
    alias_name = next((c for c in alias.named_children), None) if alias is not None else None
    module, name = split_path(path)
    return [ImportForm(module, name, node_text(data, alias_name) if alias_name is not None else "")]


TABLES = LanguageTables(
    name="kotlin",
    display="Kotlin",
    extensions=(".kt", ".kts"),
    kinds=KINDS,
    containers=CONTAINERS,
    bodies=BODIES,
    comments=frozenset({"line_comment", "multiline_comment"}),
    identifiers=("simple_identifier", "type_identifier"),
    name_types=("type_identifier", "simple_identifier"),
    import_types=frozenset({"import_header"}),
    comment_holders=frozenset({"import_list", "import_header"}),
    read_imports=read_imports,
    refine=refine,
    special_name=name_node,
    doc_prefixes=("/**",),
)
