"""Ranges of a file's bytes, cut into atoms, packed into pieces and turned into leaves.

Every cut is made on a partition of the whole file: each unit owns a
half-open byte interval, the intervals of one file tile it from its first
byte to its last, and a leaf is its interval with the surrounding whitespace
trimmed. So the leaves of a file never overlap and every non-whitespace byte
(comments, imports, decorators, stray tokens, error-recovery debris) lies in
exactly one leaf, whatever the grammar does.

Sizes are token counts of the leaf text (``TokenCounter.count``). A range of
more than ``_SURELY_TOO_BIG`` bytes per allowed token is taken as too big
without being counted; any other is counted where it is cut (packing needs
the counts of the ranges that fit).

Counts of ranges come from :class:`hsc.chunk.linecount.RangeCounter`, which encodes
each file once.

:class:`Packer` knows nothing of syntax: ``hsc.chunk.cut`` (syntax trees) and
``hsc.chunk.prose`` (Markdown and plain text) cut a file into atoms and hand them
to it.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsc.chunk.grammar import COMMENT_TYPES
from hsc.chunk.linecount import RangeCounter
from hsc.chunk.tokens import TokenCounter
from hsc.model import Leaf, common_prefix
from hsc.params import Parameters

# Languages cut along a tree-sitter syntax tree; the others use chunk_fallback.
# Code averages 3-5 bytes per cl100k token; a range of more than this many
# bytes per allowed token is over the maximum in any real source file.
_SURELY_TOO_BIG = 12

NON_SPACE = re.compile(rb"[^ \t\n\r\f\v]")
_LF = 0x0A
_SPACE = b" \t\n\r\f\v"
_IS_SPACE = tuple(byte in _SPACE for byte in range(256))


@dataclass(slots=True)
class Atom:
    """A range that is never cut further when packing (it fits in one leaf)."""

    lo: int
    hi: int
    label: str
    node: Any = None  # the syntax node it was cut from, so a packer can still open it
    tokens: int = -1  # tokens of the trimmed range, when known (it was measured when cut)


@dataclass(slots=True)
class Piece:
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


class Packer:
    """Cuts and packs ranges of one file's bytes."""

    def __init__(self, data: bytes, params: Parameters, counter: TokenCounter) -> None:
        self.data = data
        self.counter = counter
        self.maximum = params.maximum_chunk_token_length
        self.minimum = params.minimum_chunk_token_length
        self.balance = params.fragment_merging == "balance"
        self.newlines = _newlines(data)
        # Where a trimmed range starts, by the start it was trimmed from (the first non-blank
        # byte at or after it), and where it ends, by the end (just after the last non-blank
        # byte before it): packing trims ranges that share their starts and ends many times.
        self._starts: dict[int, int] = {}
        self._ends: dict[int, int] = {}
        self._ranges = RangeCounter(data, counter)

    # ----------------------------------------------------------------- ranges

    def trim(self, lo: int, hi: int) -> tuple[int, int]:
        """The range without leading and trailing whitespace; (lo, lo) when blank."""
        data = self.data
        if lo >= hi:
            return lo, lo
        start = lo
        if _IS_SPACE[data[lo]]:
            start = self._starts.get(lo, hi)
            if start >= hi:  # not seen, or the first non-blank byte after lo is beyond hi
                match = NON_SPACE.search(data, lo, hi)
                if match is None:
                    return lo, lo
                start = self._starts[lo] = match.start()
        if not _IS_SPACE[data[hi - 1]]:
            return start, hi
        end = self._ends.get(hi)
        if end is None:
            end = self._ends[hi] = _last_solid_end(data, start, hi)
        return start, end

    def line_of(self, position: int) -> int:
        """1-based line of the byte at ``position``."""
        return bisect_left(self.newlines, position) + 1

    def text(self, lo: int, hi: int) -> str:
        return self.data[lo:hi].decode("utf-8")

    def count(self, lo: int, hi: int) -> int:
        """Tokens of the trimmed range."""
        start, end = self.trim(lo, hi)
        return self._ranges.count(start, end) if end > start else 0

    def measure(self, lo: int, hi: int) -> int:
        """Tokens of the trimmed range if it fits in one leaf, else -1. A range that fits is
        counted where it is cut, once: packing needs its count, and an atom carries it."""
        start, end = self.trim(lo, hi)
        if end - start > _SURELY_TOO_BIG * self.maximum:
            return -1
        tokens = self._ranges.count(start, end) if end > start else 0
        return tokens if tokens <= self.maximum else -1

    def line_atoms(self, lo: int, hi: int, label: str) -> list[Atom]:
        """Cut a range that has no syntax to split along: by lines, and a line
        that is still too big by tokens."""
        atoms: list[Atom] = []
        first = bisect_left(self.newlines, lo)
        line_start = lo
        for index in range(first, len(self.newlines) + 1):
            line_end = self.newlines[index] + 1 if index < len(self.newlines) else hi
            line_end = min(line_end, hi)
            start, end = self.trim(line_start, line_end)
            if end > start:
                tokens = self.measure(start, end)
                if tokens >= 0:
                    atoms.append(Atom(line_start, line_end, label, None, tokens))
                else:
                    atoms.extend(self.token_atoms(start, end, label))
            if line_end >= hi:
                break
            line_start = line_end
        return atoms

    def token_atoms(self, lo: int, hi: int, label: str) -> list[Atom]:
        """Cut one overlong line into pieces of at most ``maximum`` tokens each."""
        return [Atom(start, end, label) for start, end in self._token_ranges(lo, hi, self.maximum)]

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

    # ------------------------------------------------------- packing and merging

    def pack(
        self,
        atoms: list[Atom],
        scope: str,
        group: tuple[int, ...],
        first_type: str | None = None,
        statements: bool = False,
    ) -> list[Piece]:
        """Greedily pack contiguous atoms into pieces of at most ``maximum``
        tokens (sums of atom counts, checked by counting each piece)."""
        pieces: list[Piece] = []
        atoms = list(atoms)
        counts = [atom.tokens if atom.tokens >= 0 else self.count(atom.lo, atom.hi) for atom in atoms]
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
                pieces.append(Piece(start, end, scope, node_type, tokens, group))
            index = stop
        return pieces

    def _cuts_mid_line(self, before: Atom, after: Atom) -> bool:
        """A cut between these atoms would leave two leaves on one line."""
        end = self.trim(before.lo, before.hi)[1]
        start = self.trim(after.lo, after.hi)[0]
        return end > before.lo and start < after.hi and self.line_of(end - 1) == self.line_of(start)

    def open_atom(self, atom: Atom) -> list[Atom] | None:
        """The atom cut one level finer (here: into its lines), or None if it cannot be."""
        lines = self.line_atoms(atom.lo, atom.hi, atom.label)
        return lines if len(lines) > 1 else None

    def merge_small(self, pieces: list[Piece]) -> list[Piece]:
        """Merge each piece under the minimum into the following piece if the
        result fits, else into the preceding one; a piece with no such
        neighbour stays as it is (text is never dropped).

        Only neighbours under the same parent qualify, with one widening: a
        piece may merge forward into the first piece of a split nested in its
        parent (a class header into its first method, imports into a split
        class's header), as it would have merged with that unit unsplit.

        With ``fragment_merging`` "balance" (the default; "seed" is the rule above alone), a
        piece of a split definition that is too small and cannot join its neighbour of the same
        definition whole takes lines from it (:meth:`_rebalance`). A whole small definition
        beside a split one's piece stays itself (its name is what a search for it needs).
        """
        merged: list[Piece] = []
        pieces = list(pieces)
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
                    if self.balance and _same_definition(current, following):
                        # Too big to join whole (a decorator and its long definition): take its first lines.
                        split = self._rebalance(current, following, small_first=True)
                        if split is not None:
                            current, pieces[index] = split
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
                    if self.balance and _same_definition(preceding, current):
                        # The tail of a split definition after a full piece: it takes that piece's last lines.
                        split = self._rebalance(preceding, current, small_first=False)
                        if split is not None:
                            merged[-1], current = split
            merged.append(current)
        return merged

    def _rebalance(self, first: Piece, second: Piece, small_first: bool) -> tuple[Piece, Piece] | None:
        """Adjacent pieces cut again at a line start inside the larger one so that both hold at
        least ``minimum`` and at most ``maximum`` tokens (the small one takes the fewest lines
        that reach the minimum); None when no line start does."""
        big = second if small_first else first
        inside = self.newlines[bisect_left(self.newlines, big.lo) : bisect_left(self.newlines, big.hi - 1)]
        cuts = [newline + 1 for newline in inside]
        for cut in cuts if small_first else reversed(cuts):
            head, tail = self.trim(first.lo, cut), self.trim(cut, second.hi)
            if head[1] <= head[0] or tail[1] <= tail[0]:
                continue
            small = self.count(*head) if small_first else self.count(*tail)
            if small < self.minimum:
                continue
            if small > self.maximum:
                return None
            large = self.count(*tail) if small_first else self.count(*head)
            if not self.minimum <= large <= self.maximum:
                return None
            head_tokens, tail_tokens = (small, large) if small_first else (large, small)
            return (
                Piece(*head, first.scope, first.node_type, head_tokens, first.group, first.parts),
                Piece(*tail, second.scope, second.node_type, tail_tokens, second.group, second.parts),
            )
        return None

    def _join(self, first: Piece, second: Piece) -> Piece | None:
        if first.tokens + second.tokens > self.maximum + 8:  # cheap reject before counting
            return None
        tokens = self.count(first.lo, second.hi)
        if tokens > self.maximum:
            return None
        parts = first.components() + second.components()
        largest = max(parts, key=lambda part: part[2])
        shorter = min(len(first.group), len(second.group))
        return Piece(
            first.lo, second.hi, _merged_scope(parts), largest[1], tokens, first.group[:shorter], parts
        )

    # --------------------------------------------------------------- leaves

    def leaves(self, pieces: list[Piece], path: str, language: str, chunker: str) -> list[Leaf]:
        leaves = []
        for piece in pieces:
            ranges = [(piece.lo, piece.hi)]
            if piece.tokens > self.maximum:  # last resort; packing keeps this from happening
                ranges = [
                    (atom.lo, atom.hi) for atom in self.token_atoms(piece.lo, piece.hi, piece.node_type)
                ]
            for lo, hi in ranges:
                start, end = self.trim(lo, hi)
                # A piece is a trimmed range with its count (counted again only if cut up here).
                tokens = piece.tokens if (start, end) == (piece.lo, piece.hi) else self.count(start, end)
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
                        token_count=tokens,
                        chunker=chunker,
                    )
                )
        return leaves


def _same_definition(first: Piece, second: Piece) -> bool:
    """Two pieces cut from one split definition (the same scope, under the same split)."""
    return first.scope == second.scope and first.group == second.group and len(first.group) > 0


def _last_solid_end(data: bytes, start: int, hi: int) -> int:
    """Just after the last non-blank byte before ``hi``; ``data[start]`` is not blank."""
    end = hi
    window = 32  # a range most often ends in a line break and the next line's indent
    while True:  # strip the tail in windows so a long blank run is not copied whole
        window_start = end - window if end - window > start else start
        kept = len(data[window_start:end].rstrip(_SPACE))
        if kept:
            return window_start + kept
        end = window_start
        window = 256


def _newlines(data: bytes) -> list[int]:
    """Positions of the ``\\n`` bytes (numpy: a Python loop over a large file's lines costs more)."""
    return np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _LF).tolist()  # type: ignore[no-any-return]


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
