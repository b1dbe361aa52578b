"""Where each language keeps a definition's doc, read from the syntax tree: Python's docstrings,
the doc comments above a definition in Go, Rust, Java, JavaScript and TypeScript, the tabled
languages' doc prefixes, and prose comments inside a function body (the benchmark's queries)."""

from __future__ import annotations

import re
from typing import Any

from hsc.chunk.doctext import comment_lines
from hsc.chunk.grammar import SCRIPT_LANGUAGES, function_value
from hsc.chunk.languages import LANGUAGE_TABLES, LanguageTables
from hsc.chunk.parse import parser_for

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
MIN_COMMENT_WORDS = 6
_WORD = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")
_PRAGMAS = ("noqa", "type:", "pragma", "pylint", "fmt:", "nosec", "eslint", "ts-", "nolint", "go:", "lint:")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(doc: str) -> str:
    """The doc's first sentence, on one line: up to the first blank line and
    the first sentence end, whichever comes first."""
    paragraph = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    text = " ".join(paragraph.split())
    return _SENTENCE_END.split(text, maxsplit=1)[0].strip()


def python_doc(node: Any) -> Any:
    """The docstring node (a ``string``) of a Python function or class, or None."""
    body = node.child_by_field_name("body")
    if body is None:
        return None
    for child in body.named_children:
        if child.type == "comment":
            continue
        return as_string(child)
    return None


def as_string(node: Any) -> Any:
    """The string a statement consists of (this grammar gives it bare or
    wrapped in an expression statement), or None."""
    if node.type == "expression_statement" and node.named_child_count == 1:
        node = node.named_children[0]
    return node if node.type == "string" else None


def string_content(node: Any) -> tuple[int, int]:
    """Byte range inside a Python string's quotes."""
    parts = [c for c in node.children if c.type == "string_content"]
    if parts:
        return parts[0].start_byte, parts[-1].end_byte
    return node.start_byte, node.start_byte


def comment_block(node: Any, language: str) -> list[Any]:
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


def comment_text(nodes: list[Any]) -> str:
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
        string = as_string(module_doc) if module_doc is not None else None
        if string is not None:
            blanks.append(string_content(string))
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if language == "python":
            if node.type not in ("function_definition", "class_definition"):
                continue
            string = python_doc(node)
            if string is None:
                continue
            lo, hi = string_content(string)
            blanks.append((lo, hi))
            if node.type == "function_definition":
                functions.append((node, data[lo:hi].decode("utf-8", "replace")))
        elif (
            node.type in FUNCTION_TYPES
            or node.type in ("class_declaration", "struct_item", "type_declaration")
            or (language in SCRIPT_LANGUAGES and script_function(node))
        ):
            comments = comment_block(node, language)
            if not comments:
                continue
            blanks.extend((c.start_byte, c.end_byte) for c in comments)
            if node.type in FUNCTION_TYPES or node.type in SCRIPT_STATEMENTS:
                functions.append((node, comment_text(comments)))
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
        sentence = first_sentence(comment_text(block))
        if _is_prose(sentence):
            last = sibling.start_point[0] if sibling is not None else block[-1].end_point[0]
            found.append((function, sentence, (lo, hi), (node.start_point[0] + 1, last + 1)))
    return found
