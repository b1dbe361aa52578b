"""The retrieval task, in the manner of CodeSearchNet, built from code already on the machine.

Each query is the first sentence of a function's docstring (or doc comment),
at least ``MIN_WORDS`` words, for a function of at least ``MIN_LINES`` lines.
The corpus is a copy of the code with every docstring and doc comment blanked
(only its line breaks kept), so line numbers do not
move and the answer cannot be found by copying words. A retrieved leaf is a
hit when its lines overlap the target function's.

Where each language keeps its docs is read by :mod:`hsc.quality.doc_finder`, from the same
tree-sitter trees as :mod:`hsc.chunk.parse`.
"""

from __future__ import annotations

import json
import random
import shutil
import sysconfig
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hsc.chunk.grammar import container_body
from hsc.chunk.grammar import definition_name as grammar_definition_name
from hsc.chunk.ingest import walk_repository
from hsc.chunk.languages import LANGUAGE_TABLES
from hsc.chunk.node_types import CONTAINER_TYPES, DEFINITION_KINDS
from hsc.chunk.parse import parser_for
from hsc.quality.doc_finder import (
    as_string,
    comment_block,
    comment_text,
    definition_name,
    find_body_comments,
    find_docs,
    first_sentence,
    python_doc,
    string_content,
)

MIN_WORDS = 4
MIN_LINES = 5
# The default corpus: standard-library packages found with sysconfig, tests left out.
STDLIB_PACKAGES = (
    "json",
    "email",
    "http",
    "logging",
    "asyncio",
    "xml",
    "unittest",
    "importlib",
    "concurrent",
    "tomllib",
)
# A smaller default for an interactive run (the app): about 200 queries over 400 leaves.
QUICK_PACKAGES = ("logging", "json", "concurrent")
# Fewer queries than this say little: a single query moves Recall@10 by 5 points.
MIN_QUERIES = 20
# Languages whose definitions and doc comments the finder reads, by file suffix.
LANGUAGES = {
    ".py": "python",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    # C#, PHP, Kotlin, Swift, Scala, Lua, R, Elixir, Julia: their doc comments as their tables say
    **{suffix: tables.name for tables in LANGUAGE_TABLES.values() for suffix in tables.extensions},
}
# The region kinds: a class docstring's first sentence asks for the class's lines (in the languages
# with doc comments, a type's: type_targets), a Python module docstring's for the whole file
# (hsc.quality.regions scores the answers).
QUERY_KINDS = ("docstring", "comment", "class", "module")


class _HasQuery(Protocol):
    @property
    def query(self) -> str: ...


Queried = TypeVar("Queried", bound=_HasQuery)


@dataclass(frozen=True)
class Target:
    """One query and the function that answers it (lines 1-based, inclusive)."""

    query: str
    path: str  # relative to the corpus root
    start_line: int
    end_line: int
    name: str


@dataclass(frozen=True)
class Corpus:
    root: Path
    targets: list[Target]
    files: int
    functions: int  # functions seen with a usable doc

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "files": self.files,
            "functions": self.functions,
            "targets": [asdict(t) for t in self.targets],
        }


def blank(data: bytes, ranges: list[tuple[int, int]]) -> bytes:
    """The text in the ranges removed except its line breaks, so every line keeps its number."""
    out, position = [], 0
    for lo, hi in sorted(ranges):
        if lo < position:  # nested or repeated range, already blanked
            continue
        out += [data[position:lo], b"\n" * data.count(b"\n", lo, hi)]
        position = hi
    out.append(data[position:])
    return b"".join(out)


def _usable(sentence: str) -> bool:
    return len(sentence.split()) >= MIN_WORDS


def _documented_files(
    sources: list[tuple[Path, str]], kind: str = "docstring"
) -> Iterator[tuple[str, bytes, list[Target]]]:
    """Each readable source file as (corpus path, text with docs blanked, its candidate
    targets of query ``kind``). For ``comment`` queries the body comments asked
    about are blanked too."""
    if kind not in QUERY_KINDS:
        raise ValueError(f"unknown query kind {kind!r}; choose one of {', '.join(QUERY_KINDS)}")
    for folder, name in sources:
        for rel_path in walk_repository(folder):
            language = LANGUAGES.get(Path(rel_path).suffix)
            if language is None or "/test" in f"/{rel_path}":
                continue
            try:
                data = (folder / rel_path).read_bytes()
                tree = parser_for(language).parse(data)
                functions, blanks = find_docs(data, language, tree)
            except (OSError, LookupError, ValueError, UnicodeDecodeError):
                continue
            out_path = f"{name}/{rel_path}" if name else rel_path
            if kind == "docstring":
                targets = [target for target, _ in doc_targets(functions, out_path, data, language)]
            elif kind in ("class", "module") and language == "python":
                targets = region_targets(tree, data, out_path, kind)
            elif kind == "class" and language in TYPE_QUESTION_LANGUAGES:
                targets, type_blanks = type_targets(tree, data, out_path, language)
                blanks = blanks + type_blanks
            elif kind in ("class", "module"):
                targets = []
            else:
                comments = find_body_comments(tree, blanks)
                blanks = blanks + [span for _, _, span, _ in comments]
                targets = [
                    Target(sentence, out_path, first, last, definition_name(function))
                    for function, sentence, _, (first, last) in comments
                ]
            yield out_path, blank(data, blanks), targets


