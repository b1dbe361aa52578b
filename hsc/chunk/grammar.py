"""What each grammar calls a definition, a container, a body and a docstring.

The per-language knowledge of the syntax tree lives here, in one place: the
node types of the grammars in ``tree-sitter-language-pack`` that the cutter
(``hsc.chunk.cut``) and the facts reader (``hsc.chunk.facts``) both go by. Functions take
the file's bytes and a node, and hold no state.
"""

from __future__ import annotations

import re
from typing import Any

from hsc.chunk.languages import LANGUAGE_TABLES, tables_for

# The languages registered in hsc.chunk.languages keep their tables there, one module each; the node
# types they add to the shared sets below are ones the other grammars do not have (tests/test_languages.py).
TABLED = tuple(LANGUAGE_TABLES.values())
AST_LANGUAGES = frozenset(
    {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby", "bash"}
).union(LANGUAGE_TABLES)

# The grammars that read JavaScript: function assignments and the module pattern are theirs.
SCRIPT_LANGUAGES = ("javascript", "typescript", "tsx")
SHARED_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment", "doc_comment"})
COMMENT_TYPES = SHARED_COMMENT_TYPES.union(*(tables.comments for tables in TABLED))
# Nodes that hold, as their last child, the comment above the definition after them.
COMMENT_HOLDERS = frozenset().union(*(tables.comment_holders for tables in TABLED))
# Nodes that describe the definition right below them when no blank line separates them.
LEADING_TYPES = COMMENT_TYPES | {"attribute_item", "decorator", "marker_annotation", "annotation"}

# Node types that are definitions wherever they stand in a module or class body.
DEFINITION_TYPES = frozenset(
    {
        # Python, C, C++, bash
        "function_definition",
        "class_definition",
        "decorated_definition",
        # JavaScript, TypeScript
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "method_definition",
        "internal_module",
        "class",  # a JS class expression, a Ruby class
        "module",  # a TS `declare module`, a Ruby module
        # Go, Java
        "method_declaration",
        "type_declaration",
        "record_declaration",
        "annotation_type_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
        # Rust
        "function_item",
        "impl_item",
        "struct_item",
        "enum_item",
        "union_item",
        "trait_item",
        "mod_item",
        "macro_definition",
        # C, C++
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "class_specifier",
        "namespace_definition",
        "template_declaration",
        "linkage_specification",
        # Ruby
        "method",
        "singleton_method",
        "singleton_class",
    }
)

# Definitions whose body is a list of members (methods, fields, nested types);
# when too big they are split into a header piece and one unit per member.
CONTAINER_TYPES = frozenset(
    {
        "class_definition",
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "enum_declaration",
        "internal_module",
        "module",
        "record_declaration",
        "annotation_type_declaration",
        "impl_item",
        "struct_item",
        "enum_item",
        "union_item",
        "trait_item",
        "mod_item",
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "class_specifier",
        "namespace_definition",
        "linkage_specification",
        "singleton_class",
        "type_definition",
        "type_declaration",
    }
)

# Nodes that only wrap the definition that matters (decorators, `export`, `template<>`).
WRAPPER_TYPES = frozenset(
    {"decorated_definition", "export_statement", "template_declaration", "ambient_declaration"}
)
# Values that make `const f = ...` or a class field a definition.
FUNCTION_VALUE_TYPES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "class"}
)
# Statement lists: the children of these are labelled with their own node type.
SHARED_BODY_TYPES = frozenset(
    {
        "block",
        "statement_block",
        "compound_statement",
        "body_statement",
        "statement_list",
        "declaration_list",
        "field_declaration_list",
        "class_body",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "constructor_body",
        "switch_body",
        "switch_block",
        "match_block",
        "do_block",
        "object_type",
    }
)
BODY_TYPES = SHARED_BODY_TYPES.union(*(tables.bodies for tables in TABLED))
NAME_LEAF_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "property_identifier",
        "primitive_type",
        "destructor_name",
        "operator_name",
        "qualified_identifier",
        "constant",
        "word",
    }
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


