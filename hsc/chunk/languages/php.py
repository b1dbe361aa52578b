"""PHP: namespaces, classes, interfaces, traits, enums, methods and functions.

Attributes (``#[Route]``) are children of the declaration; PHPDoc ``/** */``
is a ``comment`` node above it. Namespace paths (``Acme\\Orders``) become
dotted scope components. ``use`` statements import classes, functions and
constants (``use function A\\f;``), alone or grouped (``use A\\{B, C as D};``).
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text, split_path

KINDS = {
    "namespace_definition": "namespace",
    "class_declaration": "class",
    "interface_declaration": "interface",
    "trait_declaration": "trait",
    "enum_declaration": "enum",
    "method_declaration": "method",
    "function_definition": "function",
}
CONTAINERS = frozenset(
    {
        "namespace_definition",
        "class_declaration",
        "interface_declaration",
        "trait_declaration",
        "enum_declaration",
    }
)
BODIES = frozenset({"declaration_list", "enum_declaration_list", "compound_statement"})


def _clause(data: bytes, clause: Any, prefix: str) -> ImportForm | None:
    target = next((c for c in clause.named_children if c.type in ("qualified_name", "name")), None)
    if target is None:
        return None
    path = "".join(node_text(data, target).split()).lstrip("\\")
    if prefix:
        path = f"{prefix}\\{path}"
    alias = clause.child_by_field_name("alias")
    module, name = split_path(path, "\\")
    return ImportForm(module, name, node_text(data, alias) if alias is not None else "", "\\")


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    prefix_node = next((c for c in node.named_children if c.type == "namespace_name"), None)
    prefix = node_text(data, prefix_node).lstrip("\\") if prefix_node is not None else ""
    group = node.child_by_field_name("body")
    clauses = group.named_children if group is not None else node.named_children
    forms = [_clause(data, c, prefix) for c in clauses if c.type == "namespace_use_clause"]
    return [form for form in forms if form is not None]


TABLES = LanguageTables(
    name="php",
    display="PHP",
    extensions=(".php",),
    kinds=KINDS,
    containers=CONTAINERS,
    bodies=BODIES,
    comments=frozenset({"comment"}),
    identifiers=("name",),
    name_types=("name",),
    annotations=frozenset({"attribute_list"}),
    import_types=frozenset({"namespace_use_declaration"}),
    read_imports=read_imports,
    doc_prefixes=("/**",),
)
