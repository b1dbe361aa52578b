"""A context pack: the code a query asked for and what that code depends on, within a token budget.

:class:`ContextSpan` is one run of lines of one file and why it is there; :class:`ContextPack`
holds the spans (no two share a line, their tokens sum to at most the budget), renders them
for a prompt and as the ``--json`` contract. The spans are chosen by
:func:`hsc.search.assemble.assemble_pack`; :meth:`hsc.api.Index.context` runs the query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What a span is in the pack: a retrieved leaf; the rest of the definition a hit is one piece of;
# a definition a span depends on; a signature-and-doc stand-in for a definition that does not fit
# whole; the hit's group (only when groups are asked for).
SPAN_ROLES = ("hit", "definition", "uses", "outline", "parent")
GAP_MARK = "  ⋮"


@dataclass(frozen=True)
class ContextSpan:
    """Lines ``start_line..end_line`` (1-based, inclusive) of ``path`` (relative to the repository).

    ``tokens`` is the cl100k count of exactly ``text``: the lines themselves joined by newlines,
    or for an ``outline`` the stand-in (signature and first doc sentence) that replaces them.
    """

    path: str
    start_line: int
    end_line: int
    role: str
    tokens: int
    text: str
    leaf_ids: tuple[str, ...] = ()
    score: float | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """The span as the ``--json`` contract gives it (without its text)."""
        out: dict[str, Any] = {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "role": self.role,
            "tokens": self.tokens,
        }
        if self.leaf_ids:
            out["leaf_ids"] = list(self.leaf_ids)
        if self.score is not None:
            out["score"] = round(float(self.score), 4)
        out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class ContextPack:
    """The spans of one query's context, grouped by file (files in the order their first span was
    chosen), each file's spans in reading order."""

    query: str
    budget: int
    mode: str
    spans: tuple[ContextSpan, ...] = ()

    @property
    def tokens(self) -> int:
        """The budget used: the sum of the spans' tokens (never above ``budget``)."""
        return sum(span.tokens for span in self.spans)

    @property
    def text(self) -> str:
        """The spans rendered for a prompt: a header per file, each line numbered, a gap marked."""
        return render(self.spans)

    def by_role(self) -> dict[str, list[ContextSpan]]:
        out: dict[str, list[ContextSpan]] = {role: [] for role in SPAN_ROLES}
        for span in self.spans:
            out.setdefault(span.role, []).append(span)
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``python -m hsc context --json`` object."""
        return {
            "query": self.query,
            "budget": self.budget,
            "tokens": self.tokens,
            "mode": self.mode,
            "spans": [span.to_json() for span in self.spans],
            "text": self.text,
        }


def render(spans: tuple[ContextSpan, ...] | list[ContextSpan]) -> str:
    """``### path`` then each span's lines as ``  42 | code``; a gap between spans is marked
    ``⋮``, an outline's lines as ``   ~ | signature`` (they stand for lines not shown)."""
    blocks: list[str] = []
    last_path, last_end = None, 0
    width = len(str(max((span.end_line for span in spans), default=1)))
    lines: list[str] = []
    for span in spans:
        if span.path != last_path:
            if lines:
                blocks.append("\n".join(lines))
            lines = [f"### {span.path}"]
            last_path, last_end = span.path, 0
            if span.start_line > 1:
                lines.append(GAP_MARK)
        elif span.start_line > last_end + 1:
            lines.append(GAP_MARK)
        if span.role == "outline":
            lines.append(f"{'~':>{width}} | # lines {span.start_line}-{span.end_line}, outline:")
            lines.extend(f"{'~':>{width}} | {line}" for line in span.text.split("\n"))
        else:
            lines.extend(
                f"{number:>{width}} | {line}"
                for number, line in enumerate(span.text.split("\n"), start=span.start_line)
            )
        last_end = span.end_line
    if lines:
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
