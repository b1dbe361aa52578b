"""Which names a module-level import binds, and the member references code makes, per language.

Read by :class:`hsc.chunk.facts.FactReader` in its one pass over a file's tree. Each language is
one entry of :data:`BINDING_READERS` (an import statement -> the :class:`ImportBinding` s it makes)
and of :data:`MEMBER_FIELDS` (the node types of ``a.b`` and which fields hold ``a`` and ``b``);
a language added to hsc adds its own entries here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hsc.model import ImportBinding


def _text(data: bytes, node: Any) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _line(node: Any) -> int:
    return int(node.start_point[0]) + 1


def python_bindings(data: bytes, node: Any) -> list[ImportBinding]:
    """``import a.b`` binds ``a.b`` (and ``a``); ``import a.b as n`` binds ``n``; ``from m import x
    as y`` binds ``y`` to ``x`` of ``m``; ``from ..m import *`` binds ``*``; dots count as ``level``."""
    line = _line(node)
    if node.type == "import_statement":
        out = []
        for name in node.children_by_field_name("name"):
            if name.type == "aliased_import":
                module = _text(data, name.child_by_field_name("name"))
                out.append(ImportBinding(_text(data, name.child_by_field_name("alias")), module, "", 0, line))
            else:
                module = _text(data, name)
                out.append(ImportBinding(module, module, "", 0, line))
                if "." in module:
                    head = module.split(".")[0]
                    out.append(ImportBinding(head, head, "", 0, line))
        return out
    if node.type != "import_from_statement":
        return []
    source = node.child_by_field_name("module_name")
    if source is None:
        return []
    level, module = 0, _text(data, source)
    if source.type == "relative_import":
        prefix = next((c for c in source.children if c.type == "import_prefix"), None)
        level = len(_text(data, prefix)) if prefix is not None else 0
        dotted = next((c for c in source.named_children if c.type == "dotted_name"), None)
        module = _text(data, dotted) if dotted is not None else ""
    if module == "__future__":
        return []
    if any(c.type == "wildcard_import" for c in node.children):
        return [ImportBinding("*", module, "*", level, line)]
    out = []
    for name in node.children_by_field_name("name"):
        if name.type == "aliased_import":
            imported = _text(data, name.child_by_field_name("name"))
            local = _text(data, name.child_by_field_name("alias"))
        else:
            imported = local = _text(data, name)
        out.append(ImportBinding(local, module, imported, level, line))
    return out


def script_bindings(data: bytes, node: Any) -> list[ImportBinding]:
    """JavaScript and TypeScript: ``import d, {a as b} from './x'``, ``import * as ns``, and the
    re-exports ``export {a} from './x'`` / ``export * from './x'``."""
    source = node.child_by_field_name("source")
    if source is None or node.type not in ("import_statement", "export_statement"):
        return []
    module, line = _text(data, source).strip("'\"`"), _line(node)
    out = []
    for clause in node.named_children:
        if clause.type == "import_clause":
            for part in clause.named_children:
                if part.type == "identifier":
                    out.append(ImportBinding(_text(data, part), module, "default", 0, line))
                elif part.type == "namespace_import":
                    names = [c for c in part.named_children if c.type == "identifier"]
                    out += [ImportBinding(_text(data, n), module, "", 0, line) for n in names]
                elif part.type == "named_imports":
                    out += _specifiers(data, part, "import_specifier", module, line)
        elif clause.type == "export_clause":
            out += _specifiers(data, clause, "export_specifier", module, line)
    before_source = data[node.start_byte : source.start_byte]
    if node.type == "export_statement" and not out and b"*" in before_source:
        out.append(ImportBinding("*", module, "*", 0, line))
    return out


def _specifiers(data: bytes, node: Any, kind: str, module: str, line: int) -> list[ImportBinding]:
    out = []
    for specifier in (c for c in node.named_children if c.type == kind):
        name = specifier.child_by_field_name("name")
        alias = specifier.child_by_field_name("alias")
        if name is not None:
            imported = _text(data, name)
            out.append(ImportBinding(_text(data, alias) if alias else imported, module, imported, 0, line))
    return out


def go_bindings(data: bytes, node: Any) -> list[ImportBinding]:
    """``import f "fmt"`` binds ``f``; ``import "a/b/pkg"`` binds ``pkg`` to the package."""
    if node.type != "import_declaration":
        return []
    specs = [c for c in node.named_children if c.type == "import_spec"]
    for spec_list in (c for c in node.named_children if c.type == "import_spec_list"):
        specs += [c for c in spec_list.named_children if c.type == "import_spec"]
    out = []
    for spec in specs:
        path = spec.child_by_field_name("path")
        if path is None:
            continue
        module = _text(data, path).strip('"`')
        alias = spec.child_by_field_name("name")
        local = _text(data, alias) if alias is not None else module.rsplit("/", 1)[-1]
        out.append(
            ImportBinding("*" if local == "." else local, module, "*" if local == "." else "", 0, _line(spec))
        )
    return [binding for binding in out if binding.local != "_"]


def rust_bindings(data: bytes, node: Any) -> list[ImportBinding]:
    """``use a::b::{c, d as e};`` binds ``c`` and ``e`` to items of ``a::b``; ``use a::b::*`` binds ``*``."""
    if node.type != "use_declaration":
        return []
    out: list[ImportBinding] = []
    line = _line(node)

    def walk(item: Any, prefix: str) -> None:
        kind = item.type
        if kind == "scoped_use_list":
            path = item.child_by_field_name("path")
            inner = f"{prefix}::{_text(data, path)}".strip(":") if path is not None else prefix
            listed = item.child_by_field_name("list")
            for child in listed.named_children if listed is not None else ():
                walk(child, inner)
        elif kind == "use_list":
            for child in item.named_children:
                walk(child, prefix)
        elif kind == "use_as_clause":
            path, alias = item.child_by_field_name("path"), item.child_by_field_name("alias")
            if path is not None and alias is not None:
                module, _, name = f"{prefix}::{_text(data, path)}".strip(":").rpartition("::")
                out.append(ImportBinding(_text(data, alias), module, name, 0, line))
        elif kind == "use_wildcard":
            path = item.named_children[0] if item.named_child_count else None
            module = f"{prefix}::{_text(data, path)}".strip(":") if path is not None else prefix
            out.append(ImportBinding("*", module, "*", 0, line))
        elif kind in ("scoped_identifier", "identifier", "self", "crate"):
            module, _, name = f"{prefix}::{_text(data, item)}".strip(":").rpartition("::")
            if name == "self":  # use a::b::{self}: the module b itself
                module, _, name = module.rpartition("::")
            out.append(ImportBinding(name, module, name, 0, line))

    argument = node.child_by_field_name("argument")
    if argument is not None:
        walk(argument, "")
    return out


_JAVA_IMPORT = re.compile(r"import\s+(static\s+)?([\w.]+?)(\.\*)?\s*;")


def java_bindings(data: bytes, node: Any) -> list[ImportBinding]:
    """``import a.b.C;`` binds ``C`` to ``C`` of ``a.b``; ``import static a.b.C.m;`` binds ``m``;
    ``import a.b.*;`` binds ``*``."""
    if node.type != "import_declaration":
        return []
    match = _JAVA_IMPORT.match(" ".join(_text(data, node).split()))
    if match is None:
        return []
    dotted, line = match.group(2), _line(node)
    if match.group(3):
        return [ImportBinding("*", dotted, "*", 0, line)]
    module, _, name = dotted.rpartition(".")
    return [ImportBinding(name, module, name, 0, line)]


# language -> what one module-level statement of it binds.
BINDING_READERS: dict[str, Callable[[bytes, Any], list[ImportBinding]]] = {
    "python": python_bindings,
    "javascript": script_bindings,
    "typescript": script_bindings,
    "tsx": script_bindings,
    "go": go_bindings,
    "rust": rust_bindings,
    "java": java_bindings,
}


def import_bindings(data: bytes, node: Any, language: str) -> list[ImportBinding]:
    """The names a module-level statement of ``language`` binds (none for any other statement)."""
    reader = BINDING_READERS.get(language)
    return reader(data, node) if reader is not None else []


# language -> {node type of ``a.b``: (field of ``a``, field of ``b``)}.
MEMBER_FIELDS: dict[str, dict[str, tuple[str, str]]] = {
    "python": {"attribute": ("object", "attribute")},
    "javascript": {"member_expression": ("object", "property")},
    "typescript": {"member_expression": ("object", "property")},
    "tsx": {"member_expression": ("object", "property")},
    "go": {"selector_expression": ("operand", "field")},
    "rust": {"field_expression": ("value", "field"), "scoped_identifier": ("path", "name")},
    "java": {"field_access": ("object", "field"), "method_invocation": ("object", "name")},
}
_DOTTED = re.compile(r"(?:super\(\)|[A-Za-z_$][\w$]*)(?:\.[A-Za-z_$][\w$]*){0,3}")


def member_reference(data: bytes, node: Any, language: str) -> str | None:
    """``self.clamp``, ``util.clamp``, ``super().close``, ``a.b.c`` for a member node whose object is
    a name or a chain of names (``::`` read as ``.``); None for anything else (``f().x``)."""
    fields = MEMBER_FIELDS[language].get(node.type)
    if fields is None:
        return None
    owner, member = node.child_by_field_name(fields[0]), node.child_by_field_name(fields[1])
    if owner is None or member is None:
        return None
    text = "".join(_text(data, owner).split()).replace("::", ".") + "." + _text(data, member)
    return text if _DOTTED.fullmatch(text) else None
