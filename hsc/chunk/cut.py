"""Cutting source code along its syntax tree into atoms for :class:`~hsc.chunk.packing.Packer`.

A module or class body gives one unit per definition (with the comments and
attributes right above it) and runs of statements between them; a unit too
big for one leaf is opened: a container into its header and members, anything
else into its children, down to lines and tokens. What counts as a definition,
a container or a body in each grammar is in ``hsc.chunk.grammar``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hsc.chunk.grammar import (
    BODY_TYPES,
    COMMENT_TYPES,
    IMPLEMENTATION_TYPES,
    LEADING_TYPES,
    SIGNATURE_TYPES,
    describe,
    documents_assignment,
    first_named_index,
    is_definition,
    is_docstring,
    overload_name,
)
from hsc.chunk.packing import Atom, Packer, Piece
from hsc.chunk.tokens import TokenCounter
from hsc.params import Parameters


@dataclass(slots=True)
class Item:
    """A child node and the interval it owns among its siblings."""

    node: Any
    lo: int
    hi: int
    is_definition: bool = False


class SyntaxCutter(Packer):
    """Cuts one parsed file into pieces along its syntax tree."""

    def __init__(
        self,
        data: bytes,
        params: Parameters,
        counter: TokenCounter,
        language: str = "",
        file_type: str = "",
        package: str = "",
    ) -> None:
        super().__init__(data, params, counter)
        self.language = language  # the grammar.py functions answer from its own tables when it has some
        # The top-level type the file's own scope names already (java_class_scopes 'once'), or "",
        # and the scope of the file's own statements then (its folders: the package they declare),
        # so that they stay apart from the type's pieces, which share the file's scope.
        self.file_type = file_type
        self.package = package
        self.traits = params.scope_names == "language"  # a Rust impl names its trait too
        self.attribute_docstrings = language == "python" and params.attribute_docstrings == "joined"
        # Overload signatures are TypeScript's (JavaScript's grammar has none).
        self.overloads = language in ("typescript", "tsx") and params.overload_signatures == "joined"

    def intervals(self, children: list[Any], lo: int, hi: int) -> list[tuple[Any, int, int]]:
        """Give each child the bytes from its start to the next child's start,
        the first from ``lo`` and the last up to ``hi``; empty ones are dropped."""
        spans: list[tuple[Any, int, int]] = []
        cut = lo
        for child, following in zip(children, children[1:]):
            end = following.start_byte
            if end > hi:
                end = hi
            if end > cut:
                spans.append((child, cut, end))
                cut = end
        if children and hi > cut:
            spans.append((children[-1], cut, hi))
        return spans

    def code_atoms(self, node: Any, lo: int, hi: int) -> list[Atom]:
        """Cut a node (clipped to ``lo..hi``) into atoms that fit, descending
        into the children of anything too big."""
        atoms: list[Atom] = []
        stack: list[tuple[Any, int, int, str | None]] = [(node, lo, hi, None)]
        while stack:
            current, start, end, label = stack.pop()
            tokens = self.measure(start, end)
            if tokens >= 0:
                atoms.append(Atom(start, end, label or current.type, current, tokens))
                continue
            current_type = current.type  # each read of a node's attribute builds a new object
            children = current.children
            if not children:
                atoms.extend(self.line_atoms(start, end, label or current_type))
                continue
            # Statements of a body are labelled as themselves; the parts of one
            # statement carry that statement's type.
            own_labels = label is None or current_type in BODY_TYPES
            for item in reversed(self.joined_items(children, start, end)):
                child = item.node
                child_label = (child.type if child.is_named else current_type) if own_labels else label
                stack.append((child, item.lo, item.hi, child_label))
        return atoms

    # --------------------------------------------------- modules and class bodies

    def joined_items(self, children: list[Any], lo: int, hi: int) -> list[Item]:
        """Intervals of the children with punctuation and same-line comments
        joined to what precedes them, so no cut falls between a statement
        and its ``;``, ``)`` or trailing comment (nor, in Python, between an
        assignment and the docstring below it: attribute_docstrings)."""
        items: list[Item] = []
        for node, start, end in self.intervals(children, lo, hi):
            if items and (
                not node.is_named
                or (node.type in COMMENT_TYPES and self._same_line(items[-1], node))
                or (self.attribute_docstrings and documents_assignment(items[-1].node, node))
            ):
                items[-1].hi = end
            else:
                items.append(Item(node, start, end))
        return items

    def container_items(self, children: list[Any], lo: int, hi: int) -> list[Item]:
        """Joined items of a module's or class body's children, with comments
        and attributes directly above a definition joined to it."""
        items: list[Item] = []
        leading: list[Item] = []  # comments waiting to see what follows them
        for item in self.joined_items(children, lo, hi):
            node = item.node
            if node.type in LEADING_TYPES:
                if leading and not self._adjacent(leading[-1], node):
                    items.extend(leading)
                    leading.clear()
                leading.append(item)
                continue
            if is_definition(self.data, node, self.language):
                item.is_definition = True
                if leading and self._adjacent(leading[-1], node):
                    item.lo = leading[0].lo
                    leading.clear()
            items.extend(leading)
            leading.clear()
            items.append(item)
        items.extend(leading)
        return self.join_overloads(items) if self.overloads else items

    def join_overloads(self, items: list[Item]) -> list[Item]:
        """A function's or method's overload signatures (and the comments among them) joined to the
        implementation below them: one definition, named by it (overload_signatures='joined')."""
        joined: list[Item] = []
        for item in items:
            name = overload_name(item.node, IMPLEMENTATION_TYPES) if item.is_definition else None
            start = len(joined)
            while name is not None and start > 0:
                previous = joined[start - 1].node
                if previous.type not in COMMENT_TYPES and overload_name(previous, SIGNATURE_TYPES) != name:
                    break
                start -= 1
            # Comments that open the run belong to it only when no blank line parts them from it.
            while start < len(joined) and joined[start].node.type in COMMENT_TYPES:
                following = joined[start + 1].node if start + 1 < len(joined) else item.node
                if self._adjacent(joined[start], following):
                    break
                start += 1
            if any(overload_name(other.node, SIGNATURE_TYPES) for other in joined[start:]):
                item.lo = joined[start].lo
                del joined[start:]
            joined.append(item)
        return joined

    def _last_line(self, item: Item) -> int:
        end = self.trim(item.lo, item.hi)[1]
        return self.line_of(max(item.lo, end - 1))

    def _same_line(self, previous: Item, node: Any) -> bool:
        return self._last_line(previous) == self.line_of(node.start_byte)

    def _adjacent(self, previous: Item, node: Any) -> bool:
        """No blank line between ``previous`` and ``node``."""
        return self.line_of(node.start_byte) - self._last_line(previous) <= 1

    def container_events(self, children: list[Any], lo: int, hi: int) -> Iterator[Atom | Item]:
        """Atoms of statements and definition items, in order. A statement
        too big for one leaf is opened up, so definitions nested in a
        module-level ``if`` or ``#ifdef`` still get their own units."""
        stack: list[tuple[Item, str | None]] = [
            (item, None) for item in reversed(self.container_items(children, lo, hi))
        ]
        while stack:
            item, label = stack.pop()
            node = item.node
            if item.is_definition:
                yield item
                continue
            own_label = label or node.type
            tokens = self.measure(item.lo, item.hi)
            if tokens >= 0:
                yield Atom(item.lo, item.hi, own_label, None, tokens)
            elif node.child_count:
                inner = self.container_items(node.children, item.lo, item.hi)
                stack.extend((child, own_label) for child in reversed(inner))
            else:
                yield from self.line_atoms(item.lo, item.hi, own_label)

    def container_pieces(
        self, children: list[Any], lo: int, hi: int, scope: str, group: tuple[int, ...]
    ) -> list[Piece]:
        """Pieces of a module or class body: one unit per definition, runs of
        statements between them packed up to the maximum."""
        pieces: list[Piece] = []
        run: list[Atom] = []
        statements = self.package if self.package and not group else scope
        for event in self.container_events(children, lo, hi):
            if isinstance(event, Atom):
                run.append(event)
                continue
            pieces.extend(self.pack(run, statements, group, statements=True))
            run = []
            pieces.extend(self.definition_pieces(event, scope, group))
        pieces.extend(self.pack(run, statements, group, statements=True))
        return pieces

    def definition_pieces(self, item: Item, parent_scope: str, parent_group: tuple[int, ...]) -> list[Piece]:
        node_type, name, body = describe(self.data, item.node, self.language, self.traits)
        named_by_file = name == self.file_type and not parent_group  # at the top level only
        scope = f"{parent_scope}.{name}" if name and not named_by_file else parent_scope
        tokens = self.measure(item.lo, item.hi)
        if tokens >= 0:
            start, end = self.trim(item.lo, item.hi)
            return [Piece(start, end, scope, node_type, tokens, parent_group)]
        group = (*parent_group, item.node.start_byte)
        members = self.members(body) if body is not None else None
        if members:
            cut = max(item.lo, members[0].start_byte)
            header = self.pack(self.code_atoms(item.node, item.lo, cut), scope, group, first_type=node_type)
            return header + self.container_pieces(members, cut, item.hi, scope, group)
        return self.pack(self.code_atoms(item.node, item.lo, item.hi), scope, group, first_type=node_type)

    def members(self, body: Any) -> list[Any]:
        """The children of a container's body from its first member on: after
        the opening brace and a Python docstring, with the comments right
        before the first member pulled in."""
        children = body.children
        first = None
        for index, child in enumerate(children):
            if not child.is_named or child.type in LEADING_TYPES:
                continue
            if index == first_named_index(children) and is_docstring(child):
                continue
            first = index
            break
        if first is None:
            return []
        start = first
        while start > 0 and children[start - 1].type in LEADING_TYPES and self._own_line(children[start - 1]):
            start -= 1
        members = list(children[start:])
        if start == 0 or all(not child.is_named for child in children[:start]):
            # Ruby keeps comments above the first method outside the class body.
            sibling = body.prev_sibling
            while sibling is not None and sibling.type in COMMENT_TYPES and self._own_line(sibling):
                members.insert(0, sibling)
                sibling = sibling.prev_sibling
        return members

    def _own_line(self, node: Any) -> bool:
        """The node starts a line (it is not a trailing comment of what precedes it)."""
        previous = node.prev_sibling
        return previous is None or self.line_of(node.start_byte) > self.line_of(max(0, previous.end_byte - 1))

    def open_atom(self, atom: Atom) -> list[Atom] | None:
        """The atom cut one level finer (its children, else its lines), or None if it cannot be."""
        node, lo, hi = atom.node, atom.lo, atom.hi
        while node is not None and node.child_count:
            items = [
                item for item in self.joined_items(node.children, lo, hi) if self.count(item.lo, item.hi)
            ]
            if len(items) > 1:
                own_labels = node.type in BODY_TYPES or node.type == atom.label
                return [
                    Atom(
                        item.lo,
                        item.hi,
                        item.node.type if own_labels and item.node.is_named else atom.label,
                        item.node,
                    )
                    for item in items
                ]
            if not items:
                return None
            node, lo, hi = items[0].node, items[0].lo, items[0].hi
        lines = self.line_atoms(lo, hi, atom.label)
        return lines if len(lines) > 1 else None
