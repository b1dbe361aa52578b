r"""Token counts of ranges of one file's bytes, the file encoded once.

With cl100k (``TokenCounter.lines_add_up``) the count of a text splits
exactly at a *line cut*, a position right after ``\r`` or ``\n`` where the
next line starts with spaces or tabs and then a printable ASCII character.
Proof, by cl100k's pattern (leftmost-first alternatives, no look-behind): let
the line cut be ``k`` and ``W`` the run of whitespace around it, whose last
``[\r\n]`` is at ``k - 1`` (only spaces or tabs follow it, then a
non-space). A pre-token starting before ``W`` enters it only through
`` ?[^\s\p{L}\p{N}]++[\r\n]*+``, whose possessive newlines stop exactly at
``k``; a pre-token starting in ``W`` at or before ``k - 1`` fails the letter,
number and punctuation alternatives (the next character is still
whitespace), fails ``\s++$`` (a non-space follows ``W``) and is matched by
``\s*[\r\n]``, which ends at the last newline, ``k``. So a pre-token ends at
``k``; the text before ``k`` alone pre-tokenises the same way (its last
pre-token is matched by ``\s++$`` or the same possessive newlines, with the
same extent) and the text after ``k`` does too (nothing looks behind). BPE
runs within pre-tokens, so the counts add.

The count also splits at a *word end*: after a printable ASCII character
followed by a space or tab, or after a letter or digit followed by a newline.
No alternative of the pattern takes a non-space and then a space or tab (the
letter, number and punctuation runs stop there, and the one-character prefix
of a word must be followed by a letter), nor a letter or digit and then a
newline; punctuation does take the newlines after it (``:\n`` is one
pre-token), hence the narrower rule. Each such pre-token ends the same way
when the text stops there.

So the whole file is encoded once, and every *split point* (line cut or
word end) is a token boundary of that encoding. A range is counted as its
part before its first split point, the file's tokens between its first and
last split points (two bisections), and its part after the last one; those
parts are short texts that recur (``return``, ``):``, `` self``) and are
counted once per distinct text. A split point strictly inside a range is a
split point of the range's own text too (both characters it looks at lie
inside a trimmed range), so the three counts add up to the range's.
``tests/test_packing.py`` checks both splits on random texts and every count
against the tokenizer's, and ``python -m hsc.bench.chunk_check`` that the
chunker's output over a whole tree is unchanged.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import numpy as np

from hsc.tokens import TokenCounter

# Where a count splits exactly (see above): just after a newline, before a line
# that starts with optional spaces or tabs and then a printable ASCII character.
LINE_CUT = re.compile(rb"[\r\n](?=[ \t]*[!-~])")
# Where else a count splits exactly: after a word, that is a printable ASCII character before a
# space or tab, or a letter or digit before a newline (not punctuation: cl100k keeps `:\n` whole).
WORD_END = re.compile(rb"[!-~](?=[ \t])|[0-9A-Za-z](?=[\r\n])")
# Token counts of the texts before a range's first split point and after its last, by
# tokenizer name, shared by all files (they recur: `return`, `self`, `):`); cleared when
# it holds this many texts, and texts longer than LONGEST_KEPT are not kept.
_TEXT_COUNTS: dict[str, dict[bytes, int]] = {}
TEXT_COUNTS_LIMIT = 200_000
LONGEST_KEPT = 64
_LF, _CR, _SP, _TAB = 0x0A, 0x0D, 0x20, 0x09


@dataclass
class CountStats:
    """How often a range's edge texts were found already counted (for benchmarks)."""

    lookups: int = 0
    encoded: int = 0  # texts sent to the tokenizer

    def kept(self) -> int:
        return sum(len(counts) for counts in _TEXT_COUNTS.values())

    def kept_bytes(self) -> int:
        """Memory the kept texts take (the texts as bytes objects and the dictionaries)."""
        return sum(
            sys.getsizeof(counts) + sum(sys.getsizeof(text) for text in counts)
            for counts in _TEXT_COUNTS.values()
        )


STATS = CountStats()


