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
followed by a space or tab, after an ASCII letter followed by an ASCII
character that is not a letter, or after an ASCII digit followed by an ASCII
character that is not a digit. No alternative of the pattern takes a
non-space and then a space or tab (the letter, number and punctuation runs
stop there, and the one-character prefix of a word must be followed by a
letter). A letter is taken only by the possessive letter run ``\p{L}++``,
which stops at the first non-letter, or by a contraction (``'s``, ``'ll``),
whose letters are the last of their run when a non-letter follows; a digit
only by ``\p{N}{1,3}+`` (the prefix of a word and the punctuation run
exclude digits), which stops at the first non-digit. Punctuation does take
the newlines after it (``:\n`` is one pre-token), hence no rule for it
before a newline. Each such pre-token ends the same way when the text stops
there (none looks ahead past its last character), and the text after the
word end pre-tokenises as before (nothing looks behind).

So the whole file is encoded once, and every *split point* (line cut or
word end) is a token boundary of that encoding, whose index (the tokens
before it) is kept with it. A range is counted as its part before its first
split point, the file's tokens between its first and last split points (the
difference of their indexes), and its part after the last one; those parts
are short texts that recur (``return``, ``):``, `` self``) and are counted
once per distinct text. The part before the first split point depends on
the range's start only and the part after the last on its end only, so each
is worked out once per position (packing asks about the same starts and ends
many times over). A split point strictly inside a range is a
split point of the range's own text too (both characters it looks at lie
inside a trimmed range), so the three counts add up to the range's.
``tests/test_packing.py`` checks both splits on random texts and every count
against the tokenizer's, and ``python -m hsc.bench.chunk_check`` that the
chunker's output over a whole tree is unchanged.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hsc.chunk.tokens import TokenCounter

# Where a count splits exactly (see above): just after a newline, before a line
# that starts with optional spaces or tabs and then a printable ASCII character.
LINE_CUT = re.compile(rb"[\r\n](?=[ \t]*[!-~])")
# Where else a count splits exactly: after a word, that is a printable ASCII character before a
# space or tab, an ASCII letter before an ASCII non-letter, or an ASCII digit before an ASCII
# non-digit (not punctuation before a newline: cl100k keeps `:\n` whole).
WORD_END = re.compile(rb"[!-~](?=[ \t])|[A-Za-z](?=[\x00-@\[-`{-\x7f])|[0-9](?=[\x00-/:-\x7f])")
# Token counts of the texts before a range's first split point and after its last, by
# tokenizer name, shared by all files (they recur: `return`, `self`, `):`); cleared when
# it holds this many texts, and texts longer than LONGEST_KEPT are not kept.
_TEXT_COUNTS: dict[str, dict[bytes, int]] = {}
TEXT_COUNTS_LIMIT = 200_000
LONGEST_KEPT = 64

# Classes of bytes, for finding split points with numpy: ASCII letters, digits, spaces and
# tabs, line breaks, other printable characters (punctuation), other ASCII; then the rest.
_LETTER, _DIGIT, _BLANK, _BREAK, _PUNCT, _CONTROL, _NON_ASCII = range(7)


def _byte_classes() -> bytes:
    classes = bytearray([_CONTROL] * 128 + [_NON_ASCII] * 128)
    classes[0x21:0x7F] = bytes([_PUNCT]) * (0x7F - 0x21)
    for byte in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz":
        classes[byte] = _LETTER
    for byte in b"0123456789":
        classes[byte] = _DIGIT
    classes[0x20] = classes[0x09] = _BLANK
    classes[0x0A] = classes[0x0D] = _BREAK
    return bytes(classes)


# What a pair of neighbouring bytes says about the position between them: a split point (a
# word end, or a line cut before a line with no indent), an indent's start (after a line
# break), or the end of a run of spaces and tabs, before a printable character or not.
_NOTHING, _SPLIT, _INDENT, _INDENT_END, _BLANK_END = range(5)


def _pair_events() -> bytes:
    """The event at ``before * 8 + after``, for bytes of those classes."""
    printable = (_LETTER, _DIGIT, _PUNCT)
    table = bytearray(256)
    for before in range(7):
        for after in range(7):
            ascii_after = after != _NON_ASCII
            if (
                (before in printable and after == _BLANK)
                or (before == _LETTER and ascii_after and after != _LETTER)
                or (before == _DIGIT and ascii_after and after != _DIGIT)
                or (before == _BREAK and after in printable)
            ):
                event = _SPLIT
            elif before == _BREAK and after == _BLANK:
                event = _INDENT
            elif before == _BLANK and after != _BLANK:
                event = _INDENT_END if after in printable else _BLANK_END
            else:
                event = _NOTHING
            table[before * 8 + after] = event
    return bytes(table)


