"""Cutting text that has no syntax tree: Markdown and reStructuredText into
sections at headings, then paragraphs; anything else into blocks separated by
blank lines. The pieces go through the same :class:`~hsc.chunk.packing.Packer`.

reStructuredText has its own reader: a title is a line under (and maybe over) a line of one
repeated punctuation character, never an indented line nor a ``#`` line (a comment in a code
example is not a heading), and a paragraph that introduces an indented block (``::``, a
directive such as ``.. code-block:: python``) keeps that block, blank lines and all."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from hsc.chunk.packing import NON_SPACE, Packer, Piece


def _blocks(data: bytes, newlines: list[int]) -> list[tuple[int, int]]:
    """Byte intervals of runs of non-blank lines; blank lines go to the block before them."""
    blocks: list[tuple[int, int]] = []
    block_start = -1
    line_start = 0
    for line_end in [*newlines, len(data)]:
        blank = NON_SPACE.search(data, line_start, line_end) is None
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


# A reStructuredText adornment: one punctuation character repeated (docutils allows any of these).
_RST_ADORNMENT = re.compile(rb"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_RST_DIRECTIVE = re.compile(rb"^\.\.\s+[\w:.+-]+::")


class ProseCutter(Packer):
    """Cuts one file's text at headings, paragraphs and blank lines."""

    def plain_pieces(self, scope: str) -> list[Piece]:
        """Blocks of non-blank lines, each cut by lines when too big."""
        return self.block_pieces(_blocks(self.data, self.newlines), scope, (), "lines")

    def block_pieces(
        self, blocks: list[tuple[int, int]], scope: str, group: tuple[int, ...], node_type: str
    ) -> list[Piece]:
        """One piece per block; a block over the maximum is cut by lines (then tokens) and packed."""
        pieces: list[Piece] = []
        for lo, hi in blocks:
            start, end = self.trim(lo, hi)
            if end <= start:
                continue
            tokens = self.measure(start, end)
            if tokens >= 0:
                pieces.append(Piece(start, end, scope, node_type, tokens, group))
            else:
                pieces.extend(self.pack(self.line_atoms(lo, hi, node_type), scope, group, statements=True))
        return pieces

    def markdown_pieces(self, scope: str) -> list[Piece]:
        """A section per heading (and one for any text before the first);
        a section over the maximum is cut into its paragraphs."""
        return self.section_pieces(scope, self.markdown_sections(), self.markdown_paragraphs)

    def rst_pieces(self, scope: str) -> list[Piece]:
        """A section per reStructuredText title (and one for any text before the first); a section
        over the maximum is cut into its paragraphs, each keeping the indented block it introduces."""
        return self.section_pieces(scope, self.rst_sections(), self.rst_paragraphs)

    def section_pieces(
        self,
        scope: str,
        sections: list[tuple[int, int]],
        paragraphs_of: Callable[[int, int], list[tuple[int, int]]],
    ) -> list[Piece]:
        """A piece per section that fits; a longer one cut into its paragraphs."""
        pieces: list[Piece] = []
        for section_lo, section_hi in sections:
            start, end = self.trim(section_lo, section_hi)
            if end <= start:
                continue
            tokens = self.measure(start, end)
            if tokens >= 0:
                pieces.append(Piece(start, end, scope, "section", tokens, ()))
                continue
            paragraphs = paragraphs_of(section_lo, section_hi)
            pieces.extend(self.block_pieces(paragraphs, scope, (section_lo,), "paragraph"))
        return pieces

    def rst_sections(self) -> list[tuple[int, int]]:
        lines = self._lines(0, len(self.data))
        text = [self.data[lo:hi].rstrip(b"\r\n") for lo, hi in lines]
        starts = [0]
        for index in range(1, len(lines)):
            title, under = text[index - 1], text[index]
            if not _RST_ADORNMENT.match(under) or not title.strip() or title[:1] in (b" ", b"\t"):
                continue
            if _RST_ADORNMENT.match(title) or len(under.rstrip()) < min(len(title.rstrip()), 3):
                continue
            title_start = lines[index - 1][0]
            if index > 1 and text[index - 2].rstrip() == under.rstrip():  # an overline above the title
                title_start = lines[index - 2][0]
            if title_start > starts[-1]:
                starts.append(title_start)
        ends = [*starts[1:], len(self.data)]
        return list(zip(starts, ends, strict=True))

    def rst_paragraphs(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Blank-line separated blocks; an indented block after a paragraph ending in ``::`` or a
        directive joins it."""
        paragraphs: list[tuple[int, int]] = []
        block_start, first_line, last_line, introduces = -1, b"", b"", False
        for line_lo, line_hi in self._lines(lo, hi):
            line = self.data[line_lo:line_hi].rstrip(b"\r\n")
            blank = not line.strip()
            indented = line[:1] in (b" ", b"\t")
            if block_start >= 0 and introduces and (blank or indented):
                continue  # inside the block the paragraph introduced
            if blank:
                if block_start >= 0:
                    introduces = last_line.rstrip().endswith(b"::") or bool(_RST_DIRECTIVE.match(first_line))
                    if not introduces:
                        paragraphs.append((block_start, line_lo))
                        block_start = -1
                continue
            if block_start >= 0 and introduces:  # the block ended at this unindented line
                paragraphs.append((block_start, line_lo))
                block_start, introduces = -1, False
            if block_start < 0:
                block_start, first_line = line_lo, line
            last_line = line
        if block_start >= 0:
            paragraphs.append((block_start, hi))
        return paragraphs

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
            fence, inside = _fence_after(line, fence)
            if inside or fence is not None:  # no heading inside a fenced block or on its opening line
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
            fence, inside = _fence_after(line, fence)
            if inside:
                continue
            blank = not line.strip()
            if not blank and block_start < 0:
                block_start = line_lo
            elif blank and block_start >= 0:
                paragraphs.append((block_start, line_lo))
                block_start = -1
        if block_start >= 0:
            paragraphs.append((block_start, hi))
        return paragraphs


def _fence_after(line: bytes, fence: bytes | None) -> tuple[bytes | None, bool]:
    """The open code fence after ``line`` (None outside one), and whether the line
    lies inside the fence that was open before it (its closing line included).
    A fence line of the same character, at least as long, closes the open fence."""
    match = _FENCE.match(line)
    if fence is None:
        return (match.group(1) if match else None), False
    closes = match is not None and match.group(1)[:1] == fence[:1] and len(match.group(1)) >= len(fence)
    return (None if closes else fence), True


def _is_underline(line: bytes, previous_line: bytes) -> bool:
    """A setext (markdown) or rst title underline below a line of text."""
    stripped = line.strip()
    title = previous_line.strip()
    if len(stripped) < 3 or not _UNDERLINE.match(stripped) or not title:
        return False
    if _UNDERLINE.match(title) or _LIST_OR_QUOTE.match(previous_line) or _ATX_HEADING.match(previous_line):
        return False
    return line[:1] not in (b" ", b"\t")
