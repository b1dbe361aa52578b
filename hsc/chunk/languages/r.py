"""R: functions are assignments (``f <- function(x) { ... }``); roxygen ``#'``
comments above are their doc; ``library()`` and ``require()`` import packages.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text

KINDS = {"binary_operator": "function"}
_ASSIGNMENTS = frozenset({"<-", "<<-", "=", "->"})


def _function(node: Any) -> Any:
    operator = node.child_by_field_name("operator")
    value = node.child_by_field_name("rhs")
    if operator is None or operator.type not in _ASSIGNMENTS or value is None:
        return None
    return value if value.type == "function_definition" else None


def refine(data: bytes, node: Any, kind: str) -> str | None:
    return kind if _function(node) is not None else None


def name_node(node: Any) -> Any:
    return node.child_by_field_name("lhs") if node.type == "binary_operator" else None


def body_node(node: Any) -> Any:
    function = _function(node) if node.type == "binary_operator" else None
    return function.child_by_field_name("body") if function is not None else None


def read_imports(data: bytes, node: Any) -> list[ImportForm]:
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or arguments is None or node_text(data, function) not in ("library", "require"):
        return []
    first = next(
        (c for c in arguments.named_children if c.type in ("argument", "identifier", "string")), None
    )
    value = first.child_by_field_name("value") if first is not None and first.type == "argument" else first
    return [ImportForm(node_text(data, value).strip("'\""))] if value is not None else []


TABLES = LanguageTables(
    name="r",
    display="R",
    extensions=(".r", ".R"),  # .R for bench quality, which reads suffixes as written
    kinds=KINDS,
    containers=frozenset(),
    bodies=frozenset({"braced_expression"}),
    comments=frozenset({"comment"}),
    identifiers=("identifier",),
    name_types=("identifier",),
    import_types=frozenset({"call"}),
    read_imports=read_imports,
    refine=refine,
    special_name=name_node,
    special_body=body_node,
    doc_prefixes=("#'",),
)
