"""Perl: packages (``package A::B { ... }`` holds its subs; ``package A::B;`` is a
statement) and subroutines. ``#`` comments above a sub are its doc; ``use``
and ``require`` import modules.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text

KINDS = {
    "package_statement": "namespace",
    "subroutine_declaration_statement": "function",
    "method_declaration_statement": "method",
    "class_statement": "class",
}
PRAGMAS = frozenset({"strict", "warnings", "utf8", "lib", "parent", "base", "constant", "vars", "feature"})


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    if node.type == "use_statement":
        module = node.child_by_field_name("module")
        name = node_text(data, module) if module is not None else ""
        return [ImportForm(name, separator="::")] if name and name not in PRAGMAS else []
    if node.type == "expression_statement" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "require_expression":
        barewords = [c for c in node.named_children if c.type == "bareword"]
        return [ImportForm(node_text(data, barewords[0]), separator="::")] if barewords else []
    return []


TABLES = LanguageTables(
    name="perl",
    display="Perl",
    extensions=(".pl", ".pm"),
    kinds=KINDS,
    containers=frozenset({"package_statement", "class_statement"}),
    bodies=frozenset({"block"}),
    comments=frozenset({"comment"}),
    identifiers=("bareword", "varname", "function"),
    name_types=("bareword", "package"),
    import_types=frozenset({"use_statement", "expression_statement", "require_expression"}),
    read_imports=read_imports,
    doc_prefixes=("#",),
)
