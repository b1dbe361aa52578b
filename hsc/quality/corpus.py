"""The retrieval task, in the manner of CodeSearchNet, built from code already on the machine.

Each query is the first sentence of a function's docstring (or doc comment),
at least ``MIN_WORDS`` words, for a function of at least ``MIN_LINES`` lines.
The corpus is a copy of the code with every docstring and doc comment blanked
(only its line breaks kept), so line numbers do not
move and the answer cannot be found by copying words. A retrieved leaf is a
hit when its lines overlap the target function's.

The docstring finder is small and kept here on purpose: it walks the same
tree-sitter trees as :mod:`hsc.chunk.parse` and could later read stored
per-definition facts instead.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sysconfig
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hsc.chunk.doctext import comment_lines
from hsc.chunk.grammar import SCRIPT_LANGUAGES, container_body, function_value
from hsc.chunk.grammar import definition_name as grammar_definition_name
from hsc.chunk.ingest import walk_repository
from hsc.chunk.languages import LANGUAGE_TABLES, LanguageTables
from hsc.chunk.node_types import CONTAINER_TYPES, DEFINITION_KINDS
from hsc.chunk.parse import parser_for

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
FUNCTION_TYPES = frozenset(
    {
        "function_definition",  # python
        "function_declaration",  # go, js, ts
        "method_declaration",  # go, java
        "function_item",  # rust
        "constructor_declaration",  # java
        "method_definition",  # js, ts
        "generator_function_declaration",
    }
)
COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# The second query kind: a comment of prose inside a function body, at least this many words.
# The region kinds: a class docstring's first sentence asks for the class's lines (in the languages
# with doc comments, a type's: type_targets), a Python module docstring's for the whole file
# (hsc.quality.regions scores the answers).
QUERY_KINDS = ("docstring", "comment", "class", "module")
MIN_COMMENT_WORDS = 6
_WORD = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")
_PRAGMAS = ("noqa", "type:", "pragma", "pylint", "fmt:", "nosec", "eslint", "ts-", "nolint", "go:", "lint:")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


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


def first_sentence(doc: str) -> str:
    """The doc's first sentence, on one line: up to the first blank line and
    the first sentence end, whichever comes first."""
    paragraph = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    text = " ".join(paragraph.split())
    return _SENTENCE_END.split(text, maxsplit=1)[0].strip()


def _python_doc(node: Any) -> Any:
    """The docstring node (a ``string``) of a Python function or class, or None."""
    body = node.child_by_field_name("body")
    if body is None:
        return None
    for child in body.named_children:
        if child.type == "comment":
            continue
        return _as_string(child)
    return None


def _as_string(node: Any) -> Any:
    """The string a statement consists of (this grammar gives it bare or
    wrapped in an expression statement), or None."""
    if node.type == "expression_statement" and node.named_child_count == 1:
        node = node.named_children[0]
    return node if node.type == "string" else None


def _string_content(node: Any) -> tuple[int, int]:
    """Byte range inside a Python string's quotes."""
    parts = [c for c in node.children if c.type == "string_content"]
    if parts:
        return parts[0].start_byte, parts[-1].end_byte
    return node.start_byte, node.start_byte


def _comment_block(node: Any, language: str) -> list[Any]:
    """The doc comment nodes directly above a definition (adjacent lines)."""
    anchor = node.parent if node.parent is not None and node.parent.type == "export_statement" else node
    block: list[Any] = []
    sibling = anchor.prev_named_sibling
    line = anchor.start_point[0]
    while sibling is not None and sibling.type in COMMENT_TYPES and sibling.end_point[0] >= line - 1:
        block.insert(0, sibling)
        line = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    if not block:
        return []
    text = block[-1].text.decode("utf-8", "replace")
    if language in ("java", "javascript", "typescript", "tsx"):
        return [block[-1]] if text.startswith("/**") else []
    if language == "rust":
        return [c for c in block if c.text.startswith(b"///")]
    return block  # go: any // comment block directly above