class RangeCounter:
    """Exact token counts of trimmed ranges of one file's bytes (the file is encoded when first asked)."""

    def __init__(self, data: bytes, counter: TokenCounter) -> None:
        self.data = data
        self.counter = counter
        self.by_splits = bool(getattr(counter, "lines_add_up", False)) and hasattr(counter, "token_ends")
        self._splits: list[int] | None = None  # split points, ascending (once the file is encoded)
        self._token_edges: list[int] = []  # 0 and where each token of the whole file ends
        self._text_counts = _TEXT_COUNTS.setdefault(counter.name, {})

    def count(self, start: int, end: int) -> int:
        """Tokens of the trimmed range ``start..end`` (exact; see the module docstring)."""
        if not self.by_splits:
            return self._count_text(start, end)
        splits = self._splits
        if splits is None:
            found = whole_file_edges(self.data, self.counter)
            self._splits, self._token_edges = found
            splits = found[0]
        first = bisect_left(splits, start)
        last = bisect_right(splits, end) - 1
        if first > last:
            return self._count_text(start, end)
        head, tail = splits[first], splits[last]
        edges = self._token_edges
        between = bisect_left(edges, tail) - bisect_left(edges, head)
        head_tokens = self._count_text(start, head) if head > start else 0
        return head_tokens + between + (self._count_text(tail, end) if end > tail else 0)

    def _count_text(self, lo: int, hi: int) -> int:
        piece = self.data[lo:hi]
        STATS.lookups += 1
        tokens = self._text_counts.get(piece)
        if tokens is None:
            STATS.encoded += 1
            tokens = self.counter.count(piece.decode("utf-8"))
            if hi - lo <= LONGEST_KEPT:
                if len(self._text_counts) >= TEXT_COUNTS_LIMIT:
                    self._text_counts.clear()
                self._text_counts[piece] = tokens
        return tokens


def whole_file_edges(data: bytes, counter: TokenCounter) -> tuple[list[int], list[int]]:
    """The file's split points and its token edges (0 and where each token ends), from one
    encoding of the whole file. Every split point is a token edge by the proof above;
    this is checked, and should one not be, no split point is returned (each range is
    then counted whole)."""
    ends = counter.token_ends(data.decode("utf-8"))  # type: ignore[attr-defined]
    points = split_points(data)
    edges = np.concatenate(([0], ends))
    at = np.minimum(np.searchsorted(edges, points), len(edges) - 1)
    if not np.array_equal(edges[at], points):
        return [], []
    return points.tolist(), edges.tolist()


def split_points(data: bytes) -> np.ndarray:
    """Where ``LINE_CUT`` or ``WORD_END`` matches end, ascending."""
    codes = np.frombuffer(data, dtype=np.uint8)
    if len(codes) < 2:
        return np.zeros(0, dtype=np.int64)
    before, after = codes[:-1], codes[1:]
    after_break = (after == _LF) | (after == _CR)
    printable = (before >= 0x21) & (before <= 0x7E)
    alnum = (
        ((before >= 0x30) & (before <= 0x39))
        | ((before >= 0x41) & (before <= 0x5A))
        | ((before >= 0x61) & (before <= 0x7A))
    )
    points = (printable & ((after == _SP) | (after == _TAB))) | (alnum & after_break)
    # Word ends follow a printable character and line cuts a newline: never the same point.
    merged = np.concatenate((np.flatnonzero(points) + 1, _line_cuts(codes)))
    merged.sort()
    return merged


def line_cuts(data: bytes) -> list[int]:
    """Where ``LINE_CUT`` matches end: just after each ``\\r`` or ``\\n`` whose next
    line starts with spaces or tabs and then a printable ASCII character."""
    return _line_cuts(np.frombuffer(data, dtype=np.uint8)).tolist()  # type: ignore[no-any-return]


def _line_cuts(codes: np.ndarray) -> np.ndarray:
    size = len(codes)
    # For each position, the first position at or after it that is not a space or tab.
    positions = np.arange(size + 1)
    blank = np.zeros(size + 1, dtype=bool)
    blank[:size] = (codes == _SP) | (codes == _TAB)
    next_solid = np.minimum.accumulate(np.where(blank, size, positions)[::-1])[::-1]
    after_break = np.flatnonzero((codes == _LF) | (codes == _CR)) + 1
    solid = next_solid[after_break]
    printable = np.zeros(size + 1, dtype=bool)
    printable[:size] = (codes >= 0x21) & (codes <= 0x7E)
    return after_break[printable[solid]]
