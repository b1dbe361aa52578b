"""What the facts reader (``hsc.chunk.facts``) asks of each grammar beyond its definitions: what a
module-level statement imports and binds, a Java constant, a C prototype, and the kind of a
definition. Functions take the file's bytes and a node, and hold no state.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages import tables_for


def _text(data: bytes, node: Any) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


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