# TypeScript's overload signatures, and the implementations they declare (hsc.chunk.cut, overload_signatures).
SIGNATURE_TYPES = frozenset({"function_signature", "method_signature"})
IMPLEMENTATION_TYPES = frozenset(
    {"function_declaration", "generator_function_declaration", "method_definition"}
)


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


# JavaScript's ways of naming a function by assignment: `Body.setMass = function`, `X.prototype.y =`,
# `exports.f =`, `module.exports = {...}`. The parts that say where a value lives, not what it is.
EXPORT_PREFIXES = ("module.exports.", "exports.", "this.")


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


# ------------------------------------------------------- packing and merging


# The kind a reader calls each definition node (before "function" becomes "method" inside a type).
DEFINITION_KINDS = {
    "function_definition": "function",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_item": "function",
    "lexical_declaration": "function",
    "variable_declaration": "function",
    "method_definition": "method",
    "method_declaration": "method",
    "constructor_declaration": "method",
    "compact_constructor_declaration": "method",
    "public_field_definition": "method",
    "assignment_expression": "function",
    "pair": "function",
    "object": "object",
    "field_definition": "method",
    "method": "function",
    "singleton_method": "function",
    "class_definition": "class",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "class": "class",
    "class_specifier": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "trait_item": "trait",
    "enum_declaration": "enum",
    "enum_item": "enum",
    "enum_specifier": "enum",
    "struct_item": "struct",
    "union_item": "struct",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "type_definition": "struct",
    "type_alias_declaration": "type",
    "impl_item": "impl",
    "mod_item": "module",
    "module": "module",
    "internal_module": "module",
    "namespace_definition": "namespace",
    "macro_definition": "macro",
}
# Kinds whose functions are methods.
TYPE_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "impl", "object", "extension", "protocol"}
)
# Nodes that may hold definitions below them without being one: blocks of statements, conditionals.
# Statements that hold expressions only, never a definition: not worth descending into.
LEAF_STATEMENTS = frozenset(
    {
        "expression_statement",
        "return_statement",
        "import_statement",
        "import_from_statement",
        "assert_statement",
        "raise_statement",
        "pass_statement",
        "break_statement",
        "continue_statement",
        "delete_statement",
        "global_statement",
        "nonlocal_statement",
        "throw_statement",
        "goto_statement",
    }
)
DESCEND_SUFFIXES = ("_statement", "_clause", "block", "body", "_list", "_specification")
VALUE_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression"})
SHARED_ANNOTATION_TYPES = frozenset({"decorator", "attribute_item", "marker_annotation", "annotation"})
ANNOTATION_TYPES = SHARED_ANNOTATION_TYPES.union(*(tables.annotations for tables in TABLED))
IDENTIFIER_TYPES = (
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "constant",
    "package_identifier",
    "namespace_identifier",
)


def _text(data: bytes, node: Any) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def function_value(value: Any) -> Any:
    """The function a declarator's value is, seen through parentheses and type assertions, or None."""
    while value is not None and value.type in VALUE_WRAPPERS and value.named_child_count:
        value = value.named_children[0]
    return value if value is not None and value.type in FUNCTION_VALUE_TYPES else None


def go_type_kind(node: Any) -> str:
    """struct, interface or type: what a Go ``type`` declaration declares."""
    spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
    inner = spec.child_by_field_name("type") if spec is not None else None
    if inner is not None and inner.type == "struct_type":
        return "struct"
    if inner is not None and inner.type == "interface_type":
        return "interface"
    return "type"


def prototype_name(data: bytes, node: Any, language: str) -> str | None:
    """Name of a C/C++ function declared without a body (``int f(int);``), else None."""
    if node.type not in ("declaration", "field_declaration") or language not in ("c", "cpp"):
        return None
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator") or next(
            (c for c in declarator.named_children if c.type.endswith("declarator")), None
        )
    if declarator is None or declarator.type != "function_declarator":
        return None
    name_node = declarator.child_by_field_name("declarator")
    if name_node is None:
        return None
    return _text(data, name_node).split("::")[-1]