def _comment_text(nodes: list[Any]) -> str:
    lines = []
    for node in nodes:
        for line in node.text.decode("utf-8", "replace").splitlines():
            line = line.strip()
            line = re.sub(r"^(/\*\*|/\*|\*/|///|//!|//|\*|#+)", "", line)
            line = re.sub(r"\*/$", "", line).strip()
            if line.startswith("@"):  # javadoc tags end the description
                return "\n".join(lines)
            lines.append(line)
    return "\n".join(lines)


def definition_name(node: Any) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None else ""


def _tabled_doc(node: Any, tables: LanguageTables) -> list[Any]:
    """The doc comment nodes directly above a definition of a tabled language: a ``/**`` block,
    or the run of line comments that start with one of its doc prefixes (``///``, ``#'``)."""
    block: list[Any] = []
    sibling = node.prev_named_sibling
    line = node.start_point[0]
    while sibling is not None and sibling.type in tables.comments and sibling.end_point[0] >= line - 1:
        block.insert(0, sibling)
        line = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    if not block:
        return []
    if "/**" in tables.doc_prefixes and block[-1].text.startswith(b"/**"):
        return [block[-1]]
    prefixes = tuple(p.encode() for p in tables.doc_prefixes if p != "/**")
    if prefixes == (b"---",):  # Lua: a doc block opens with ---, goes on with --
        return block if block[0].text.startswith(b"---") else []
    return [c for c in block if prefixes and c.text.startswith(prefixes)]


def _tabled_text(nodes: list[Any]) -> str:
    lines = [line for node in nodes for line in comment_lines(node.text.decode("utf-8", "replace"))]
    tag = next((i for i, line in enumerate(lines) if line.startswith("@")), len(lines))
    return "\n".join(lines[:tag])


def _tabled_docs(
    data: bytes, root: Any, tables: LanguageTables
) -> tuple[list[tuple[Any, str]], list[tuple[int, int]]]:
    functions: list[tuple[Any, str]] = []
    blanks: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        kind = tables.kind(data, node)
        if kind is None:
            continue
        comments = _tabled_doc(node, tables)
        blanks.extend((c.start_byte, c.end_byte) for c in comments)
        if comments and kind in ("function", "method"):
            functions.append((node, _tabled_text(comments)))
    return functions, blanks


def find_docs(
    data: bytes, language: str, tree: Any = None
) -> tuple[list[tuple[Any, str]], list[tuple[int, int]]]:
    """Functions with their doc text, and every doc byte range to blank
    (functions', classes' and modules' alike). ``tree``: ``data`` already parsed."""
    tree = tree or parser_for(language).parse(data)
    tables = LANGUAGE_TABLES.get(language)
    if tables is not None:
        return _tabled_docs(data, tree.root_node, tables)
    functions: list[tuple[Any, str]] = []
    blanks: list[tuple[int, int]] = []
    stack = [tree.root_node]
    if language == "python":
        module_doc = next((c for c in tree.root_node.named_children if c.type != "comment"), None)
        string = _as_string(module_doc) if module_doc is not None else None
        if string is not None:
            blanks.append(_string_content(string))
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if language == "python":
            if node.type not in ("function_definition", "class_definition"):
                continue
            string = _python_doc(node)
            if string is None:
                continue
            lo, hi = _string_content(string)
            blanks.append((lo, hi))
            if node.type == "function_definition":
                functions.append((node, data[lo:hi].decode("utf-8", "replace")))
        elif (
            node.type in FUNCTION_TYPES
            or node.type in ("class_declaration", "struct_item", "type_declaration")
            or (language in SCRIPT_LANGUAGES and script_function(node))
        ):
            comments = _comment_block(node, language)
            if not comments:
                continue
            blanks.extend((c.start_byte, c.end_byte) for c in comments)
            if node.type in FUNCTION_TYPES or node.type in SCRIPT_STATEMENTS:
                functions.append((node, _comment_text(comments)))
    return functions, blanks


# Statements that define a JavaScript function by naming a function value (hsc.chunk.grammar).
SCRIPT_STATEMENTS = frozenset({"expression_statement", "lexical_declaration", "variable_declaration", "pair"})


