"""What each grammar calls a definition, a container, a body and a docstring.

The per-language knowledge of the syntax tree lives here, in one place: the
node types of the grammars in ``tree-sitter-language-pack`` that the cutter
(``hsc.chunk.cut``) and the facts reader (``hsc.chunk.facts``) both go by. Functions take
the file's bytes and a node, and hold no state. The node types themselves are tables in
``hsc.chunk.node_types``, and what the facts reader alone asks (imports, bound names, kinds)
is in ``hsc.chunk.grammar_facts``; both are imported from here too.
"""

from __future__ import annotations

import re
from typing import Any

from hsc.chunk.grammar_facts import (
    bound_names,
    go_type_kind,
    import_names,
    java_constants,
    language_node_types,
    prototype_name,
    tabled_body,
    tabled_kind,
)
from hsc.chunk.languages import tables_for
from hsc.chunk.node_types import (
    ANNOTATION_TYPES,
    AST_LANGUAGES,
    BODY_TYPES,
    COMMENT_HOLDERS,
    COMMENT_TYPES,
    CONTAINER_TYPES,
    DEFINITION_KINDS,
    DEFINITION_TYPES,
    DESCEND_SUFFIXES,
    EXPORT_PREFIXES,
    FUNCTION_VALUE_TYPES,
    IDENTIFIER_TYPES,
    IMPLEMENTATION_TYPES,
    LEADING_TYPES,
    LEAF_STATEMENTS,
    NAME_LEAF_TYPES,
    SCRIPT_LANGUAGES,
    SHARED_ANNOTATION_TYPES,
    SHARED_BODY_TYPES,
    SHARED_COMMENT_TYPES,
    SIGNATURE_TYPES,
    TABLED,
    TYPE_KINDS,
    VALUE_WRAPPERS,
    WRAPPER_TYPES,
)

TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")


def first_named_index(children: list[Any]) -> int:
    return next(
        (i for i, child in enumerate(children) if child.is_named and child.type not in COMMENT_TYPES), -1
    )


def is_docstring(node: Any) -> bool:
    if node.type in ("string", "concatenated_string"):
        return True
    return (
        node.type == "expression_statement"
        and node.named_child_count == 1
        and node.named_children[0].type in ("string", "concatenated_string")
    )


def documents_assignment(previous: Any, node: Any) -> bool:
    """``node`` is a Python string statement right after the assignment ``previous``: the
    assignment's attribute docstring (PEP 257), which Sphinx and editors show for the name."""
    if not is_docstring(node):
        return False
    if previous.type == "expression_statement" and previous.named_child_count == 1:
        previous = previous.named_child(0)  # grammars that wrap a statement's expression
    return previous.type == "assignment"


def wrapped(node: Any) -> Any:
    """The definition inside a wrapper node, or None."""
    node_type = node.type
    if node_type == "decorated_definition":
        return node.child_by_field_name("definition")
    if node_type == "export_statement":
        return node.child_by_field_name("declaration") or node.child_by_field_name("value")
    if node_type == "template_declaration":
        named = [c for c in node.named_children if c.type != "template_parameter_list"]
        return named[-1] if named else None
    if node_type == "ambient_declaration":
        return next((c for c in node.named_children if c.type not in COMMENT_TYPES), None)
    if node_type == "expression_statement" and node.named_child_count == 1:
        named = node.named_child(0)  # not named_children: most statements are not wrappers
        named_type = named.type
        if named_type in ("internal_module", "module"):
            return named
        if named_type == "assignment_expression" and assigned_name(named) is not None:
            return named
    return None


def overload_name(node: Any, types: frozenset[str]) -> str | None:
    """The name of a function or method ``node`` is, bare or behind ``export``, when its type is one
    of ``types`` (SIGNATURE_TYPES: an overload signature; IMPLEMENTATION_TYPES: a body), else None."""
    if node.type == "export_statement":
        node = node.child_by_field_name("declaration")
        if node is None:
            return None
    if node.type not in types:
        return None
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None else None


def assigned_name(node: Any) -> str | None:
    """The name an ``assignment_expression`` defines when its value is a function, a class or an
    object literal holding functions (``Body.setMass``, ``X.y`` of ``X.prototype.y``, ``f`` of
    ``exports.f``, ``exports`` of ``module.exports``), else None."""
    value = node.child_by_field_name("right")
    if function_value(value) is None and not holds_functions(value):
        return None
    left = node.child_by_field_name("left")
    if left is None or left.type not in ("identifier", "member_expression"):
        return None
    name = left.text.decode("utf-8", "replace")
    if "\n" in name or "(" in name or "[" in name:
        return None
    name = name.replace(".prototype.", ".").removesuffix(".prototype")
    if name in ("module.exports", "exports"):
        return "exports"
    for prefix in EXPORT_PREFIXES:
        name = name.removeprefix(prefix)
    return name or None