_CLASSES = _byte_classes()
_PAIR_EVENTS = _pair_events()


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
        self._splits: Sequence[int] | None = None  # split points, ascending (once the file is encoded)
        self._before: Sequence[int] = ()  # tokens of the whole file before each split point
        self._rank: Sequence[int] = ()  # by position: the split points before it
        # By a range's start: tokens before its first split point less the range's part before
        # that point. By a range's end: tokens before its last split point plus the range's part
        # after it. A count is then the difference.
        self._openings: dict[int, int] = {}
        self._closings: dict[int, int] = {}
        self._text_counts = _TEXT_COUNTS.setdefault(counter.name, {})

    def count(self, start: int, end: int) -> int:
        """Tokens of the trimmed range ``start..end`` (exact; see the module docstring)."""
        if self._splits is None and self.by_splits:
            self._encode_whole_file()
        if not self.by_splits:
            return self._count_text(start, end)
        rank = self._rank
        first = rank[start]  # the first split point at or after start
        last = rank[end + 1] - 1  # the last at or before end
        if first > last:
            # Not kept by position: the part from a start to a split point past the
            # range's end can be long (a line with no spaces).
            return self._count_text(start, end)
        opening = self._openings.get(start)
        if opening is None:
            head = self._splits[first]  # type: ignore[index]
            head_tokens = self._count_text(start, head) if head > start else 0
            opening = self._openings[start] = self._before[first] - head_tokens
        closing = self._closings.get(end)
        if closing is None:
            tail = self._splits[last]  # type: ignore[index]
            tail_tokens = self._count_text(tail, end) if end > tail else 0
            closing = self._closings[end] = self._before[last] + tail_tokens
        return closing - opening

    def _encode_whole_file(self) -> None:
        found = whole_file_splits(self.data, self.counter)
        if found is None:  # a split point is not a token edge: count each range whole
            self.by_splits = False
            self._splits = []
            return
        self._splits, self._before, self._rank = found

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


def whole_file_splits(
    data: bytes, counter: TokenCounter
) -> tuple[Sequence[int], Sequence[int], Sequence[int]] | None:
    """The file's split points, the tokens before each, and for each position from 0 to one
    past the end the number of split points before it, from one encoding of the whole file.
    Every split point is a token edge by the proof above; this is checked, and None
    returned should one not be.

    They are memoryviews of numpy arrays: indexed from Python, as a count does once per
    start and end, they give ints almost as fast as a list does, without building one
    (and the number of split points before a position replaces a bisection)."""
    ends = counter.token_ends(data.decode("utf-8"))  # type: ignore[attr-defined]
    if (ends[-1] if len(ends) else 0) != len(data):
        return None
    points = split_points(data)
    is_split = np.zeros(len(data) + 1, dtype=np.bool_)
    is_split[points] = True
    edges = np.concatenate(([0], ends))
    at = np.flatnonzero(is_split[edges])  # the index of each split point among the edges
    if len(at) != len(points) or not np.array_equal(edges[at], points):
        return None
    index = np.int32 if len(data) < 2**31 - 2 else np.int64
    rank = np.zeros(len(data) + 2, dtype=index)
    np.cumsum(is_split, dtype=index, out=rank[1:])
    return memoryview(points.astype(index)), memoryview(at.astype(index)), memoryview(rank)


def split_points(data: bytes) -> np.ndarray:
    """Where ``LINE_CUT`` or ``WORD_END`` matches end, ascending."""
    if len(data) < 2:
        return np.zeros(0, dtype=np.int64)
    # bytes.translate maps bytes through a table several times faster than numpy indexes one.
    classes = np.frombuffer(data.translate(_CLASSES), dtype=np.uint8)
    pairs = classes[:-1] << 3
    pairs |= classes[1:]
    events = np.frombuffer(pairs.tobytes().translate(_PAIR_EVENTS), dtype=np.uint8)
    between = np.flatnonzero(events)  # event i lies between bytes i and i + 1
    kinds = events[between]
    chosen = kinds == _SPLIT
    # Nothing happens inside a run of spaces and tabs, so the event after an indent's start
    # is where it ends: a line cut when a printable character follows.
    indents = np.flatnonzero(kinds[:-1] == _INDENT)
    chosen[indents[kinds[indents + 1] == _INDENT_END]] = True
    return between[chosen] + 1


def line_cuts(data: bytes) -> list[int]:
    """Where ``LINE_CUT`` matches end: just after each ``\\r`` or ``\\n`` whose next
    line starts with spaces or tabs and then a printable ASCII character."""
    return [point for point in split_points(data).tolist() if data[point - 1] in b"\r\n"]
