"""What a file's syntax tree says about its code, read once while it is cut.

For each definition: kind, name, qualified scope, signature (the header up to
the body, as written, whitespace collapsed), the first sentence of its doc
(a docstring, or the doc comment above it found through the grammar's comment
nodes) and its lines. For each leaf: what it imports, the names it defines
and the identifiers it uses. The digest summariser, lexical search and a
leaf's context header read these instead of reading the code again.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import Any

from tree_sitter import Query, QueryCursor
from tree_sitter_language_pack import get_language

from hsc.grammar import (
    BODY_TYPES,
    COMMENT_TYPES,
    CONTAINER_TYPES,
    FUNCTION_VALUE_TYPES,
    WRAPPER_TYPES,
    container_body,
    describe,
    first_named_index,
    is_definition,
    is_docstring,
    wrapped,
)
from hsc.model import Definition, Leaf, LeafFacts

# The kind a reader calls each definition node (before "function" becomes "method" inside a type).
_KINDS = {
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
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "impl"})
# Nodes that may hold definitions below them without being one: blocks of statements, conditionals.
_DESCEND_SUFFIXES = ("_statement", "_clause", "block", "body", "_list", "_specification")
_VALUE_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression"})
_ANNOTATION_TYPES = frozenset({"decorator", "attribute_item", "marker_annotation", "annotation"})
_IDENTIFIER_TYPES = (
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "constant",
    "package_identifier",
    "namespace_identifier",
)
# Comment lines that are tooling, not description; a licence is not a description either.
_DOC_NOISE = re.compile(
    r"-\*-|^!|eslint|prettier|noqa|type:\s*ignore|pylint:|@ts-|nolint|go:build|go:generate|\+build|"
    r"frozen_string_literal|rubocop:|^\s*(?:todo|fixme|xxx)\b",
    re.IGNORECASE,
)
_LICENCE = re.compile(r"copyright|licen[cs]e|spdx-", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_COMMENT_MARKERS = ("///", "//!", "//", "/**", "/*", "*/", "*", "#")


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word end to at most ``limit`` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;") + " …"


def first_sentence(text: str, limit: int = 220) -> str:
    text = " ".join(text.replace("``", "`").split())
    # A sentence ends at . ! or ? before a capital or an opening mark, so "e.g. a list" stays whole.
    match = _SENTENCE_BREAK.search(text)
    return shorten(text[: match.start()] if match else text, limit)


def doc_sentence(lines: list[str]) -> str:
    """First sentence of the first paragraph of doc lines, skipping tooling
    pragmas; a tag (``@param``) or a heading ends the description."""
    paragraph: list[str] = []
    for text in lines:
        if text.startswith("@") or (text.startswith("# ") and paragraph):
            break
        if not text or _DOC_NOISE.search(text):
            if paragraph:
                break
            continue
        paragraph.append(text)
    return first_sentence(" ".join(paragraph)) if paragraph else ""


def _comment_lines(text: str) -> list[str]:
    """The prose of a comment node, one entry per line, without comment markers."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        for marker in _COMMENT_MARKERS:
            if stripped.startswith(marker):
                stripped = stripped[len(marker) :]
                break
        if stripped.endswith("*/"):
            stripped = stripped[:-2]
        lines.append(stripped.lstrip("/*!# ").rstrip())
    return lines


def _clean_signature(text: str) -> str:
    text = " ".join(text.split())
    text = text.replace("( ", "(").replace("[ ", "[").replace(", )", ")").replace(",)", ")")
    text = text.replace(" )", ")").replace(", ]", "]").replace(" ]", "]")
    return text.rstrip(" {:;=").rstrip()


def _function_value(value: Any) -> Any:
    """The function a declarator's value is, seen through parentheses and type assertions, or None."""
    while value is not None and value.type in _VALUE_WRAPPERS and value.named_child_count:
        value = value.named_children[0]
    return value if value is not None and value.type in FUNCTION_VALUE_TYPES else None


def _last_row(node: Any) -> int:
    """0-based row of the node's last character (a line comment may end at the next row's start)."""
    row, column = node.end_point
    return int(row if column > 0 or row == node.start_point[0] else row - 1)


@lru_cache(maxsize=32)
def _identifier_query(language: str) -> Query | None:
    grammar = get_language(language)  # type: ignore[arg-type]
    kinds = [kind for kind in _IDENTIFIER_TYPES if grammar.id_for_node_kind(kind, True)]
    if not kinds:
        return None
    return Query(grammar, " ".join(f"({kind}) @name" for kind in kinds))


