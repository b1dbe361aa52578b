"""Lua: functions (``function M.f()``, ``function M:m()``, ``local function f()``,
``local f = function() end``); a module is a table, not a container, so
``M.f`` is the scope. ``---`` doc comments sit above; ``require`` imports.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages.tables import ImportForm, LanguageTables, node_text

KINDS = {"function_declaration": "function", "variable_declaration": "function"}


def _assigned_function(node: Any) -> tuple[Any, Any]:
    """(name, function) of ``local f = function() ... end``, else (None, None)."""
    assignment = next((c for c in node.named_children if c.type == "assignment_statement"), None)
    if assignment is None:
        return None, None
    names = next((c for c in assignment.named_children if c.type == "variable_list"), None)
    values = next((c for c in assignment.named_children if c.type == "expression_list"), None)
    if names is None or values is None or names.named_child_count != 1 or values.named_child_count != 1:
        return None, None
    value = values.named_children[0]
    return (names.named_children[0], value) if value.type == "function_definition" else (None, None)


def refine(data: bytes, node: Any, kind: str) -> str | None:
    if node.type == "variable_declaration":
        return kind if _assigned_function(node)[1] is not None else None
    return kind


def name_node(node: Any) -> Any:
    return _assigned_function(node)[0] if node.type == "variable_declaration" else None


def body_node(node: Any) -> Any:
    function = _assigned_function(node)[1] if node.type == "variable_declaration" else None
    return function.child_by_field_name("body") if function is not None else None


def _required(data: bytes, node: Any) -> list[ImportForm]:
    forms = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "function_call":
            name = current.child_by_field_name("name")
            arguments = current.child_by_field_name("arguments")
            if name is not None and node_text(data, name) == "require" and arguments is not None:
                strings = [c for c in arguments.named_children if c.type == "string"]
                if strings:
                    forms.append(ImportForm(node_text(data, strings[0]).strip("'\"[]")))
            continue
        stack.extend(current.named_children)
    return forms


TABLES = LanguageTables(
    name="lua",
    display="Lua",
    extensions=(".lua",),
    kinds=KINDS,
    containers=frozenset(),
    bodies=frozenset({"block"}),
    comments=frozenset({"comment"}),
    identifiers=("identifier",),
    name_types=("identifier", "dot_index_expression", "method_index_expression"),
    import_types=frozenset({"variable_declaration", "function_call", "assignment_statement"}),
    read_imports=_required,
    refine=refine,
    special_name=name_node,
    special_body=body_node,
    doc_prefixes=("---",),
)