def script_function(node: Any) -> bool:
    """``X.y = function``, ``exports.f = () =>``, ``const f = () =>``, ``{ f: function }``: a function
    value given a name by the statement (not a class or an object)."""
    node_type = node.type
    if node_type not in SCRIPT_STATEMENTS:
        return False
    if node_type == "expression_statement":
        # Read here, not through the chunker's tables: the queries stay the same whatever it reads.
        inner = node.named_child(0) if node.named_child_count == 1 else None
        is_assignment = inner is not None and inner.type == "assignment_expression"
        value = inner.child_by_field_name("right") if is_assignment else None
    elif node_type == "pair":
        value = node.child_by_field_name("value")
    else:
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        value = declarators[0].child_by_field_name("value") if len(declarators) == 1 else None
    function = function_value(value)
    return function is not None and function.type != "class"


def _inside_function(node: Any) -> Any:
    """The innermost function whose body holds ``node``, or None."""
    parent = node.parent
    while parent is not None:
        if parent.type in FUNCTION_TYPES:
            return parent
        parent = parent.parent
    return None


def _is_prose(text: str) -> bool:
    """A comment that says something in words, not commented-out code or a pragma."""
    tokens = text.split()
    words = [t for t in tokens if _WORD.fullmatch(t.strip(".,;:!?()'\"`"))]
    return (
        len(words) >= MIN_COMMENT_WORDS
        and len(words) >= 0.7 * len(tokens)
        and not text.lower().startswith(_PRAGMAS)
    )


def find_body_comments(
    tree: Any, docs: list[tuple[int, int]]
) -> list[tuple[Any, str, tuple[int, int], tuple[int, int]]]:
    """Comment blocks of prose inside function bodies (adjacent comment lines joined),
    doc comments (``docs``' byte ranges) left out: (function, first sentence, the
    block's byte range, the target's first and last line, 1-based). The target
    runs from the comment to the statement it sits above: the leaf holding it
    overlaps those lines."""
    found = []
    consumed: set[int] = set()  # start bytes of comments already read as part of a block
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type not in COMMENT_TYPES or node.start_byte in consumed:
            continue
        block, sibling = [node], node.next_named_sibling
        while (
            sibling is not None
            and sibling.type in COMMENT_TYPES
            and sibling.start_point[0] == block[-1].end_point[0] + 1
        ):
            block.append(sibling)
            sibling = sibling.next_named_sibling
        consumed.update(comment.start_byte for comment in block)
        lo, hi = node.start_byte, block[-1].end_byte
        function = _inside_function(node)
        if function is None or any(start < hi and lo < end for start, end in docs):
            continue
        sentence = first_sentence(_comment_text(block))
        if _is_prose(sentence):
            last = sibling.start_point[0] if sibling is not None else block[-1].end_point[0]
            found.append((function, sentence, (lo, hi), (node.start_point[0] + 1, last + 1)))
    return found


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
            elif kind == "class":
                targets, type_blanks = type_targets(tree, data, out_path, language)
                blanks = blanks + type_blanks
            elif kind == "module":
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
        string = _as_string(first) if first is not None else None
        if string is None:
            return []
        lo, hi = _string_content(string)
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
        string = _python_doc(node)
        if string is None:
            continue
        lo, hi = _string_content(string)
        sentence = first_sentence(data[lo:hi].decode("utf-8", "replace"))
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        if end - start + 1 >= MIN_LINES and _usable(sentence):
            targets.append(Target(sentence, path, start, end, definition_name(node)))
    return targets


# The ``class`` kind in languages with doc comments above definitions: the definitions a type
# question asks for (a class, interface, struct, enum or trait, by the chunker's kinds; an ``impl``
# block is not the type's declaration), and Go's ``type Name struct|interface`` (one spec).
TYPE_QUESTION_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})


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
        comments = _comment_block(node, language) if is_type else []
        if not comments:
            continue
        blanks.extend((c.start_byte, c.end_byte) for c in comments)
        name = grammar_definition_name(data, node) or ""
        sentence = first_sentence(_comment_text(comments))
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
