"""Stage 1b: cut one file's text into leaves.

Source code is parsed with tree-sitter and cut along its syntax tree;
markdown is cut at headings and paragraphs; anything else at blank lines.

Every cut is made on a partition of the whole file: each unit owns a
half-open byte interval, the intervals of one file tile it from its first
byte to its last, and a leaf is its interval with the surrounding whitespace
trimmed. So the leaves of a file never overlap and every non-whitespace byte
(comments, imports, decorators, stray tokens, error-recovery debris) lies in
exactly one leaf, whatever the grammar does.

Sizes are token counts of the leaf text (``TokenCounter.count``). A byte is at
least one token's worth of text, so a range of at most ``maximum`` bytes fits
without being counted, and a range of more than ``_SURELY_TOO_BIG`` bytes per
allowed token is taken as too big without being counted either; the
tokenizer only ever sees texts near leaf size.
"""

from __future__ import annotations

import itertools
import re
import threading
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tree_sitter_language_pack import get_parser

from hsc.facts import FactReader
from hsc.grammar import (
    AST_LANGUAGES,
    BODY_TYPES,
    COMMENT_TYPES,
    LEADING_TYPES,
    describe,
    first_named_index,
    is_definition,
    is_docstring,
)
from hsc.model import Definition, Leaf, LeafFacts, common_prefix
from hsc.params import Parameters
from hsc.tokens import TokenCounter

# Languages cut along a tree-sitter syntax tree; the others use chunk_fallback.
# Code averages 3-5 bytes per cl100k token; a range of more than this many
# bytes per allowed token is over the maximum in any real source file.
_SURELY_TOO_BIG = 12

_NON_SPACE = re.compile(rb"[^ \t\n\r\f\v]")
_NEWLINE = re.compile(rb"\n")
_SPACE = b" \t\n\r\f\v"


def module_name(rel_path: str) -> str:
    """Dotted module name of a file: ``inventory/pricing.py`` -> ``inventory.pricing``;
    an ``__init__.py`` names its package."""
    parts = [part for part in rel_path.replace("\\", "/").split("/") if part not in ("", ".", "..")]
    if not parts:
        return rel_path or "module"
    *directories, file_name = parts
    stem = file_name.rsplit(".", 1)[0] if "." in file_name.lstrip(".") else file_name
    if stem == "__init__" and directories:
        stem = ""
    # Leading dots (".github", ".eslintrc") would read as empty scope components.
    names = [name.lstrip(".") or name for name in [*directories, stem] if name]
    return ".".join(names)


_PARSERS = threading.local()


def parser_for(language: str) -> Any:
    """A tree-sitter parser for the language, built once per thread: building
    one costs more than parsing a small file, and a parser must not be shared
    between threads (Streamlit runs each session in its own)."""
    parsers: dict[str, Any] = _PARSERS.__dict__.setdefault("by_language", {})
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = get_parser(language)  # type: ignore[arg-type]
    return parser


@dataclass(frozen=True)
class Cut:
    """One file cut into leaves, with the facts its syntax tree gave (see ``hsc.facts``)."""

    leaves: list[Leaf]
    definitions: list[Definition]
    facts: list[LeafFacts]  # parallel to leaves
    error_lines: list[int]  # 1-based lines of syntax errors


def cut_file(source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter) -> Cut:
    """Leaves of one file in document order, the definitions and per-leaf facts
    read from the same syntax tree, and the lines of syntax errors."""
    if language in AST_LANGUAGES:
        try:
            parser_for(language)
        except Exception:  # a grammar missing from the installed pack: cut it as plain text
            language = "text"
        else:
            return _cut_ast(source, rel_path, language, params, counter)
    fallback_language = "markdown" if language == "markdown" else "text"
    leaves = chunk_fallback(source, rel_path, fallback_language, params, counter)
    return Cut(leaves, [], [LeafFacts() for _ in leaves], [])


