r"""Token counts of ranges of one file's bytes, each line counted once.

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

So a range is counted as its partial first line, the whole lines between
(each counted once per file and summed by prefix sums) and its partial last
line; a partial line is counted from its whole line, less the words it lacks
(the line's first or last word with what surrounds it, short texts that
recur). Texts are counted once per distinct text. ``tests/test_packing.py``
checks both splits on random texts, and ``python -m hsc.bench.chunk_check``
that the chunker's output over a whole tree is unchanged.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right

import numpy as np

from hsc.tokens import TokenCounter

# Where a count splits exactly (see above): just after a newline, before a line
# that starts with optional spaces or tabs and then a printable ASCII character.
LINE_CUT = re.compile(rb"[\r\n](?=[ \t]*[!-~])")
# Where else a count splits exactly: after a word, that is a printable ASCII character before a
# space or tab, or a letter or digit before a newline (not punctuation: cl100k keeps `:\n` whole).
WORD_END = re.compile(rb"[!-~](?=[ \t])|[0-9A-Za-z](?=[\r\n])")
# Token counts of line texts by tokenizer name, shared by all files (lines repeat: blank
# lines, `return None`, closing brackets); cleared when it holds this many texts.
_TEXT_COUNTS: dict[str, dict[bytes, int]] = {}
_TEXT_COUNTS_LIMIT = 400_000
_LF, _CR, _SP, _TAB = 0x0A, 0x0D, 0x20, 0x09


class RangeCounter:
    """Exact token counts of trimmed ranges of one file's bytes."""

    def __init__(self, data: bytes, counter: TokenCounter) -> None:
        self.data = data
        self.counter = counter
        self.by_lines = bool(getattr(counter, "lines_add_up", False))
        self.cuts = line_cuts(data) if self.by_lines else []
        self._line_sums: list[int] | None = None  # tokens of the whole lines before each cut
        self._text_counts = _TEXT_COUNTS.setdefault(counter.name, {})

    def count(self, start: int, end: int) -> int:
        """Tokens of ``start..end``: its partial first and last lines and the
        whole lines between (exact; see the module docstring)."""
        cuts = self.cuts
        if not self.by_lines:
            return self._count_text(start, end)
        first = bisect_right(cuts, start)  # the first cut inside the range
        last = bisect_left(cuts, end) - 1  # the last one
        if first > last and not 0 < first < len(cuts):
            return self._count_text(start, end)
        sums = self._line_sums
        if sums is None:
            lines = (self._count_text(lo, hi) for lo, hi in itertools.pairwise(cuts))
            sums = self._line_sums = [0, *itertools.accumulate(lines)]
        if first > last:
            return self._count_within_line(start, end, first, sums)
        return (
            self._count_head(start, first, sums)
            + sums[last]
            - sums[first]
            + self._count_tail(last, end, sums)
        )

    def _count_within_line(self, start: int, end: int, first: int, sums: list[int]) -> int:
        """Tokens of a range inside the whole line that ends at cut ``first``:
        the line's count, less its parts before the range's first word end and
        after its last one, plus the range's own parts there."""
        cuts = self.cuts
        words = list(WORD_END.finditer(self.data, start, end))
        if not words:
            return self._count_text(start, end)
        line_start, line_end = cuts[first - 1], cuts[first]
        head, tail = words[0].end(), words[-1].end()
        line = sums[first] - sums[first - 1]
        return (
            line
            - self._count_text(line_start, head)
            - self._count_text(tail, line_end)
            + self._count_text(start, head)
            + self._count_text(tail, end)
        )

    def _count_head(self, start: int, first: int, sums: list[int]) -> int:
        """Tokens of ``start`` up to the line cut ``first``: from the whole line's
        count when ``start`` is inside a whole line and a word end follows it
        (both split the count exactly), so only the line's first word is counted."""
        cuts = self.cuts
        cut = cuts[first]
        if first > 0:
            line_start = cuts[first - 1]
            line = sums[first] - sums[first - 1]
            if start == line_start:
                return line
            word = WORD_END.search(self.data, start, cut)
            if word is not None:
                split = word.end()
                return self._count_text(start, split) + line - self._count_text(line_start, split)
        return self._count_text(start, cut)

    def _count_tail(self, last: int, end: int, sums: list[int]) -> int:
        """Tokens of the line cut ``last`` up to ``end``, inside a line: from the
        whole line's count and its last word end before ``end``."""
        cuts = self.cuts
        line_start = cuts[last]
        if last + 1 < len(cuts):
            split = None
            for word in WORD_END.finditer(self.data, line_start, end):
                split = word.end()
            if split is not None:
                line = sums[last + 1] - sums[last]
                return line - self._count_text(split, cuts[last + 1]) + self._count_text(split, end)
        return self._count_text(line_start, end)

    def _count_text(self, lo: int, hi: int) -> int:
        piece = self.data[lo:hi]
        tokens = self._text_counts.get(piece)
        if tokens is None:
            if len(self._text_counts) >= _TEXT_COUNTS_LIMIT:
                self._text_counts.clear()
            tokens = self._text_counts[piece] = self.counter.count(piece.decode("utf-8"))
        return tokens


def line_cuts(data: bytes) -> list[int]:
    """Where ``LINE_CUT`` matches end: just after each ``\\r`` or ``\\n`` whose next
    line starts with spaces or tabs and then a printable ASCII character."""
    codes = np.frombuffer(data, dtype=np.uint8)
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
    return after_break[printable[solid]].tolist()  # type: ignore[no-any-return]
