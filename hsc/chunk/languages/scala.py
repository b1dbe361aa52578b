"""Scala: classes, case classes, objects, traits, enums, givens, extensions, defs.

Annotations (``@deprecated``) are children of the definition; Scaladoc is a
``block_comment`` above it. A ``val`` is a definition when its value is a
lambda. ``import a.b.{C, D => E}`` binds each selector.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text

KINDS = {
    "class_definition": "class",
    "object_definition": "object",
    "trait_definition": "trait",
    "enum_definition": "enum",
    "given_definition": "object",
    "extension_definition": "extension",
    "function_definition": "function",
    "function_declaration": "function",
    "val_definition": "property",
    "type_definition": "type",
}
CONTAINERS = frozenset(
    {"class_definition", "object_definition", "trait_definition", "enum_definition", "extension_definition"}
)
BODIES = frozenset({"template_body", "enum_body", "block", "indented_block", "with_template_body"})
_FUNCTION_VALUES = frozenset({"lambda_expression"})


def refine(data: bytes, node: Any, kind: str) -> str | None:
    if node.type == "val_definition":
        value = node.child_by_field_name("value")
        return kind if value is not None and value.type in _FUNCTION_VALUES else None
    if node.type == "type_definition":  # an alias worth a unit only when written over several lines
        return kind if node.start_point[0] != node.end_point[0] else None
    return kind


def name_node(node: Any) -> Any:
    return node.child_by_field_name("pattern") if node.type == "val_definition" else None


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    parts = node.children_by_field_name("path")
    module = "".join(node_text(data, part) for part in parts).strip(".")
    selectors = next((c for c in node.named_children if c.type == "namespace_selectors"), None)
    if selectors is None:
        if any(c.type == "namespace_wildcard" for c in node.named_children):
            return [ImportForm(module, "*")]
        head, _, last = module.rpartition(".")
        return [ImportForm(head, last)] if head else [ImportForm(module)]
    forms = []
    for selector in selectors.named_children:
        if selector.type == "arrow_renamed_identifier":
            name, alias = selector.child_by_field_name("name"), selector.child_by_field_name("alias")
            if name is not None:
                forms.append(
                    ImportForm(module, node_text(data, name), node_text(data, alias) if alias else "")
                )
        elif selector.type in ("identifier", "namespace_wildcard"):
            text = node_text(data, selector)
            forms.append(ImportForm(module, "*" if text in ("_", "*") else text))
    return forms


TABLES = LanguageTables(
    name="scala",
    display="Scala",
    extensions=(".scala", ".sc"),
    kinds=KINDS,
    containers=CONTAINERS,
    bodies=BODIES,
    comments=frozenset({"comment", "block_comment"}),
    identifiers=("identifier", "type_identifier"),
    name_types=("identifier", "type_identifier"),
    annotations=frozenset({"annotation"}),
    import_types=frozenset({"import_declaration"}),
    read_imports=read_imports,
    refine=refine,
    special_name=name_node,
    doc_prefixes=("/**",),
)