class FactReader:
    """Reads one parsed file's definitions and per-leaf facts."""

    def __init__(self, data: bytes, language: str, module_scope: str) -> None:
        self.data = data
        self.language = language
        self.module_scope = module_scope
        self.definitions: list[Definition] = []
        self._defined_at: list[tuple[int, str]] = []  # (byte, name) of definitions and module variables
        self._imports_at: list[tuple[int, str]] = []

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def read(self, root: Any, leaves: list[Leaf]) -> tuple[list[Definition], list[LeafFacts]]:
        overview = self.overview(root)
        if overview:
            self.definitions.append(overview)
        self.visit(root, self.module_scope, "", top=True)
        self.definitions.sort(key=lambda definition: definition.start_line)
        return self.definitions, self.leaf_facts(root, leaves)

    # -- definitions ------------------------------------------------------------------

    def visit(self, node: Any, scope: str, parent_kind: str, top: bool) -> None:
        for child in node.named_children:
            child_type = child.type
            if child_type in COMMENT_TYPES:
                continue
            if is_definition(self.data, child) or self.bound_function(child):
                self.definition(child, scope, parent_kind)
                continue
            prototype = self.prototype(child, parent_kind)
            if prototype is not None:
                self.definitions.append(self._made(child, scope, *prototype))
                continue
            if top:
                self.module_statement(child)
            elif self.language == "java" and child_type == "field_declaration":
                self.java_constant(child)
            if child_type.endswith(_DESCEND_SUFFIXES) or child_type.startswith("preproc_"):
                self.visit(child, scope, parent_kind, top)

    def definition(self, outer: Any, scope: str, parent_kind: str) -> None:
        _node_type, name, members = describe(self.data, outer)
        inner = outer
        while inner is not None and (inner.type in WRAPPER_TYPES or inner.type == "expression_statement"):
            inner = wrapped(inner)
        if inner is None or not name:
            return
        kind = _KINDS.get(inner.type, "function" if "function" in inner.type else "definition")
        if inner.type == "type_declaration":
            kind = self.go_type_kind(inner)
        if kind == "function" and parent_kind in TYPE_KINDS:
            kind = "method"
        if inner.type == "method_declaration" and self.language == "go":
            kind = "method"
        body = self.body(inner)
        start = inner if outer.type == "decorated_definition" else outer
        end = body.start_byte if body is not None else outer.end_byte
        if body is not None and body.type == "interface_type":
            end = next((c.start_byte for c in body.children if c.type == "{"), end)
        signature = self.header(start, self.signature_start(start), end)
        qualified = f"{scope}.{name}" if scope else name
        short_name = name.rsplit(".", 1)[-1]
        doc = self.docstring(body) or self.comment_above(outer)
        self.definitions.append(
            Definition(
                kind,
                short_name,
                qualified,
                signature,
                doc,
                outer.start_point[0] + 1,
                outer.end_point[0] + 1,
            )
        )
        self._defined_at.append((outer.start_byte, short_name))
        inside = members if members is not None else body
        if inside is not None:
            self.visit(inside, qualified, kind, top=False)

    def _made(self, node: Any, scope: str, kind: str, name: str) -> Definition:
        self._defined_at.append((node.start_byte, name))
        return Definition(
            kind,
            name,
            f"{scope}.{name}" if scope else name,
            self.header(node, self.signature_start(node), node.end_byte),
            self.comment_above(node),
            node.start_point[0] + 1,
            node.end_point[0] + 1,
        )

    def prototype(self, node: Any, parent_kind: str) -> tuple[str, str] | None:
        """(kind, name) of a C/C++ function declared without a body (``int f(int);``)."""
        if node.type not in ("declaration", "field_declaration") or self.language not in ("c", "cpp"):
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
        kind = "method" if parent_kind in TYPE_KINDS else "function"
        return kind, self.text(name_node).split("::")[-1]

    def bound_function(self, node: Any) -> bool:
        """``const f = (( ... ) => ...) as F``: a function value behind parentheses or a type assertion
        (the cutter keeps such a statement whole; the facts still name the function)."""
        if node.type not in ("lexical_declaration", "variable_declaration"):
            return False
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        return (
            len(declarators) == 1 and _function_value(declarators[0].child_by_field_name("value")) is not None
        )

    def body(self, inner: Any) -> Any:
        if inner.type in CONTAINER_TYPES:
            found = container_body(inner)
            if found is not None:
                return found
        if inner.type in ("lexical_declaration", "variable_declaration"):
            declarator = next((c for c in inner.named_children if c.type == "variable_declarator"), None)
            value = (
                _function_value(declarator.child_by_field_name("value")) if declarator is not None else None
            )
            return value.child_by_field_name("body") if value is not None else None
        if inner.type in ("type_alias_declaration", "type_item"):
            value = inner.child_by_field_name("value") or inner.child_by_field_name("type")
            short = value is not None and len(" ".join(self.text(inner).split())) <= 120
            return None if short else value
        if inner.type in ("public_field_definition", "field_definition"):
            value = inner.child_by_field_name("value")
            return value.child_by_field_name("body") if value is not None else None
        return inner.child_by_field_name("body")

    def go_type_kind(self, node: Any) -> str:
        spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
        inner = spec.child_by_field_name("type") if spec is not None else None
        if inner is not None and inner.type == "struct_type":
            return "struct"
        if inner is not None and inner.type == "interface_type":
            return "interface"
        return "type"

    def header(self, node: Any, start: int, end: int) -> str:
        """The text from ``start`` to ``end`` without the comments the node holds there, cleaned."""
        parts = []
        for child in node.children:
            if child.type in COMMENT_TYPES and start <= child.start_byte < end:
                parts.append(self.data[start : child.start_byte])
                start = child.end_byte
        parts.append(self.data[start:end])
        return _clean_signature(b" ".join(parts).decode("utf-8", "replace"))

    def signature_start(self, node: Any) -> int:
        """Where the header starts as a reader would quote it: past decorators,
        annotations and comments that the node itself holds."""
        for child in node.children:
            if child.type in _ANNOTATION_TYPES or child.type in COMMENT_TYPES:
                continue
            if child.type == "modifiers":
                for modifier in child.children:
                    if modifier.type not in _ANNOTATION_TYPES and modifier.type not in COMMENT_TYPES:
                        return int(modifier.start_byte)
                continue
            return int(child.start_byte)
        return int(node.start_byte)

    def docstring(self, body: Any) -> str:
        """First sentence of a Python docstring opening ``body``."""
        if self.language != "python" or body is None or not body.child_count:
            return ""
        children = body.children
        index = first_named_index(children)
        if index < 0 or not is_docstring(children[index]):
            return ""
        return self.string_doc(children[index])

    def string_doc(self, node: Any) -> str:
        while node.type in ("expression_statement", "concatenated_string") and node.named_child_count:
            node = node.named_children[0]
        parts = [c for c in node.children if c.type not in ("string_start", "string_end")]
        if not parts:
            return ""
        text = self.data[parts[0].start_byte : parts[-1].end_byte].decode("utf-8", "replace")
        return doc_sentence([line.strip() for line in text.splitlines()])

    def comment_above(self, node: Any) -> str:
        """The doc comment directly above ``node`` (no blank line between), past attributes."""
        line = node.start_point[0]
        previous = node.prev_sibling
        if previous is None and node.parent is not None and node.parent.type in BODY_TYPES:
            previous = node.parent.prev_sibling  # Ruby keeps the first method's comment outside the body
        while previous is not None and previous.type in _ANNOTATION_TYPES:
            line = previous.start_point[0]
            previous = previous.prev_sibling
        comments: list[Any] = []
        while previous is not None and previous.type in COMMENT_TYPES and _last_row(previous) >= line - 1:
            if _last_row(previous) == line and comments == []:
                break  # a trailing comment of the line before is not about this definition
            comments.append(previous)
            if self.text(previous).startswith("/*"):
                break
            line = previous.start_point[0]
            previous = previous.prev_sibling
        lines = [text for comment in reversed(comments) for text in _comment_lines(self.text(comment))]
        return doc_sentence(lines)

    def overview(self, root: Any) -> Definition | None:
        """The file's own description: a module docstring, or a comment block at
        its start that is neither a licence nor attached to the code below it."""
        children = [c for c in root.children if not self.text(c).startswith(("#!", "# -*-"))]
        if not children:
            return None
        first = children[0]
        if self.language == "python" and is_docstring(first):
            doc = self.string_doc(first)
            return self._file(doc, first) if doc else None
        comments = []
        for child in children:
            if child.type not in COMMENT_TYPES:
                break
            if comments and child.start_point[0] > _last_row(comments[-1]) + 1:
                break
            comments.append(child)
            if self.text(child).startswith("/*"):
                break
        if not comments:
            return None
        lines = [text for comment in comments for text in _comment_lines(self.text(comment))]
        if _LICENCE.search(" ".join(lines)):
            return None
        following = comments[-1].next_sibling
        attached = following is not None and following.start_point[0] <= _last_row(comments[-1]) + 1
        if attached and following.type not in ("package_clause", "package_declaration"):
            return None
        doc = doc_sentence(lines)
        return self._file(doc, comments[0]) if doc else None

    def _file(self, doc: str, node: Any) -> Definition:
        name = self.module_scope.rsplit(".", 1)[-1]
        return Definition(
            "file", name, self.module_scope, "", doc, node.start_point[0] + 1, node.end_point[0] + 1
        )

    # -- module statements: imports and variables -------------------------------------

    def module_statement(self, node: Any) -> None:
        node_type = node.type
        if node_type == "expression_statement" and node.named_child_count == 1:
            node = node.named_children[0]
            node_type = node.type
        for name in self.imports(node):
            self._imports_at.append((node.start_byte, name))
        for name in self.variables(node):
            self._defined_at.append((node.start_byte, name))

    def imports(self, node: Any) -> list[str]:
        node_type = node.type
        if node_type == "import_statement" and self.language == "python":
            return [
                self.text(c.child_by_field_name("name") or c) for c in node.children_by_field_name("name")
            ]
        if node_type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            name = self.text(module) if module is not None else ""
            return [name] if name and name != "__future__" else []
        if node_type in ("import_statement", "export_statement"):  # JavaScript, TypeScript
            source = node.child_by_field_name("source")
            return [self.text(source).strip("'\"`")] if source is not None else []
        if node_type == "import_declaration" and self.language == "go":
            specs = [c for c in node.named_children if c.type == "import_spec"]
            for spec_list in (c for c in node.named_children if c.type == "import_spec_list"):
                specs += [c for c in spec_list.named_children if c.type == "import_spec"]
            paths = [spec.child_by_field_name("path") for spec in specs]
            return [self.text(path).strip('"`') for path in paths if path is not None]
        if node_type == "import_declaration":  # Java
            names = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
            return [self.text(names[0])] if names else []
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
            return [self.text(argument)] if argument is not None else []
        if node_type == "extern_crate_declaration":
            name = node.child_by_field_name("name")
            return [self.text(name)] if name is not None else []
        if node_type == "preproc_include":
            path = node.child_by_field_name("path")
            return [self.text(path).strip('<>"')] if path is not None else []
        if node_type == "call" and self.language == "ruby":
            method = node.child_by_field_name("method")
            arguments = node.child_by_field_name("arguments")
            if (
                method is None
                or arguments is None
                or self.text(method) not in ("require", "require_relative")
            ):
                return []
            strings = [c for c in arguments.named_children if c.type == "string"]
            return [self.text(strings[0]).strip("'\"")] if strings else []
        return []

    def variables(self, node: Any) -> list[str]:
        """Names a module-level statement binds: constants and variables, not functions."""
        node_type = node.type
        if node_type == "assignment":  # Python, Ruby
            left = node.child_by_field_name("left")
            if left is not None and left.type in ("identifier", "constant"):
                return [self.text(left)]
            return []
        if node_type in ("lexical_declaration", "variable_declaration"):
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            names = [d.child_by_field_name("name") for d in declarators]
            return [self.text(n) for n in names if n is not None and n.type == "identifier"]
        if node_type in ("var_declaration", "const_declaration"):  # Go
            specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
            for spec_list in (c for c in node.named_children if c.type.endswith("_spec_list")):
                specs += [c for c in spec_list.named_children if c.type in ("var_spec", "const_spec")]
            return [self.text(n) for spec in specs for n in spec.children_by_field_name("name")]
        if node_type in ("const_item", "static_item", "preproc_def", "preproc_function_def"):
            name = node.child_by_field_name("name")
            return [self.text(name)] if name is not None else []
        return []

    def java_constant(self, node: Any) -> None:
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        words = self.text(modifiers).split() if modifiers is not None else []
        if "static" in words and "final" in words:
            for declarator in node.children_by_field_name("declarator"):
                name = declarator.child_by_field_name("name")
                if name is not None:
                    self._defined_at.append((node.start_byte, self.text(name)))

    # -- per leaf ----------------------------------------------------------------------

    def leaf_facts(self, root: Any, leaves: list[Leaf]) -> list[LeafFacts]:
        starts = [leaf.start_byte for leaf in leaves]
        imports: list[dict[str, None]] = [{} for _ in leaves]
        defines: list[dict[str, None]] = [{} for _ in leaves]
        uses: list[dict[bytes, None]] = [{} for _ in leaves]

        def owner(position: int) -> int:
            return max(0, bisect_right(starts, position) - 1)

        for position, name in self._imports_at:
            imports[owner(position)][name] = None
        for position, name in self._defined_at:
            defines[owner(position)][name] = None
        query = _identifier_query(self.language)
        if query is not None and leaves:
            data = self.data
            for node in QueryCursor(query).captures(root).get("name", []):
                start = node.start_byte
                uses[owner(start)][data[start : node.end_byte]] = None
        return [
            LeafFacts(
                tuple(imports[i]),
                tuple(defines[i]),
                tuple(sorted({name.decode("utf-8", "replace") for name in uses[i]} - set(defines[i]))),
            )
            for i in range(len(leaves))
        ]