def go_package_scope(data: bytes, root: Any, path_scope: str) -> str:
    """A Go file's scope named by its package: the folders of ``path_scope`` (the file's dotted
    path) then the name of its ``package`` clause, unless the last folder already says it."""
    clause = next((c for c in root.named_children if c.type == "package_clause"), None)
    name_node = (
        next((c for c in clause.named_children if c.type == "package_identifier"), None) if clause else None
    )
    if name_node is None:
        return path_scope
    folders = path_scope.split(".")[:-1]
    package = name_text(data, name_node) or ""
    return ".".join(folders if folders and folders[-1] == package else [*folders, package])


def iife_body(node: Any) -> Any:
    """The statements of ``(function () { ... })()`` or ``(() => { ... })()`` standing as an
    expression statement (the module pattern), or None."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return None
    call = node.named_child(0)
    if call.type == "unary_expression" and call.named_child_count == 1:  # !function () { ... }()
        call = call.named_child(0)
    if call.type != "call_expression":
        return None
    function = function_value(call.child_by_field_name("function"))
    if function is None or function.type == "class":
        return None
    body = function.child_by_field_name("body")
    return body if body is not None and body.type == "statement_block" else None


def holds_functions(value: Any) -> bool:
    """An object literal with a method or a function-valued property among its members."""
    if value is None or value.type != "object":
        return False
    for child in value.named_children:
        if child.type == "method_definition":
            return True
        if child.type == "pair" and function_value(child.child_by_field_name("value")) is not None:
            return True
    return False


def container_body(node: Any) -> Any:
    """The node whose children are the members of a class-like definition."""
    node_type = node.type
    if node_type == "type_definition":  # typedef struct { ... } Name;
        inner = node.child_by_field_name("type")
        return inner.child_by_field_name("body") if inner is not None else None
    if node_type == "type_declaration":  # Go: type Name struct { ... } / interface { ... }
        specs = [child for child in node.named_children if child.type == "type_spec"]
        if len(specs) != 1:
            return None
        inner = specs[0].child_by_field_name("type")
        if inner is None:
            return None
        if inner.type == "struct_type":
            return next((c for c in inner.named_children if c.type == "field_declaration_list"), None)
        return inner if inner.type == "interface_type" else None
    return node.child_by_field_name("body")


def is_definition(data: bytes, node: Any, language: str = "") -> bool:
    tables = tables_for(language)
    if tables is not None:
        return tables.is_definition(data, node)
    node_type = node.type
    if node_type in ("decorated_definition", "template_declaration"):
        return True
    if node_type in ("export_statement", "ambient_declaration", "expression_statement"):
        inner = wrapped(node)
        if inner is not None and inner.type == "object":  # `export default { ... }` with methods
            return holds_functions(inner)
        return inner is not None and is_definition(data, inner)
    if node_type in ("lexical_declaration", "variable_declaration"):
        declarators = [child for child in node.named_children if child.type == "variable_declarator"]
        if len(declarators) != 1:
            return False
        value = declarators[0].child_by_field_name("value")
        return value is not None and (value.type in FUNCTION_VALUE_TYPES or holds_functions(value))
    if node_type == "assignment_expression":
        return assigned_name(node) is not None
    if node_type == "pair":  # a member of an object literal whose value is a function
        return function_value(node.child_by_field_name("value")) is not None
    if node_type in ("public_field_definition", "field_definition"):
        value = node.child_by_field_name("value")
        return value is not None and value.type in FUNCTION_VALUE_TYPES
    if node_type == "type_definition":
        return container_body(node) is not None
    return node_type in DEFINITION_TYPES


def describe(data: bytes, node: Any, language: str = "", traits: bool = False) -> tuple[str, str | None, Any]:
    """(node type to report, name for the scope, body of members or None). ``traits``: a Rust
    ``impl Trait for Type`` is named ``Type.Trait`` (scope_names "language"), else ``Type``."""
    tables = tables_for(language)
    if tables is not None:
        return tables.describe(data, node)
    node_type = node.type
    if node_type in WRAPPER_TYPES or node_type == "expression_statement":
        inner = wrapped(node)
        if inner is None:
            return node_type, None, None
        return describe(data, inner, traits=traits)
    if node_type == "impl_item" and traits:
        name = definition_name(data, node)
        trait = base_type_name(data, node.child_by_field_name("trait"))
        return node_type, f"{name}.{trait}" if name and trait else name, container_body(node)
    if node_type in ("lexical_declaration", "variable_declaration"):
        declarator = next(child for child in node.named_children if child.type == "variable_declarator")
        value = declarator.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None and value.type == "class" else None
        if holds_functions(value):
            body = value
        return node_type, name_text(data, declarator.child_by_field_name("name")), body
    if node_type == "assignment_expression":
        value = node.child_by_field_name("right")
        body = value if holds_functions(value) else None
        if value is not None and value.type == "class":
            body = value.child_by_field_name("body")
        return node_type, assigned_name(node), body
    if node_type == "pair":
        return node_type, name_text(data, node.child_by_field_name("key")), None
    if node_type == "object":
        return node_type, "default", node
    if node_type in ("public_field_definition", "field_definition"):
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        return node_type, name_text(data, name), None
    body = container_body(node) if node_type in CONTAINER_TYPES else None
    return node_type, definition_name(data, node), body


def definition_name(data: bytes, node: Any) -> str | None:
    node_type = node.type
    if node_type == "method_declaration" and node.child_by_field_name("receiver") is not None:
        method = name_text(data, node.child_by_field_name("name"))
        receiver = node.child_by_field_name("receiver")
        parameter = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
        receiver_type = base_type_name(data, parameter.child_by_field_name("type")) if parameter else None
        return f"{receiver_type}.{method}" if receiver_type and method else method
    if node_type == "type_declaration":
        specs = [child for child in node.named_children if child.type in ("type_spec", "type_alias")]
        return name_text(data, specs[0].child_by_field_name("name")) if len(specs) == 1 else None
    if node_type == "impl_item":
        return base_type_name(data, node.child_by_field_name("type"))
    if node_type in ("function_definition", "type_definition") and node.child_by_field_name("declarator"):
        return declarator_name(data, node)
    return name_text(data, node.child_by_field_name("name"))


def declarator_name(data: bytes, node: Any) -> str | None:
    """Name of a C/C++ function or typedef through pointer, reference,
    parenthesised and function declarators."""
    current = node.child_by_field_name("declarator")
    for _ in range(32):
        if current is None:
            return None
        if current.type in NAME_LEAF_TYPES:
            return name_text(data, current)
        inner = current.child_by_field_name("declarator")
        if inner is None:
            inner = next(
                (
                    c
                    for c in current.named_children
                    if c.type.endswith("declarator") or c.type in NAME_LEAF_TYPES
                ),
                None,
            )
        current = inner
    return None


def base_type_name(data: bytes, node: Any) -> str | None:
    """``Foo`` of ``*Foo``, ``&Foo``, ``Foo<T>``, ``Foo[T]`` or ``pkg::Foo``."""
    current = node
    for _ in range(16):
        if current is None:
            return None
        if current.type in NAME_LEAF_TYPES:
            return name_text(data, current)
        inner = (
            current.child_by_field_name("name") if current.type.startswith(("scoped", "qualified")) else None
        )
        if inner is None:
            inner = current.child_by_field_name("type")
        if inner is None:
            inner = next((c for c in current.named_children if c.type != "lifetime"), None)
        current = inner
    return None


def name_text(data: bytes, node: Any) -> str | None:
    """A name as a scope component: ``a::b`` becomes ``a.b``, template arguments and quotes go."""
    if node is None:
        return None
    name = data[node.start_byte : node.end_byte].decode("utf-8")
    previous = None if "<" in name else name  # most names hold no template arguments
    while previous != name:
        previous, name = name, TEMPLATE_ARGUMENTS.sub("", name)
    name = "".join(name.split()).replace("::", ".").strip("\"'`")
    return name or None


def function_value(value: Any) -> Any:
    """The function a declarator's value is, seen through parentheses and type assertions, or None."""
    while value is not None and value.type in VALUE_WRAPPERS and value.named_child_count:
        value = value.named_children[0]
    return value if value is not None and value.type in FUNCTION_VALUE_TYPES else None


