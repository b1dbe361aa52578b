"""The shape of one language's syntax-tree knowledge, as data.

A :class:`LanguageTables` says which node types of a grammar are definitions
(and of what kind), which of them hold members, which nodes list members or
statements, which are comments, attributes, identifiers and imports. The
cutter (``hsc.chunk.cut``) and the facts reader (``hsc.chunk.facts``) ask
``hsc.chunk.grammar``, which answers from these tables for the languages
registered in ``hsc.chunk.languages``. Functions here hold no state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_TYPE_ARGUMENTS = re.compile(r"<[^<>]*>")


@dataclass(frozen=True)
class ImportForm:
    """One binding an import statement makes: ``name`` from ``module``, seen locally as ``bound``.

    ``name`` is "" when the statement brings in a whole namespace or package
    (``using System;``, ``import Foundation``) and "*" for a wildcard;
    ``separator`` joins module and name the way the language writes them."""

    module: str
    name: str = ""
    alias: str = ""
    separator: str = "."

    @property
    def path(self) -> str:
        """The imported thing as written: ``Acme\\Util\\Helper``, ``kotlin.math.max``."""
        if not self.name or self.name == "*" or not self.module:
            return self.module or self.name
        return f"{self.module}{self.separator}{self.name}"

    @property
    def bound(self) -> str:
        """The local name the import binds ("" for a namespace or wildcard import)."""
        return self.alias or ("" if self.name == "*" else self.name)


def node_text(data: bytes, node: Any) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def scope_component(text: str) -> str | None:
    """A name as a scope component: type arguments, whitespace and quotes go;
    ``a::b``, ``A\\B`` and Lua's ``M:f`` become ``a.b``, ``A.B`` and ``M.f``."""
    previous = None
    while previous != text:
        previous, text = text, _TYPE_ARGUMENTS.sub("", text)
    text = "".join(text.split()).replace("::", ".").replace("\\", ".").replace(":", ".").strip("\"'`.")
    return text or None


def no_imports(data: bytes, node: Any) -> list[ImportForm]:
    return []


def keep_kind(data: bytes, node: Any, kind: str) -> str | None:
    return kind


def no_node(node: Any) -> Any:
    return None


def dotted_path(data: bytes, node: Any) -> str:
    """A qualified name's text without whitespace: ``System . Text`` -> ``System.Text``."""
    return "".join(node_text(data, node).split())


def split_path(path: str, separator: str = ".") -> tuple[str, str]:
    """(module, last component) of a qualified name."""
    module, _, name = path.rpartition(separator)
    return module, name


@dataclass(frozen=True)
class LanguageTables:
    """What one grammar calls a definition, a container, a body, a comment, a name and an import."""

    name: str  # the grammar's name in tree-sitter-language-pack
    display: str  # as people write it: "C#"
    extensions: tuple[str, ...]
    kinds: Mapping[str, str]  # definition node type -> kind ("class", "method", "property", ...)
    containers: frozenset[str]  # definitions whose body lists members (split into header and members)
    bodies: frozenset[str]  # member lists and statement blocks (a definition's body without a field)
    comments: frozenset[str]
    identifiers: tuple[str, ...]  # node types of the names a leaf uses
    name_types: tuple[str, ...]  # a definition's name node when the grammar gives no ``name`` field
    annotations: frozenset[str] = frozenset()  # attributes and annotations inside a definition's header
    import_types: frozenset[str] = frozenset()  # module-level statements that import
    read_imports: Callable[[bytes, Any], list[ImportForm]] = no_imports
    # The kind a definition node really is (Swift's class_declaration declares structs, enums,
    # extensions and actors too), or None when this node is no definition (an auto-property).
    refine: Callable[[bytes, Any, str], str | None] = keep_kind
    doc_prefixes: tuple[str, ...] = ("/**",)  # how a doc comment starts, for the quality corpus
    # Nodes that end with the comment above the definition after them (Kotlin's import list).
    comment_holders: frozenset[str] = frozenset()
    # The name node of a definition that keeps its name neither in a ``name`` field nor in a child
    # of the name types (a Kotlin property's is inside its variable declaration), else None.
    special_name: Callable[[Any], Any] = no_node
    # Likewise the body of a definition that keeps it below a child (R's ``f <- function() {}``).
    special_body: Callable[[Any], Any] = no_node

    # -- definitions ----------------------------------------------------------------------

    def kind(self, data: bytes, node: Any) -> str | None:
        """The node's kind if it is a definition, else None."""
        kind = self.kinds.get(node.type)
        return None if kind is None else self.refine(data, node, kind)

    def is_definition(self, data: bytes, node: Any) -> bool:
        return self.kind(data, node) is not None

    def name_node(self, node: Any) -> Any:
        named = self.special_name(node) or node.child_by_field_name("name")
        if named is not None:
            return named
        return next((c for c in node.named_children if c.type in self.name_types), None)

    def definition_name(self, data: bytes, node: Any) -> str | None:
        named = self.name_node(node)
        if named is None:
            return None
        return scope_component(node_text(data, named))

    def body(self, node: Any) -> Any:
        """The node holding a definition's members or statements: its ``body`` field, else its
        first child of a body type."""
        found = self.special_body(node) or node.child_by_field_name("body")
        if found is not None:
            return found
        return next((c for c in node.named_children if c.type in self.bodies), None)

    def container_body(self, node: Any) -> Any:
        return self.body(node) if node.type in self.containers else None

    def describe(self, data: bytes, node: Any) -> tuple[str, str | None, Any]:
        """(node type, name for the scope, body of members or None), as grammar.describe."""
        return node.type, self.definition_name(data, node), self.container_body(node)

    # -- imports ------------------------------------------------------------------------

    def imports(self, data: bytes, node: Any) -> list[ImportForm]:
        return self.read_imports(data, node) if node.type in self.import_types else []

    def import_paths(self, data: bytes, node: Any) -> list[str]:
        """What a module-level statement imports, as the leaf facts record it."""
        return list(dict.fromkeys(form.path for form in self.imports(data, node) if form.path))
