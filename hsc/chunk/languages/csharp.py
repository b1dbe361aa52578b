"""C#: namespaces, classes, structs, records, interfaces, enums and their members.

Attributes (``[Serializable]``) are children of the declaration they annotate,
so they stay with it; ``///`` XML doc comments are ``comment`` nodes above it.
A property is a definition when an accessor has a body (``get { ... }`` or
``get => ...``), not an auto-property (``{ get; set; }``).
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, dotted_path, split_path

KINDS = {
    "namespace_declaration": "namespace",
    "file_scoped_namespace_declaration": "namespace",  # namespace A.B; (the declarations follow it)
    "class_declaration": "class",
    "struct_declaration": "struct",
    "record_declaration": "class",
    "record_struct_declaration": "struct",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "delegate_declaration": "type",
    "method_declaration": "method",
    "constructor_declaration": "method",
    "destructor_declaration": "method",
    "operator_declaration": "method",
    "conversion_operator_declaration": "method",
    "indexer_declaration": "property",
    "property_declaration": "property",
    "local_function_statement": "function",
}
CONTAINERS = frozenset(
    {
        "namespace_declaration",
        "class_declaration",
        "struct_declaration",
        "record_declaration",
        "record_struct_declaration",
        "interface_declaration",
        "enum_declaration",
    }
)
BODIES = frozenset({"declaration_list", "enum_member_declaration_list", "block", "accessor_list"})


def _accessor_has_body(node: Any) -> bool:
    accessors = node.child_by_field_name("accessors")
    if accessors is None:  # an expression-bodied property: int P => x;
        return any(child.type == "arrow_expression_clause" for child in node.named_children)
    return any(
        child.type in ("block", "arrow_expression_clause")
        for accessor in accessors.named_children
        for child in accessor.named_children
    )


def refine(data: bytes, node: Any, kind: str) -> str | None:
    if node.type in ("property_declaration", "indexer_declaration"):
        return kind if _accessor_has_body(node) else None
    return kind


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    """``using A.B;`` (a namespace), ``using static A.B;`` (its members), ``using X = A.B.C;``."""
    names = [c for c in node.named_children if c.type in ("qualified_name", "identifier", "generic_name")]
    alias = node.child_by_field_name("name")
    target = next((c for c in names if alias is None or c.start_byte != alias.start_byte), None)
    if target is None:
        return []
    path = dotted_path(data, target)
    if alias is not None:
        module, name = split_path(path)
        return [ImportForm(module, name, dotted_path(data, alias))]
    is_static = any(not c.is_named and c.type == "static" for c in node.children)
    return [ImportForm(path, "*" if is_static else "")]


TABLES = LanguageTables(
    name="csharp",
    display="C#",
    extensions=(".cs",),
    kinds=KINDS,
    containers=CONTAINERS,
    bodies=BODIES,
    comments=frozenset({"comment"}),
    identifiers=("identifier",),
    name_types=("identifier",),
    annotations=frozenset({"attribute_list"}),
    import_types=frozenset({"using_directive"}),
    read_imports=read_imports,
    refine=refine,
    doc_prefixes=("///", "/**"),
)
