"""Training pairs for the encoder: a doc's first sentence against the code it documents.

The doc rules are the quality corpus's (:mod:`hsc.quality.corpus`): the same
doc finder (Python docstrings; Go, Rust, Java, JavaScript and TypeScript doc
comments), the same first sentence, the same minimum words and lines, and
one pair per sentence. The code side is what hsc embeds for a leaf, the
scope then the text, with every doc in the file blanked, so the model never
learns to copy the query out of the code. With ``body_comments``, a prose
comment inside a function body (the corpus's comment queries) is paired with
the function too, the comments so paired blanked as well. With ``class_pairs``, a Python class
docstring's first sentence (the corpus's class queries) is paired with the class's outline, the
text hsc embeds for a definition that holds others (:mod:`hsc.embed.outlines`).
"""

from __future__ import annotations

import hashlib
import random
import sysconfig
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hsc.chunk.ingest import walk_repository
from hsc.chunk.parse import Cut, cut_file, parser_for
from hsc.chunk.tokens import get_counter
from hsc.embed.outlines import file_outlines, module_scope
from hsc.model import Definition
from hsc.params import Parameters
from hsc.quality.corpus import (
    LANGUAGES,
    STDLIB_PACKAGES,
    blank,
    doc_targets,
    region_targets,
    unique_queries,
)
from hsc.quality.doc_finder import find_body_comments, find_docs

# Standard-library folders that are not library code to learn from: tests, the
# IDE, installed third-party packages, and binary or build folders.
STDLIB_SKIPPED = frozenset(
    {
        "test",
        "idlelib",
        "site-packages",
        "dist-packages",
        "lib-dynload",
        "__pycache__",
        "ensurepip",
        "turtledemo",
    }
)


@dataclass(frozen=True)
class Pair:
    """One training example: the query, the code it names, and where that code is."""

    query: str
    code: str  # scope line, then the function's text with docs blanked
    path: str  # source name / relative path: the unit a split keeps together
    negative: str = ""  # a wrong code the query is easily mistaken for (hsc.encoder.negatives)


def cut_of(data: bytes, language: str, path: str) -> Cut:
    """The file as hsc's chunker cuts it: its leaves and the definitions with the qualified scopes
    its leaves carry (:func:`hsc.chunk.parse.cut_file`, the one reading of the tree)."""
    return cut_file(data.decode("utf-8", "replace"), path, language, Parameters(), get_counter())


def class_outline_pairs(cut: Cut, tree: Any, data: bytes, path: str) -> list[Pair]:
    """A Python file's class questions (the corpus's ``class`` kind, read from ``tree`` of ``data``)
    paired with their classes' outlines, made from the file's ``cut`` as an index makes them
    (hsc.index.outlines: every outermost definition that holds others)."""
    targets = region_targets(tree, data, path, "class")
    if not targets:
        return []
    starts = [leaf.start_line for leaf in cut.leaves]
    ends = [leaf.end_line for leaf in cut.leaves]
    scope = module_scope(path, cut.definitions, [leaf.scope for leaf in cut.leaves])
    outlines = file_outlines(scope, cut.definitions, starts, ends, min_leaves=1)
    by_end = {end: (start, text) for (start, end), text in outlines.items()}
    pairs = []
    for target in targets:  # a decorated class's definition starts at its decorator
        start, text = by_end.get(target.end_line, (0, ""))
        if text and 0 < start <= target.start_line:
            pairs.append(Pair(target.query, text, path))
    return pairs


def scope_at(definitions: list[Definition], start_line: int, end_line: int) -> str | None:
    """The scope of the innermost definition that ends on ``end_line`` and starts on or
    before ``start_line`` (a decorated function starts at its decorator)."""
    around = [d for d in definitions if d.end_line == end_line and d.start_line <= start_line]
    return max(around, key=lambda d: d.start_line).scope if around else None


