"""Definition vectors: the texts a leaf is embedded by besides its own.

A leaf that holds definitions inside it (small functions merged
together, a small class kept whole with its methods, a function with the
comment above it) is one vector for several things, and a query about one of
them meets a blend. Each definition such a leaf holds is embedded alone too,
as a leaf of its own would be (its scope line, then its lines); a search
scores the leaf by the best of its vectors (:mod:`hsc.search.two_stage`).
The definitions are the ones the chunker read from the syntax tree with the
leaves (:attr:`hsc.model.ParsedFile.definitions`); nothing is parsed again.

Measured on the standard-library benchmark (README, *Definition vectors*):
the flat search's Recall@10 +0.027 on docstring queries, the default
``hybrid`` +0.010.
"""

from __future__ import annotations

import bisect

from hsc.model import Definition, Leaf

# A file's own description (its module docstring) spans the file: not a definition a leaf holds.
NOT_HELD = frozenset({"file"})


def held_definitions(leaf: Leaf, definitions: list[Definition]) -> list[Definition]:
    """The outermost definitions inside ``leaf``'s lines other than one that is the whole leaf
    (a small class kept whole holds its methods; a leaf that is one function, its nested ones).
    ``definitions``: those of the leaf's file, or any part of them that holds the leaf's."""
    whole = (leaf.start_line, leaf.end_line)
    inside = [
        d
        for d in definitions
        if d.kind not in NOT_HELD
        and leaf.start_line <= d.start_line
        and d.end_line <= leaf.end_line
        and (d.start_line, d.end_line) != whole
    ]
    spans = {(d.start_line, d.end_line) for d in inside}
    return [
        d
        for d in inside
        if not any(
            lo <= d.start_line and d.end_line <= hi and (lo, hi) != (d.start_line, d.end_line)
            for lo, hi in spans
        )
    ]


def definition_texts(leaf: Leaf, definitions: list[Definition]) -> list[str]:
    """What the encoder is given for each definition ``leaf`` holds: its scope, then its lines
    (the first without indentation, as a leaf of its own starts); each text once."""
    lines = leaf.text.split("\n")
    texts = []
    for d in held_definitions(leaf, definitions):
        body = "\n".join(lines[d.start_line - leaf.start_line : d.end_line - leaf.start_line + 1])
        texts.append(f"{d.scope}\n{body.lstrip()}")
    return list(dict.fromkeys(texts))


def file_definition_texts(leaves: list[Leaf], definitions: list[Definition]) -> list[list[str]]:
    """:func:`definition_texts` of each of a file's leaves (empty lists for most), each leaf
    looking only at the definitions that start within its lines."""
    ordered = sorted(definitions, key=lambda d: d.start_line)
    starts = [d.start_line for d in ordered]
    texts = []
    for leaf in leaves:
        lo = bisect.bisect_left(starts, leaf.start_line)
        hi = bisect.bisect_right(starts, leaf.end_line)
        texts.append(definition_texts(leaf, ordered[lo:hi]) if hi - lo else [])
    return texts