def parse_source(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> tuple[list[Leaf], list[int]]:
    """Leaves of one file in document order, and the 1-based lines of syntax errors."""
    cut = cut_file(source, rel_path, language, params, counter)
    return cut.leaves, cut.error_lines


def construct_fine_grained_chunks_from_ast(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> tuple[list[Leaf], list[int]]:
    """Cut source code along its tree-sitter syntax tree (see the module docstring)."""
    cut = _cut_ast(source, rel_path, language, params, counter)
    return cut.leaves, cut.error_lines


def _cut_ast(source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter) -> Cut:
    data = source.encode("utf-8")
    root = parser_for(language).parse(data).root_node  # parsed once: the cut and the facts share it
    cutter = _Cutter(data, params, counter)
    scope = module_name(rel_path)
    if root.child_count:
        pieces = cutter.container_pieces(root.children, 0, len(data), scope, ())
    else:
        pieces = cutter.pack(cutter.line_atoms(0, len(data), root.type), scope, (), statements=True)
    leaves = cutter.leaves(cutter.merge_small(pieces), rel_path, language, "ast")
    definitions, facts = FactReader(data, language, scope).read(root, leaves)
    return Cut(leaves, definitions, facts, _syntax_error_lines(root))


def chunk_fallback(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> list[Leaf]:
    """Cut text without a grammar: markdown into sections at headings, then
    paragraphs; anything else into blocks separated by blank lines."""
    data = source.encode("utf-8")
    cutter = _Cutter(data, params, counter)
    scope = module_name(rel_path)
    if language == "markdown":
        pieces = cutter.markdown_pieces(scope)
        chunker = "paragraph"
    else:
        pieces = cutter.block_pieces(_blocks(data, cutter.newlines), scope, (), "lines")
        chunker = "lines"
    return cutter.leaves(cutter.merge_small(pieces), rel_path, language, chunker)


def _syntax_error_lines(root: Any, limit: int = 200) -> list[int]:
    """1-based lines of ERROR and MISSING nodes, in order, visiting only subtrees that have errors."""
    if not root.has_error:
        return []
    lines: set[int] = set()
    stack = [root]
    while stack and len(lines) < limit:
        node = stack.pop()
        if node.is_error or node.is_missing:
            lines.add(node.start_point[0] + 1)
        stack.extend(child for child in node.children if child.has_error or child.is_missing)
    if root.is_error and not lines:
        lines.add(root.start_point[0] + 1)
    return sorted(lines)


@dataclass(slots=True)
class _Atom:
    """A range that is never cut further when packing (it fits in one leaf)."""

    lo: int
    hi: int
    label: str
    node: Any = None  # the syntax node it was cut from, so a packer can still open it


@dataclass(slots=True)
class _Item:
    """A child node and the interval it owns among its siblings."""

    node: Any
    lo: int
    hi: int
    is_definition: bool = False


@dataclass(slots=True)
class _Piece:
    """A leaf before merging: trimmed byte range, labels, and the split it came from.

    ``group`` identifies the parent whose split produced the piece: the start
    bytes of the split definitions above it, outermost first.
    """

    lo: int
    hi: int
    scope: str
    node_type: str
    tokens: int
    group: tuple[int, ...]
    parts: tuple[tuple[str, str, int], ...] = ()  # (scope, node type, tokens) of merged pieces

    def components(self) -> tuple[tuple[str, str, int], ...]:
        return self.parts or ((self.scope, self.node_type, self.tokens),)


def _blocks(data: bytes, newlines: list[int]) -> list[tuple[int, int]]:
    """Byte intervals of runs of non-blank lines; blank lines go to the block before them."""
    blocks: list[tuple[int, int]] = []
    block_start = -1
    line_start = 0
    for line_end in [*newlines, len(data)]:
        blank = _NON_SPACE.search(data, line_start, line_end) is None
        if not blank and block_start < 0:
            block_start = line_start
        elif blank and block_start >= 0:
            blocks.append((block_start, line_start))
            block_start = -1
        line_start = line_end + 1
    if block_start >= 0:
        blocks.append((block_start, len(data)))
    return blocks


_ATX_HEADING = re.compile(rb"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(rb"^ {0,3}(`{3,}|~{3,})")
_UNDERLINE = re.compile(rb"^(=+|-+|~+|\^+|\*+|\++|#+|\"+)[ \t]*$")
_LIST_OR_QUOTE = re.compile(rb"^\s*(?:[-*+>]|\d+[.)])(?:\s|$)")


class _Cutter:
    """Cuts one file's bytes; caches token counts by trimmed range."""

    def __init__(self, data: bytes, params: Parameters, counter: TokenCounter) -> None:
        self.data = data
        self.counter = counter
        self.maximum = params.maximum_chunk_token_length
        self.minimum = params.minimum_chunk_token_length
        self.newlines = [match.start() for match in _NEWLINE.finditer(data)]
        self._counts: dict[tuple[int, int], int] = {}

    # ----------------------------------------------------------------- ranges

    def trim(self, lo: int, hi: int) -> tuple[int, int]:
        """The range without leading and trailing whitespace; (lo, lo) when blank."""
        match = _NON_SPACE.search(self.data, lo, hi)
        if match is None:
            return lo, lo
        start = match.start()
        end = hi
        while True:  # strip the tail in windows so a long blank run is not copied whole
            window_start = max(start, end - 256)
            kept = len(self.data[window_start:end].rstrip(_SPACE))
            if kept:
                return start, window_start + kept
            end = window_start

    def line_of(self, position: int) -> int:
        """1-based line of the byte at ``position``."""
        return bisect_left(self.newlines, position) + 1

    def text(self, lo: int, hi: int) -> str:
        return self.data[lo:hi].decode("utf-8")

    def count(self, lo: int, hi: int) -> int:
        """Tokens of the trimmed range, counted once."""
        key = self.trim(lo, hi)
        tokens = self._counts.get(key)
        if tokens is None:
            tokens = self.counter.count(self.text(*key)) if key[1] > key[0] else 0
            self._counts[key] = tokens
        return tokens

    def fits(self, lo: int, hi: int) -> bool:
        start, end = self.trim(lo, hi)
        size = end - start
        if size <= self.maximum:  # a token spans at least one byte
            return True
        if size > _SURELY_TOO_BIG * self.maximum:
            return False
        return self.count(start, end) <= self.maximum

    # ------------------------------------------------------ cutting into atoms

    def intervals(self, children: list[Any], lo: int, hi: int) -> list[_Item]:
        """Give each child the bytes from its start to the next child's start,
        the first from ``lo`` and the last up to ``hi``; empty ones are dropped."""
        items: list[_Item] = []
        cut = lo
        last = len(children) - 1
        for index, child in enumerate(children):
            start = cut
            end = hi if index == last else min(hi, max(start, children[index + 1].start_byte))
            if end > start:
                items.append(_Item(child, start, end))
            cut = end
        return items

    def line_atoms(self, lo: int, hi: int, label: str) -> list[_Atom]:
        """Cut a range that has no syntax to split along: by lines, and a line
        that is still too big by tokens."""
        atoms: list[_Atom] = []
        first = bisect_left(self.newlines, lo)
        line_start = lo
        for index in range(first, len(self.newlines) + 1):
            line_end = self.newlines[index] + 1 if index < len(self.newlines) else hi
            line_end = min(line_end, hi)
            start, end = self.trim(line_start, line_end)
            if end > start:
                if self.fits(start, end):
                    atoms.append(_Atom(line_start, line_end, label))
                else:
                    atoms.extend(self.token_atoms(start, end, label))
            if line_end >= hi:
                break
            line_start = line_end
        return atoms

    def token_atoms(self, lo: int, hi: int, label: str) -> list[_Atom]:
        """Cut one overlong line into pieces of at most ``maximum`` tokens each."""
        return [_Atom(start, end, label) for start, end in self._token_ranges(lo, hi, self.maximum)]

    def _token_ranges(self, lo: int, hi: int, budget: int) -> list[tuple[int, int]]:
        text = self.text(lo, hi)
        parts = self.counter.split(text, budget)
        if "".join(parts) != text:
            # The tokenizer could not cut on a character edge; no UTF-8
            # character is more than 4 tokens, so cut by characters instead.
            step = max(1, budget // 4)
            parts = [text[i : i + step] for i in range(0, len(text), step)]
        ranges: list[tuple[int, int]] = []
        offset = lo
        for part in parts:
            part_end = offset + len(part.encode("utf-8"))
            start, end = self.trim(offset, part_end)
            if end > start:
                if self.count(start, end) <= self.maximum or budget <= 1:
                    ranges.append((start, end))
                else:  # re-encoding a slice on its own can take more tokens than the slice had
                    ranges.extend(self._token_ranges(start, end, max(1, budget // 2)))
            offset = part_end
        return ranges

    def code_atoms(self, node: Any, lo: int, hi: int) -> list[_Atom]:
        """Cut a node (clipped to ``lo..hi``) into atoms that fit, descending
        into the children of anything too big."""
        atoms: list[_Atom] = []
        stack: list[tuple[Any, int, int, str | None]] = [(node, lo, hi, None)]
        while stack:
            current, start, end, label = stack.pop()
            if self.fits(start, end):
                atoms.append(_Atom(start, end, label or current.type, current))
                continue
            children = current.children
            if not children:
                atoms.extend(self.line_atoms(start, end, label or current.type))
                continue
            # Statements of a body are labelled as themselves; the parts of one
            # statement carry that statement's type.
            own_labels = label is None or current.type in BODY_TYPES
            for item in reversed(self.joined_items(children, start, end)):
                child = item.node
                child_label = (child.type if child.is_named else current.type) if own_labels else label
                stack.append((child, item.lo, item.hi, child_label))
        return atoms

    # --------------------------------------------------- modules and class bodies

    def joined_items(self, children: list[Any], lo: int, hi: int) -> list[_Item]:
        """Intervals of the children with punctuation and same-line comments
        joined to what precedes them, so no cut falls between a statement
        and its ``;``, ``)`` or trailing comment."""
        items: list[_Item] = []
        for item in self.intervals(children, lo, hi):
            node = item.node
            if items and (
                not node.is_named or (node.type in COMMENT_TYPES and self._same_line(items[-1], node))
            ):
                items[-1].hi = item.hi
            else:
                items.append(item)
        return items

    def container_items(self, children: list[Any], lo: int, hi: int) -> list[_Item]:
        """Joined items of a module's or class body's children, with comments
        and attributes directly above a definition joined to it."""
        items: list[_Item] = []
        leading: list[_Item] = []  # comments waiting to see what follows them
        for item in self.joined_items(children, lo, hi):
            node = item.node
            if node.type in LEADING_TYPES:
                if leading and not self._adjacent(leading[-1], node):
                    items.extend(leading)
                    leading.clear()
                leading.append(item)
                continue
            if is_definition(self.data, node):
                item.is_definition = True
                if leading and self._adjacent(leading[-1], node):
                    item.lo = leading[0].lo
                    leading.clear()
            items.extend(leading)
            leading.clear()
            items.append(item)
        items.extend(leading)
        return items

    def _last_line(self, item: _Item) -> int:
        end = self.trim(item.lo, item.hi)[1]
        return self.line_of(max(item.lo, end - 1))

    def _same_line(self, previous: _Item, node: Any) -> bool:
        return self._last_line(previous) == self.line_of(node.start_byte)

    def _adjacent(self, previous: _Item, node: Any) -> bool:
        """No blank line between ``previous`` and ``node``."""
        return self.line_of(node.start_byte) - self._last_line(previous) <= 1

    def container_events(self, children: list[Any], lo: int, hi: int) -> Iterator[_Atom | _Item]:
        """Atoms of statements and definition items, in order. A statement
        too big for one leaf is opened up, so definitions nested in a
        module-level ``if`` or ``#ifdef`` still get their own units."""
        stack: list[tuple[_Item, str | None]] = [
            (item, None) for item in reversed(self.container_items(children, lo, hi))
        ]
        while stack:
            item, label = stack.pop()
            node = item.node
            if item.is_definition:
                yield item
                continue
            own_label = label or node.type
            if self.fits(item.lo, item.hi):
                yield _Atom(item.lo, item.hi, own_label)
            elif node.child_count:
                inner = self.container_items(node.children, item.lo, item.hi)
                stack.extend((child, own_label) for child in reversed(inner))
            else:
                yield from self.line_atoms(item.lo, item.hi, own_label)

    def container_pieces(
        self, children: list[Any], lo: int, hi: int, scope: str, group: tuple[int, ...]
    ) -> list[_Piece]:
        """Pieces of a module or class body: one unit per definition, runs of
        statements between them packed up to the maximum."""
        pieces: list[_Piece] = []
        run: list[_Atom] = []
        for event in self.container_events(children, lo, hi):
            if isinstance(event, _Atom):
                run.append(event)
                continue
            pieces.extend(self.pack(run, scope, group, statements=True))
            run = []
            pieces.extend(self.definition_pieces(event, scope, group))
        pieces.extend(self.pack(run, scope, group, statements=True))
        return pieces

    def definition_pieces(
        self, item: _Item, parent_scope: str, parent_group: tuple[int, ...]
    ) -> list[_Piece]:
        node_type, name, body = describe(self.data, item.node)
        scope = f"{parent_scope}.{name}" if name else parent_scope
        if self.fits(item.lo, item.hi):
            start, end = self.trim(item.lo, item.hi)
            return [_Piece(start, end, scope, node_type, self.count(start, end), parent_group)]
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

    # ------------------------------------------------------------- definitions

    def pack(
        self,
        atoms: list[_Atom],
        scope: str,
        group: tuple[int, ...],
        first_type: str | None = None,
        statements: bool = False,
    ) -> list[_Piece]:
        """Greedily pack contiguous atoms into pieces of at most ``maximum``
        tokens (sums of atom counts, checked by counting each piece)."""
        pieces: list[_Piece] = []
        atoms = list(atoms)
        counts = [self.count(atom.lo, atom.hi) for atom in atoms]
        index = 0
        while index < len(atoms):
            total = 0
            stop = index
            while stop < len(atoms) and (stop == index or total + counts[stop] <= self.maximum):
                total += counts[stop]
                stop += 1
            if stop < len(atoms) and self._cuts_mid_line(atoms[stop - 1], atoms[stop]):
                # Leaves that share a line (`export` | `function f() {`) read badly
                # and their line ranges overlap: cut at an earlier line start, else
                # open the next atom so that the cut can move inside it.
                back = stop - 1
                while back > index and self._cuts_mid_line(atoms[back - 1], atoms[back]):
                    back -= 1
                if back > index:
                    stop = back
                    total = sum(counts[index:stop])
                else:
                    opened = self.open_atom(atoms[stop])
                    if opened:
                        atoms[stop : stop + 1] = opened
                        counts[stop : stop + 1] = [self.count(atom.lo, atom.hi) for atom in opened]
                        continue
            if not statements and total < self.minimum and stop < len(atoms):
                # A short run (say a signature) stopped by a big next statement
                # would be stranded; open that statement so its start joins the run.
                opened = self.open_atom(atoms[stop])
                if opened:
                    atoms[stop : stop + 1] = opened
                    counts[stop : stop + 1] = [self.count(atom.lo, atom.hi) for atom in opened]
                    continue
            start, end = self.trim(atoms[index].lo, atoms[stop - 1].hi)
            tokens = self.count(start, end)
            while tokens > self.maximum and stop - index > 1:  # token counts are not quite additive
                stop -= 1
                while (
                    stop - index > 1
                    and stop < len(atoms)
                    and self._cuts_mid_line(atoms[stop - 1], atoms[stop])
                ):
                    stop -= 1
                start, end = self.trim(atoms[index].lo, atoms[stop - 1].hi)
                tokens = self.count(start, end)
            if end > start:
                run = range(index, stop)
                if statements:
                    node_type = _statement_type([atoms[i].label for i in run])
                elif first_type is not None and not pieces:
                    node_type = first_type
                else:
                    node_type = atoms[max(run, key=lambda i: counts[i])].label
                pieces.append(_Piece(start, end, scope, node_type, tokens, group))
            index = stop
        return pieces

    def _cuts_mid_line(self, before: _Atom, after: _Atom) -> bool:
        """A cut between these atoms would leave two leaves on one line."""
        end = self.trim(before.lo, before.hi)[1]
        start = self.trim(after.lo, after.hi)[0]
        return end > before.lo and start < after.hi and self.line_of(end - 1) == self.line_of(start)

    def open_atom(self, atom: _Atom) -> list[_Atom] | None:
        """The atom cut one level finer (its children, else its lines), or None if it cannot be."""
        node, lo, hi = atom.node, atom.lo, atom.hi
        while node is not None and node.child_count:
            items = [
                item for item in self.joined_items(node.children, lo, hi) if self.count(item.lo, item.hi)
            ]
            if len(items) > 1:
                own_labels = node.type in BODY_TYPES or node.type == atom.label
                return [
                    _Atom(
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

    def merge_small(self, pieces: list[_Piece]) -> list[_Piece]:
        """Merge each piece under the minimum into the following piece if the
        result fits, else into the preceding one; a piece with no such
        neighbour stays as it is (text is never dropped).

        Only neighbours under the same parent qualify, with one widening: a
        piece may merge forward into the first piece of a split nested in its
        parent (a class header into its first method, imports into a split
        class's header), as it would have merged with that unit unsplit.
        """
        merged: list[_Piece] = []
        index = 0
        while index < len(pieces):
            current = pieces[index]
            index += 1
            while current.tokens < self.minimum and index < len(pieces):
                following = pieces[index]
                if following.group[: len(current.group)] != current.group:
                    break  # the next piece belongs to an enclosing scope
                joined = self._join(current, following)
                if joined is None:
                    break
                current = joined
                index += 1
            if current.tokens < self.minimum and merged:
                preceding = merged[-1]
                # Only into a sibling: neither the start of a split function
                # nor the unit after one is glued to it.
                if preceding.group == current.group:
                    joined = self._join(preceding, current)
                    if joined is not None:
                        merged[-1] = joined
                        continue
            merged.append(current)
        return merged

    def _join(self, first: _Piece, second: _Piece) -> _Piece | None:
        if first.tokens + second.tokens > self.maximum + 8:  # cheap reject before counting
            return None
        tokens = self.count(first.lo, second.hi)
        if tokens > self.maximum:
            return None
        parts = first.components() + second.components()
        largest = max(parts, key=lambda part: part[2])
        shorter = min(len(first.group), len(second.group))
        return _Piece(
            first.lo, second.hi, _merged_scope(parts), largest[1], tokens, first.group[:shorter], parts
        )

    # ------------------------------------------------------------ text fallbacks

    def block_pieces(
        self, blocks: list[tuple[int, int]], scope: str, group: tuple[int, ...], node_type: str
    ) -> list[_Piece]:
        """One piece per block; a block over the maximum is cut by lines (then tokens) and packed."""
        pieces: list[_Piece] = []
        for lo, hi in blocks:
            start, end = self.trim(lo, hi)
            if end <= start:
                continue
            if self.fits(start, end):
                pieces.append(_Piece(start, end, scope, node_type, self.count(start, end), group))
            else:
                pieces.extend(self.pack(self.line_atoms(lo, hi, node_type), scope, group, statements=True))
        return pieces

    def markdown_pieces(self, scope: str) -> list[_Piece]:
        """A section per heading (and one for any text before the first);
        a section over the maximum is cut into its paragraphs."""
        pieces: list[_Piece] = []
        for section_lo, section_hi in self.markdown_sections():
            start, end = self.trim(section_lo, section_hi)
            if end <= start:
                continue
            if self.fits(start, end):
                pieces.append(_Piece(start, end, scope, "section", self.count(start, end), ()))
                continue
            paragraphs = self.markdown_paragraphs(section_lo, section_hi)
            pieces.extend(self.block_pieces(paragraphs, scope, (section_lo,), "paragraph"))
        return pieces

    def _lines(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """(start, end) of each line in ``lo..hi``, the end past its newline."""
        lines = []
        line_start = lo
        for index in range(bisect_left(self.newlines, lo), len(self.newlines)):
            newline = self.newlines[index]
            if newline >= hi:
                break
            lines.append((line_start, newline + 1))
            line_start = newline + 1
        if line_start < hi:
            lines.append((line_start, hi))
        return lines

    def markdown_sections(self) -> list[tuple[int, int]]:
        lines = self._lines(0, len(self.data))
        starts = [0]
        fence: bytes | None = None
        for index, (lo, hi) in enumerate(lines):
            line = self.data[lo:hi].rstrip(b"\r\n")
            fence_match = _FENCE.match(line)
            if fence is not None:
                if _closes_fence(fence_match, fence):
                    fence = None
                continue
            if fence_match:
                fence = fence_match.group(1)
                continue
            if _ATX_HEADING.match(line):
                starts.append(lo)
            elif index > 0 and _is_underline(line, self.data[lines[index - 1][0] : lines[index - 1][1]]):
                title_start = lines[index - 1][0]
                # An rst title with an overline starts at the overline.
                if index > 1 and _UNDERLINE.match(
                    self.data[lines[index - 2][0] : lines[index - 2][1]].strip()
                ):
                    title_start = lines[index - 2][0]
                if title_start > starts[-1]:
                    starts.append(title_start)
        starts = sorted(set(starts))
        ends = [*starts[1:], len(self.data)]
        return list(zip(starts, ends, strict=True))

    def markdown_paragraphs(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Blank-line separated blocks, a fenced code block counting as one."""
        paragraphs: list[tuple[int, int]] = []
        block_start = -1
        fence: bytes | None = None
        for line_lo, line_hi in self._lines(lo, hi):
            line = self.data[line_lo:line_hi].rstrip(b"\r\n")
            fence_match = _FENCE.match(line)
            if fence is not None:
                if _closes_fence(fence_match, fence):
                    fence = None
                continue
            if fence_match:
                fence = fence_match.group(1)
            blank = not line.strip()
            if not blank and block_start < 0:
                block_start = line_lo
            elif blank and block_start >= 0:
                paragraphs.append((block_start, line_lo))
                block_start = -1
        if block_start >= 0:
            paragraphs.append((block_start, hi))
        return paragraphs

    # --------------------------------------------------------------- leaves

    def leaves(self, pieces: list[_Piece], path: str, language: str, chunker: str) -> list[Leaf]:
        leaves = []
        for piece in pieces:
            ranges = [(piece.lo, piece.hi)]
            if piece.tokens > self.maximum:  # last resort; packing keeps this from happening
                ranges = [
                    (atom.lo, atom.hi) for atom in self.token_atoms(piece.lo, piece.hi, piece.node_type)
                ]
            for lo, hi in ranges:
                start, end = self.trim(lo, hi)
                leaves.append(
                    Leaf(
                        path=path,
                        language=language,
                        node_type=piece.node_type,
                        scope=piece.scope,
                        start_byte=start,
                        end_byte=end,
                        start_line=self.line_of(start),
                        end_line=self.line_of(end - 1),
                        text=self.text(start, end),
                        token_count=self.count(start, end),
                        chunker=chunker,
                    )
                )
        return leaves


def _statement_type(labels: list[str]) -> str:
    """The type of a run of statements: theirs when they share one, else statement_block."""
    kinds = {label for label in labels if label not in COMMENT_TYPES} or set(labels)
    return kinds.pop() if len(kinds) == 1 else "statement_block"


def _merged_scope(parts: tuple[tuple[str, str, int], ...]) -> str:
    """Scope of merged pieces.

    When the scopes nest (a module statement and a function, a class header
    and a method) the largest part's. Siblings of different names (``m.f``
    and ``m.g``) get the scope they share, ``m``, unless one part holds at
    least two thirds of the tokens: a small type alias merged into a large
    function keeps the function's name, which is what a search for it needs.
    """
    tokens_by_scope: dict[str, int] = {}
    for scope, _node_type, tokens in parts:
        tokens_by_scope[scope] = tokens_by_scope.get(scope, 0) + tokens
    if len(tokens_by_scope) == 1:
        return parts[0][0]
    largest = max(tokens_by_scope, key=lambda scope: tokens_by_scope[scope])
    paths = sorted((scope.split(".") for scope in tokens_by_scope), key=len)
    if all(longer[: len(shorter)] == shorter for shorter, longer in itertools.pairwise(paths)):
        return largest
    if 3 * tokens_by_scope[largest] >= 2 * sum(tokens_by_scope.values()):
        return largest
    return ".".join(common_prefix(paths)) or largest


def _closes_fence(match: re.Match[bytes] | None, fence: bytes) -> bool:
    """A fence line of the same character, at least as long, closes the open fence."""
    return match is not None and match.group(1)[:1] == fence[:1] and len(match.group(1)) >= len(fence)


def _is_underline(line: bytes, previous_line: bytes) -> bool:
    """A setext (markdown) or rst title underline below a line of text."""
    stripped = line.strip()
    title = previous_line.strip()
    if len(stripped) < 3 or not _UNDERLINE.match(stripped) or not title:
        return False
    if _UNDERLINE.match(title) or _LIST_OR_QUOTE.match(previous_line) or _ATX_HEADING.match(previous_line):
        return False
    return line[:1] not in (b" ", b"\t")