def file_pairs(
    data: bytes, language: str, path: str, body_comments: bool = False, class_pairs: bool = False
) -> list[Pair]:
    """The pairs of one file's text (``path`` as it should appear in the scope): its
    docs', with ``body_comments`` its functions' prose comments, and with ``class_pairs``
    its Python classes' (:func:`class_outline_pairs`)."""
    tree = parser_for(language).parse(data)
    functions, blanks = find_docs(data, language, tree)
    cut = cut_of(data, language, path)
    definitions = cut.definitions
    lines = blank(data, blanks).decode("utf-8", "replace").split("\n")
    found = [
        (target.query, target.start_line, target.end_line, lines)
        for target, _node in doc_targets(functions, path, data, language)
    ]
    comments = find_body_comments(tree, blanks) if body_comments else []
    if comments:
        all_blanked = blanks + [span for _, _, span, _ in comments]
        comment_lines = blank(data, all_blanked).decode("utf-8", "replace").split("\n")
        found += [
            (sentence, function.start_point[0] + 1, function.end_point[0] + 1, comment_lines)
            for function, sentence, _span, _target in comments
        ]
    pairs = []
    for query, start_line, end_line, text_lines in found:
        scope = scope_at(definitions, start_line, end_line)
        if scope is None:  # not a definition hsc's leaves would name
            continue
        code = "\n".join(text_lines[start_line - 1 : end_line])
        # A leaf starts at its definition, so its first line has no indentation.
        pairs.append(Pair(query, f"{scope}\n{code.lstrip()}", path))
    if class_pairs and language == "python":
        pairs += class_outline_pairs(cut, tree, data, path)
    return pairs


def _files(source: Path, name: str) -> Iterator[tuple[Path, str]]:
    if source.is_file():
        yield source, name or source.name
        return
    for rel_path in walk_repository(source):
        yield source / rel_path, f"{name}/{rel_path}" if name else rel_path


def mine_pairs(
    sources: Iterable[tuple[Path, str]], body_comments: bool = False, class_pairs: bool = False
) -> list[Pair]:
    """Pairs from every readable source file of ``sources`` (folders or files, each
    with the name its paths start with), tests left out, one per query sentence
    (case-insensitive) and one per code text, in path order (``body_comments`` and
    ``class_pairs``: see :func:`file_pairs`)."""
    pairs: list[Pair] = []
    for source, name in sources:
        for file, path in _files(source, name):
            language = LANGUAGES.get(file.suffix)
            if language is None or "/test" in f"/{path}":
                continue
            try:
                pairs += file_pairs(file.read_bytes(), language, path, body_comments, class_pairs)
            except (OSError, LookupError, ValueError, UnicodeDecodeError):
                continue
    return dedupe(pairs)


def dedupe(pairs: list[Pair]) -> list[Pair]:
    """A sentence shared by several functions has no single answer, and a code text
    seen twice would be its own in-batch negative: keep neither twice."""
    kept = unique_queries(pairs)
    seen: set[str] = set()
    out = []
    for pair in kept:
        digest = hashlib.sha1(pair.code.encode()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(pair)
    return out


def split_by_file(pairs: list[Pair], held_out: float, seed: int) -> tuple[list[Pair], list[Pair]]:
    """(train, held out): a share ``held_out`` of the files, drawn with ``seed``, held out whole."""
    files = sorted({p.path for p in pairs})
    count = round(len(files) * held_out)
    chosen = set(random.Random(seed).sample(files, count)) if count else set()
    return [p for p in pairs if p.path not in chosen], [p for p in pairs if p.path in chosen]


def stdlib_training_sources(excluded: tuple[str, ...] = STDLIB_PACKAGES) -> list[tuple[Path, str]]:
    """The standard library outside the quality benchmark's packages (``excluded``),
    its tests and :data:`STDLIB_SKIPPED`: top-level modules and packages alike."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources = []
    for entry in sorted(stdlib.iterdir()):
        stem = entry.name.removesuffix(".py")
        if stem in excluded or entry.name in STDLIB_SKIPPED or entry.name.startswith((".", "config-")):
            continue
        if entry.is_dir() or entry.suffix == ".py":
            sources.append((entry, entry.name))
    return sources