def import_names(data: bytes, node: Any, language: str) -> list[str]:
    """What a module-level statement imports: modules, packages, headers, crates, paths."""
    tables = tables_for(language)
    if tables is not None:
        return tables.import_paths(data, node)
    node_type = node.type
    if node_type == "import_statement" and language == "python":
        return [_text(data, c.child_by_field_name("name") or c) for c in node.children_by_field_name("name")]
    if node_type == "import_from_statement":
        module = node.child_by_field_name("module_name")
        name = _text(data, module) if module is not None else ""
        return [name] if name and name != "__future__" else []
    if node_type in ("import_statement", "export_statement"):  # JavaScript, TypeScript
        source = node.child_by_field_name("source")
        return [_text(data, source).strip("'\"`")] if source is not None else []
    if node_type == "import_declaration" and language == "go":
        specs = [c for c in node.named_children if c.type == "import_spec"]
        for spec_list in (c for c in node.named_children if c.type == "import_spec_list"):
            specs += [c for c in spec_list.named_children if c.type == "import_spec"]
        paths = [spec.child_by_field_name("path") for spec in specs]
        return [_text(data, path).strip('"`') for path in paths if path is not None]
    if node_type == "import_declaration":  # Java
        names = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
        return [_text(data, names[0])] if names else []
    if node_type == "use_declaration":
        argument = node.child_by_field_name("argument")
        while argument is not None and argument.type in (
            "scoped_use_list",
            "use_wildcard",
            "use_as_clause",
        ):
            argument = argument.child_by_field_name("path") or (
                argument.named_children[0] if argument.named_child_count else None
            )
        return [_text(data, argument)] if argument is not None else []
    if node_type == "extern_crate_declaration":
        name = node.child_by_field_name("name")
        return [_text(data, name)] if name is not None else []
    if node_type == "preproc_include":
        path = node.child_by_field_name("path")
        return [_text(data, path).strip('<>"')] if path is not None else []
    if node_type == "call" and language == "ruby":
        method = node.child_by_field_name("method")
        arguments = node.child_by_field_name("arguments")
        if method is None or arguments is None or _text(data, method) not in ("require", "require_relative"):
            return []
        strings = [c for c in arguments.named_children if c.type == "string"]
        return [_text(data, strings[0]).strip("'\"")] if strings else []
    return []


def bound_names(data: bytes, node: Any) -> list[str]:
    """Names a module-level statement binds: constants and variables, not functions."""
    node_type = node.type
    if node_type == "assignment":  # Python, Ruby
        left = node.child_by_field_name("left")
        if left is not None and left.type in ("identifier", "constant"):
            return [_text(data, left)]
        return []
    if node_type in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        names = [d.child_by_field_name("name") for d in declarators]
        return [_text(data, n) for n in names if n is not None and n.type == "identifier"]
    if node_type in ("var_declaration", "const_declaration"):  # Go
        specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
        for spec_list in (c for c in node.named_children if c.type.endswith("_spec_list")):
            specs += [c for c in spec_list.named_children if c.type in ("var_spec", "const_spec")]
        return [_text(data, n) for spec in specs for n in spec.children_by_field_name("name")]
    if node_type in ("const_item", "static_item", "preproc_def", "preproc_function_def"):
        name = node.child_by_field_name("name")
        return [_text(data, name)] if name is not None else []
    return []


def java_constants(data: bytes, node: Any) -> list[str]:
    """Names of a Java ``static final`` field declaration."""
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    words = _text(data, modifiers).split() if modifiers is not None else []
    if "static" not in words or "final" not in words:
        return []
    declarators = node.children_by_field_name("declarator")
    names = [declarator.child_by_field_name("name") for declarator in declarators]
    return [_text(data, name) for name in names if name is not None]


def tabled_kind(data: bytes, node: Any, language: str, kind: str) -> str:
    """The kind of a definition of a language registered in hsc.chunk.languages, else ``kind``."""
    tables = tables_for(language)
    return (tables.kind(data, node) or kind) if tables is not None else kind


def tabled_body(node: Any, language: str) -> tuple[bool, Any]:
    """(True, body) for a definition of a registered language, else (False, None)."""
    tables = tables_for(language)
    return (True, tables.body(node)) if tables is not None else (False, None)


def language_node_types(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(identifier types, definition types) of a registered language, else ((), ())."""
    tables = tables_for(language)
    return (tables.identifiers, tuple(tables.kinds)) if tables is not None else ((), ())
