"""Swift: classes, structs, enums, actors, extensions, protocols and their members.

One node type, ``class_declaration``, declares classes, structs, enums,
actors and extensions; its ``declaration_kind`` field says which. Attributes
(``@available``) sit in the declaration's ``modifiers``; ``///`` doc comments
are ``comment`` nodes above it. A property is a definition when it is
computed (``var total: Int { ... }``) or holds a closure.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, dotted_path, node_text, split_path

KINDS = {
    "class_declaration": "class",
    "protocol_declaration": "protocol",
    "function_declaration": "function",
    "protocol_function_declaration": "method",
    "init_declaration": "method",
    "deinit_declaration": "method",
    "subscript_declaration": "method",
    "property_declaration": "property",
    "typealias_declaration": "type",
}
CONTAINERS = frozenset({"class_declaration", "protocol_declaration"})
BODIES = frozenset({"class_body", "enum_class_body", "protocol_body", "function_body", "computed_property"})
# What ``declaration_kind`` says, as a kind.
_DECLARATION_KINDS = {"struct": "struct", "enum": "enum", "extension": "extension", "actor": "class"}


def refine(data: bytes, node: Any, kind: str) -> str | None:
    if node.type == "class_declaration":
        declared = node.child_by_field_name("declaration_kind")
        return _DECLARATION_KINDS.get(node_text(data, declared), kind) if declared is not None else kind
    if node.type == "property_declaration":
        holds_code = node.child_by_field_name("computed_value") is not None or any(
            child.type == "lambda_literal" for child in node.named_children
        )
        return kind if holds_code else None
    return kind


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    """``import Foundation`` (a module) and ``import struct Swift.Array`` (one declaration)."""
    path_node = next((c for c in node.named_children if c.type == "identifier"), None)
    if path_node is None:
        return []
    path = dotted_path(data, path_node)
    declares_one = any(not c.is_named and c.type != "import" for c in node.children)
    if declares_one and "." in path:
        module, name = split_path(path)
        return [ImportForm(module, name)]
    return [ImportForm(path)]


TABLES = LanguageTables(
    name="swift",
    display="Swift",
    extensions=(".swift",),
    kinds=KINDS,
    containers=CONTAINERS,
    bodies=BODIES,
    comments=frozenset({"comment", "multiline_comment"}),
    identifiers=("simple_identifier", "type_identifier"),
    name_types=("simple_identifier", "type_identifier", "pattern"),
    annotations=frozenset({"attribute"}),
    import_types=frozenset({"import_declaration"}),
    read_imports=read_imports,
    refine=refine,
    doc_prefixes=("///", "/**"),
)