# The names the cutter, the facts reader and the tests import from here.
__all__ = [
    "ANNOTATION_TYPES",
    "AST_LANGUAGES",
    "BODY_TYPES",
    "COMMENT_HOLDERS",
    "COMMENT_TYPES",
    "CONTAINER_TYPES",
    "DEFINITION_KINDS",
    "DEFINITION_TYPES",
    "DESCEND_SUFFIXES",
    "EXPORT_PREFIXES",
    "FUNCTION_VALUE_TYPES",
    "IDENTIFIER_TYPES",
    "IMPLEMENTATION_TYPES",
    "LEADING_TYPES",
    "LEAF_STATEMENTS",
    "NAME_LEAF_TYPES",
    "SCRIPT_LANGUAGES",
    "SHARED_ANNOTATION_TYPES",
    "SHARED_BODY_TYPES",
    "SHARED_COMMENT_TYPES",
    "SIGNATURE_TYPES",
    "TABLED",
    "TEMPLATE_ARGUMENTS",
    "TYPE_KINDS",
    "VALUE_WRAPPERS",
    "WRAPPER_TYPES",
    "assigned_name",
    "base_type_name",
    "bound_names",
    "container_body",
    "declarator_name",
    "definition_name",
    "describe",
    "documents_assignment",
    "first_named_index",
    "function_value",
    "go_package_scope",
    "go_type_kind",
    "holds_functions",
    "iife_body",
    "import_names",
    "is_definition",
    "is_docstring",
    "java_constants",
    "language_node_types",
    "name_text",
    "overload_name",
    "prototype_name",
    "tabled_body",
    "tabled_kind",
    "wrapped",
]