def doc_targets(
    functions: list[tuple[Any, str]], path: str, data: bytes = b"", language: str = ""
) -> list[tuple[Target, Any]]:
    """The usable queries among ``find_docs``'s functions, each with its syntax node:
    the doc's first sentence of at least ``MIN_WORDS`` words, for a function of at
    least ``MIN_LINES`` lines. ``data`` and ``language`` name a tabled language's functions."""
    tables = LANGUAGE_TABLES.get(language)
    targets = []
    for node, doc in functions:
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        sentence = first_sentence(doc)
        function_name = definition_name(node) if tables is None else tables.definition_name(data, node) or ""
        if function_name and sentence.startswith(function_name + " "):
            sentence = sentence[len(function_name) + 1 :]  # Go's "Name does ...": not the answer's name
        if end - start + 1 >= MIN_LINES and _usable(sentence):
            targets.append((Target(sentence, path, start, end, function_name), node))
    return targets


def region_targets(tree: Any, data: bytes, path: str, kind: str) -> list[Target]:
    """Python's ``class`` queries (a class docstring's first sentence; target: the class, at least
    ``MIN_LINES`` lines) or its ``module`` query (the module docstring's; target: the whole file)."""
    if kind == "module":
        first = next((c for c in tree.root_node.named_children if c.type != "comment"), None)
        string = as_string(first) if first is not None else None
        if string is None:
            return []
        lo, hi = string_content(string)
        sentence = first_sentence(data[lo:hi].decode("utf-8", "replace"))
        lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        name = path.rsplit("/", 1)[-1]
        return [Target(sentence, path, 1, lines, name)] if _usable(sentence) else []
    targets = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type != "class_definition":
            continue
        string = python_doc(node)
        if string is None:
            continue
        lo, hi = string_content(string)
        sentence = first_sentence(data[lo:hi].decode("utf-8", "replace"))
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        if end - start + 1 >= MIN_LINES and _usable(sentence):
            targets.append(Target(sentence, path, start, end, definition_name(node)))
    return targets


# The ``class`` kind in languages with doc comments above definitions: the definitions a type
# question asks for (a class, interface, struct, enum or trait, by the chunker's kinds; an ``impl``
# block is not the type's declaration), and Go's ``type Name struct|interface`` (one spec).
TYPE_QUESTION_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
# The languages whose doc comments above a type the finder reads (doc_finder.comment_block).
TYPE_QUESTION_LANGUAGES = frozenset({"go", "rust", "java", "javascript", "typescript", "tsx"})


def type_targets(
    tree: Any, data: bytes, path: str, language: str
) -> tuple[list[Target], list[tuple[int, int]]]:
    """Go, Rust, Java, JavaScript and TypeScript's ``class`` queries: a type's doc comment's first
    sentence (Go's leading name dropped, as for functions), target: the type's lines, at least
    ``MIN_LINES``; and every such type's doc comment to blank (:func:`find_docs` blanks only some)."""
    targets: list[Target] = []
    blanks: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type == "type_declaration":
            is_type = container_body(node) is not None  # Go: a struct or an interface
        else:
            is_type = node.type in CONTAINER_TYPES and DEFINITION_KINDS.get(node.type) in TYPE_QUESTION_KINDS
        comments = comment_block(node, language) if is_type else []
        if not comments:
            continue
        blanks.extend((c.start_byte, c.end_byte) for c in comments)
        name = grammar_definition_name(data, node) or ""
        sentence = first_sentence(comment_text(comments))
        if name and sentence.startswith(name + " "):
            sentence = sentence[len(name) + 1 :]
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        if end - start + 1 >= MIN_LINES and _usable(sentence):
            targets.append(Target(sentence, path, start, end, name))
    return targets, blanks


def unique_queries(targets: list[Queried]) -> list[Queried]:
    """One query per sentence: a sentence shared by several functions has no single answer."""
    counts: dict[str, int] = {}
    for target in targets:
        counts[target.query.lower()] = counts.get(target.query.lower(), 0) + 1
    return [t for t in targets if counts[t.query.lower()] == 1]


@dataclass(frozen=True)
class CorpusSurvey:
    """What a corpus would give, without building it."""

    files: int
    bytes: int  # of the files read, docs blanked
    functions: int  # long enough functions with a usable doc (comment kind: usable comments)
    queries: int  # of those, the ones with a sentence of their own


def survey_corpus(sources: list[tuple[Path, str]], kind: str = "docstring") -> CorpusSurvey:
    """Count the files and usable queries of ``sources`` (parses every file, writes nothing)."""
    files = size = 0
    targets: list[Target] = []
    for _, data, found in _documented_files(sources, kind):
        files += 1
        size += len(data)
        targets += found
    return CorpusSurvey(files, size, len(targets), len(unique_queries(targets)))


def build_corpus(
    sources: list[tuple[Path, str]], root: Path, queries: int | None, seed: int, kind: str = "docstring"
) -> Corpus:
    """Copy each ``(folder, name)`` source to ``root/name`` with docs blanked,
    and draw up to ``queries`` targets of query ``kind`` (all when None) with ``seed``."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    targets: list[Target] = []
    files = 0
    for out_path, blanked, found in _documented_files(sources, kind):
        destination = root / out_path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(blanked)
        files += 1
        targets += found
    targets.sort(key=lambda t: (t.path, t.start_line))
    functions_seen = len(targets)
    targets = unique_queries(targets)
    if queries is not None and queries < len(targets):
        targets = sorted(random.Random(seed).sample(targets, queries), key=lambda t: (t.path, t.start_line))
    corpus = Corpus(root, targets, files, functions_seen)
    (root.parent / "queries.json").write_text(json.dumps(corpus.to_json(), indent=1))
    return corpus


def stdlib_sources(packages: tuple[str, ...] = STDLIB_PACKAGES) -> list[tuple[Path, str]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [(stdlib / name, name) for name in packages if (stdlib / name).is_dir()]


def is_hit(target: Target, path: str, start_line: int, end_line: int) -> bool:
    """A retrieved span answers the target when it is in the same file and its lines overlap."""
    return path == target.path and start_line <= target.end_line and end_line >= target.start_line
