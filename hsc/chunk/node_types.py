"""The node types of the grammars in ``tree-sitter-language-pack`` that hsc reads: what each grammar
calls a definition, a container, a body, a comment and a wrapper, and the kind a reader calls each
definition. The languages with a module of their own in ``hsc.chunk.languages`` add their node types
to the shared sets here; ``hsc.chunk.grammar`` holds the functions that read these tables.
"""

from __future__ import annotations

from hsc.chunk.languages import LANGUAGE_TABLES

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

# TypeScript's overload signatures, and the implementations they declare (hsc.chunk.cut, overload_signatures).
SIGNATURE_TYPES = frozenset({"function_signature", "method_signature"})
IMPLEMENTATION_TYPES = frozenset(
    {"function_declaration", "generator_function_declaration", "method_definition"}
)

# JavaScript's ways of naming a function by assignment: `Body.setMass = function`, `X.prototype.y =`,
# `exports.f =`, `module.exports = {...}`. The parts that say where a value lives, not what it is.
EXPORT_PREFIXES = ("module.exports.", "exports.", "this.")


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
