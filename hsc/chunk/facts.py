"""What a file's syntax tree says about its code, read once while it is cut.

For each definition: kind, name, qualified scope, signature (the header up to
the body, as written, whitespace collapsed), the first sentence of its doc
(a docstring, or the doc comment above it found through the grammar's comment
nodes) and its lines. For each leaf: what it imports, the names it defines
and the identifiers it uses. The digest summariser, lexical search and a
leaf's context header read these instead of reading the code again.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from functools import lru_cache
from operator import attrgetter
from typing import Any

from tree_sitter import Query, QueryCursor
from tree_sitter_language_pack import get_language

from hsc.chunk.doctext import LICENCE, clean_signature, comment_lines, doc_sentence
from hsc.chunk.grammar import (
    ANNOTATION_TYPES,
    BODY_TYPES,
    COMMENT_HOLDERS,
    COMMENT_TYPES,
    CONTAINER_TYPES,
    DEFINITION_KINDS,
    DEFINITION_TYPES,
    DESCEND_SUFFIXES,
    IDENTIFIER_TYPES,
    IMPLEMENTATION_TYPES,
    LEADING_TYPES,
    LEAF_STATEMENTS,
    SCRIPT_LANGUAGES,
    SIGNATURE_TYPES,
    TYPE_KINDS,
    WRAPPER_TYPES,
    bound_names,
    container_body,
    describe,
    function_value,
    go_type_kind,
    holds_functions,
    iife_body,
    import_names,
    is_definition,
    is_docstring,
    java_constants,
    language_node_types,
    overload_name,
    prototype_name,
    tabled_body,
    tabled_kind,
    wrapped,
)
from hsc.chunk.imports import MEMBER_FIELDS, import_bindings, member_reference
from hsc.chunk.languages import tables_for
from hsc.model import Definition, ImportBinding, Leaf, LeafFacts


def _last_row(node: Any) -> int:
    """0-based row of the node's last character (a line comment may end at the next row's start)."""
    row, column = node.end_point
    return int(row if column > 0 or row == node.start_point[0] else row - 1)


# The statements bound_function and prototype_name can say yes to (they check first).
DECLARATION_TYPES = ("lexical_declaration", "variable_declaration")
PROTOTYPE_TYPES = ("declaration", "field_declaration")


# Below the top level, visit() acts only on a node of one of these types, or on a wrapper
# (export, ambient, decorator, template) of one, which then holds it below itself: a definition
# (is_definition, bound_function), a C or C++ prototype, a Java field. So a subtree holding
# none of them needs no visit; the query below finds them in C, with the identifiers.
DEFINING_TYPES = DEFINITION_TYPES | {
    "assignment_expression",  # JavaScript: `X.y = function ...` (grammar.assigned_name)
    "pair",  # a function-valued member of an object literal
    "lexical_declaration",
    "variable_declaration",
    "public_field_definition",
    "field_definition",
    "type_definition",
}
LANGUAGE_DEFINING_TYPES = {"c": PROTOTYPE_TYPES, "cpp": PROTOTYPE_TYPES, "java": ("field_declaration",)}


@lru_cache(maxsize=32)
def names_query(language: str) -> Query | None:
    """Identifiers (capture ``name``), nodes of the defining types (``defining``) and member
    expressions ``a.b`` (``member``, hsc.chunk.imports.MEMBER_FIELDS), in one pass."""
    grammar = get_language(language)  # type: ignore[arg-type]

    def alternation(kinds: Iterable[str], capture: str) -> str:
        present = [kind for kind in kinds if grammar.id_for_node_kind(kind, True)]
        return f"[{' '.join(f'({kind})' for kind in present)}] @{capture}" if present else ""

    identifiers, definitions = language_node_types(language)  # of a language in hsc.chunk.languages
    defining = sorted(DEFINING_TYPES.union(LANGUAGE_DEFINING_TYPES.get(language, ()), definitions))
    members = alternation(MEMBER_FIELDS.get(language, {}), "member")
    names = alternation(identifiers or IDENTIFIER_TYPES, "name")
    source = f"{names} {alternation(defining, 'defining')} {members}".strip()
    return Query(grammar, source) if source else None


class FactReader:
    """Reads one parsed file's definitions and per-leaf facts."""

    def __init__(
        self,
        data: bytes,
        language: str,
        module_scope: str,
        traits: bool = False,
        overloads: bool = False,
        file_type: str = "",
    ) -> None:
        self.data = data
        # The top-level type the file's own scope names already (java_class_scopes 'once'), or "".
        self.file_type = file_type
        self.traits = traits  # scope_names "language": a Rust impl names its trait too
        # overload_signatures "joined" (TypeScript): the doc above the first signature is the function's
        self.overloads = overloads
        self.language = language
        self.module_scope = module_scope
        self.definitions: list[Definition] = []
        self._defined_at: list[tuple[int, str]] = []  # (byte, name) of definitions and module variables
        self._imports_at: list[tuple[int, str]] = []
        self.bindings: list[ImportBinding] = []  # what each module-level import binds, in order
        self._members: list[Any] = []
        self.declares_prototypes = language in ("c", "cpp")  # the only ones prototype_name reads
        self.namespaces_hold_imports = tables_for(language) is not None
        self._identifiers: list[Any] = []
        self._defining_starts: list[int] = []  # sorted start bytes of nodes of the defining types

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def read(self, root: Any, leaves: list[Leaf]) -> tuple[list[Definition], list[LeafFacts]]:
        query = names_query(self.language)
        if query is not None:
            captures = QueryCursor(query).captures(root)
            self._identifiers = captures.get("name", [])
            self._members = captures.get("member", [])
            self._defining_starts = sorted(node.start_byte for node in captures.get("defining", ()))
        overview = self.overview(root)
        if overview:
            self.definitions.append(overview)
        self.visit(root, self.module_scope, "", top=True)
        self.definitions.sort(key=lambda definition: definition.start_line)
        return self.definitions, self.leaf_facts(leaves)

    # -- definitions ------------------------------------------------------------------

    def visit(self, node: Any, scope: str, parent_kind: str, top: bool) -> None:
        for child in node.named_children:
            child_type = child.type
            if child_type in COMMENT_TYPES:
                continue
            if is_definition(self.data, child, self.language) or (
                child_type in DECLARATION_TYPES and self.bound_function(child)
            ):
                self.definition(child, scope, parent_kind)
                continue
            if self.declares_prototypes and child_type in PROTOTYPE_TYPES:
                prototype = prototype_name(self.data, child, self.language)
                if prototype is not None:
                    kind = "method" if parent_kind in TYPE_KINDS else "function"
                    self.definitions.append(self._made(child, scope, kind, prototype))
                    continue
            if top:
                self.module_statement(child)
            elif self.language == "java" and child_type == "field_declaration":
                self._defined_at.extend((child.start_byte, name) for name in java_constants(self.data, child))
            if child_type == "expression_statement" and self.language in SCRIPT_LANGUAGES:
                inside = iife_body(child)  # the module pattern: its definitions are the module's
                if inside is not None and self.may_define(inside):
                    self.visit(inside, scope, parent_kind, top)
                continue
            if child_type in LEAF_STATEMENTS:
                continue
            if (child_type.endswith(DESCEND_SUFFIXES) or child_type.startswith("preproc_")) and (
                top or self.may_define(child)
            ):
                self.visit(child, scope, parent_kind, top)

    def may_define(self, node: Any) -> bool:
        """Whether a node of a defining type starts within ``node`` (see DEFINING_TYPES)."""
        starts = self._defining_starts
        index = bisect_left(starts, node.start_byte)
        return index < len(starts) and starts[index] <= node.end_byte

    def definition(self, outer: Any, scope: str, parent_kind: str) -> None:
        _node_type, name, members = describe(self.data, outer, self.language, self.traits)
        if not name:
            return
        inner, inner_type = outer, outer.type  # each .type read makes a new string: read once
        while inner_type in WRAPPER_TYPES or inner_type == "expression_statement":
            inner = wrapped(inner)
            if inner is None:
                return
            inner_type = inner.type
        kind = DEFINITION_KINDS.get(inner_type, "function" if "function" in inner_type else "definition")
        if inner_type == "type_declaration":
            kind = go_type_kind(inner)
        kind = tabled_kind(self.data, inner, self.language, kind)
        if kind == "function" and parent_kind in TYPE_KINDS:
            kind = "method"
        if inner_type == "method_declaration" and self.language == "go":
            kind = "method"
        if members is not None and members.type == "object":  # an object literal holding functions
            kind = "object"
        elif inner_type == "assignment_expression" and members is not None:
            kind = "class"
        body = self.body(inner, inner_type)
        start = inner if outer.type == "decorated_definition" else outer
        end = body.start_byte if body is not None else outer.end_byte
        if body is not None and body.type == "interface_type":
            end = next((c.start_byte for c in body.children if c.type == "{"), end)
        signature = self.header(start, self.signature_start(start), end)
        qualified = f"{scope}.{name}" if scope else name
        if name == self.file_type and not parent_kind:  # a top-level type named by its file: once
            qualified = scope
        short_name = name.rsplit(".", 1)[-1]
        doc = self.docstring(body) or self.comment_above(outer)
        if not doc and self.overloads:
            doc = self.overload_doc(outer)
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
        # A namespace's body is module level: C# ``using`` and PHP ``use`` may stand in it.
        if inside is not None and kind == "namespace" and self.namespaces_hold_imports:
            self.visit(inside, qualified, kind, top=True)
        elif inside is not None and self.may_define(inside):
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

    def bound_function(self, node: Any) -> bool:
        """``const f = (( ... ) => ...) as F``: a function value behind parentheses or a type assertion
        (the cutter keeps such a statement whole; the facts still name the function)."""
        if node.type not in DECLARATION_TYPES:
            return False
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        return (
            len(declarators) == 1 and function_value(declarators[0].child_by_field_name("value")) is not None
        )

    def body(self, inner: Any, inner_type: str) -> Any:
        tabled, found = tabled_body(inner, self.language)
        if tabled:
            return found
        if inner_type in CONTAINER_TYPES:
            found = container_body(inner)
            if found is not None:
                return found
        if inner_type in ("lexical_declaration", "variable_declaration", "assignment_expression", "pair"):
            if inner_type == "assignment_expression":
                value = inner.child_by_field_name("right")
            elif inner_type == "pair":
                value = inner.child_by_field_name("value")
            else:
                declarator = next((c for c in inner.named_children if c.type == "variable_declarator"), None)
                value = declarator.child_by_field_name("value") if declarator is not None else None
            if holds_functions(value):
                return value
            value = function_value(value)
            return value.child_by_field_name("body") if value is not None else None
        if inner_type in ("type_alias_declaration", "type_item"):
            value = inner.child_by_field_name("value") or inner.child_by_field_name("type")
            short = value is not None and len(" ".join(self.text(inner).split())) <= 120
            return None if short else value
        if inner_type in ("public_field_definition", "field_definition"):
            value = inner.child_by_field_name("value")
            return value.child_by_field_name("body") if value is not None else None
        return inner.child_by_field_name("body")

    def header(self, node: Any, start: int, end: int) -> str:
        """The text from ``start`` to ``end`` without the comments the node holds there, cleaned."""
        parts = []
        for child in node.children:
            if child.type in COMMENT_TYPES and start <= child.start_byte < end:
                parts.append(self.data[start : child.start_byte])
                start = child.end_byte
        parts.append(self.data[start:end])
        return clean_signature(b" ".join(parts).decode("utf-8", "replace"))

    def signature_start(self, node: Any) -> int:
        """Where the header starts as a reader would quote it: past decorators,
        annotations and comments that the node itself holds."""
        for child in node.children:
            child_type = child.type
            if child_type in ANNOTATION_TYPES or child_type in COMMENT_TYPES:
                continue
            if child_type == "modifiers":
                for modifier in child.children:
                    if modifier.type not in ANNOTATION_TYPES and modifier.type not in COMMENT_TYPES:
                        return int(modifier.start_byte)
                continue
            return int(child.start_byte)
        return int(node.start_byte)

    def docstring(self, body: Any) -> str:
        """First sentence of a Python docstring opening ``body``."""
        if self.language != "python" or body is None:
            return ""
        # The first named child that is not a comment, without making a node of every statement.
        for index in range(body.named_child_count):
            first = body.named_child(index)
            if first.type not in COMMENT_TYPES:
                return self.string_doc(first) if is_docstring(first) else ""
        return ""

    def string_doc(self, node: Any) -> str:
        while node.type in ("expression_statement", "concatenated_string") and node.named_child_count:
            node = node.named_children[0]
        parts = [c for c in node.children if c.type not in ("string_start", "string_end")]
        if not parts:
            return ""
        text = self.data[parts[0].start_byte : parts[-1].end_byte].decode("utf-8", "replace")
        return doc_sentence(line.strip() for line in text.splitlines())  # stops at the first paragraph

    def comment_above(self, node: Any) -> str:
        """The doc comment directly above ``node`` (no blank line between), past attributes."""
        previous = node.prev_sibling
        if previous is None:
            parent = node.parent
            if parent is not None and parent.type in BODY_TYPES:
                previous = parent.prev_sibling  # Ruby keeps the first method's comment outside the body
        while previous is not None and previous.type in COMMENT_HOLDERS and previous.child_count:
            previous = previous.children[-1]  # Kotlin keeps the comment after the imports in them
        if previous is None or previous.type not in LEADING_TYPES:
            return ""  # most definitions: neither a comment nor an attribute above
        line = node.start_point[0]
        while previous is not None and previous.type in ANNOTATION_TYPES:
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
        lines = [text for comment in reversed(comments) for text in comment_lines(self.text(comment))]
        return doc_sentence(lines)

    def overload_doc(self, node: Any) -> str:
        """The doc comment above the first of the overload signatures right above the implementation
        ``node`` (TypeScript documents an overloaded function there as often as above its body);
        "" when ``node`` is no implementation or has no signature above it."""
        name = overload_name(node, IMPLEMENTATION_TYPES)
        first = None
        previous = node.prev_sibling
        while name is not None and previous is not None:
            if overload_name(previous, SIGNATURE_TYPES) == name:
                first = previous
            elif previous.is_named and previous.type not in COMMENT_TYPES:
                break  # a class body's `;` after a method signature is passed over
            previous = previous.prev_sibling
        return self.comment_above(first) if first is not None else ""

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
        lines = [text for comment in comments for text in comment_lines(self.text(comment))]
        if LICENCE.search(" ".join(lines)):
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
        names = import_names(self.data, node, self.language)
        for name in names:
            self._imports_at.append((node.start_byte, name))
        if names:
            self.bindings += import_bindings(self.data, node, self.language)
        for name in bound_names(self.data, node):
            self._defined_at.append((node.start_byte, name))

    def leaf_facts(self, leaves: list[Leaf]) -> list[LeafFacts]:
        # A position belongs to the last leaf starting at or before it, else to the first leaf:
        # bisecting on the starts with the first made -1 gives both in one step.
        bounds = [-1, *(leaf.start_byte for leaf in leaves[1:])]
        imports: list[dict[str, None]] = [{} for _ in leaves]
        defines: list[dict[str, None]] = [{} for _ in leaves]
        for position, name in self._imports_at:
            imports[bisect_right(bounds, position) - 1][name] = None
        for position, name in self._defined_at:
            defines[bisect_right(bounds, position) - 1][name] = None
        # The identifiers in document order: each leaf's are then one slice of them.
        starts, names = identifier_names(self.data, self._identifiers)
        cuts = [0, *(bisect_left(starts, bound) for bound in bounds[1:]), len(names)]
        references: list[set[str]] = [set() for _ in leaves]
        for node in self._members:
            reference = member_reference(self.data, node, self.language)
            if reference is not None:
                references[bisect_right(bounds, node.start_byte) - 1].add(reference)
        return [
            LeafFacts(
                tuple(imports[i]),
                tuple(defines[i]),
                tuple(sorted(set(names[cuts[i] : cuts[i + 1]]).difference(defines[i]))),
                tuple(sorted(references[i])),
            )
            for i in range(len(leaves))
        ]


_start_byte = attrgetter("start_byte")


def identifier_names(data: bytes, nodes: list[Any]) -> tuple[list[int], list[str]]:
    """Start bytes and texts of identifier nodes, sorted by start (captures come in no order)."""
    nodes = sorted(nodes, key=_start_byte)
    starts = [node.start_byte for node in nodes]
    spans = map(slice, starts, [node.end_byte for node in nodes])
    if data.isascii():  # most files: a byte offset is a character offset, no decoding per name
        return starts, list(map(data.decode("ascii").__getitem__, spans))
    raw = list(map(data.__getitem__, spans))
    text = {name: name.decode("utf-8", "replace") for name in set(raw)}
    return starts, list(map(text.__getitem__, raw))
