"""Stage 1b: cut one file's text into leaves.

Source code is parsed with tree-sitter once: ``hsc.chunk.cut`` cuts it along the
syntax tree and ``hsc.chunk.facts`` reads its definitions and names from the same
tree. Markdown is cut at headings and paragraphs and anything else at blank
lines (``hsc.chunk.prose``). Both hand their atoms to ``hsc.chunk.packing``, which packs
them into leaves that never overlap and cover every non-blank line.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Any

from tree_sitter_language_pack import get_parser

from hsc.chunk.components import COMPONENT_LANGUAGES, parse_scripts, script_language, script_parts
from hsc.chunk.cut import SyntaxCutter
from hsc.chunk.facts import FactReader
from hsc.chunk.grammar import AST_LANGUAGES, go_package_scope
from hsc.chunk.prose import ProseCutter
from hsc.chunk.tokens import TokenCounter
from hsc.model import Definition, ImportBinding, Leaf, LeafFacts
from hsc.params import Parameters

__all__ = [
    "AST_LANGUAGES",
    "Cut",
    "chunk_data",
    "chunk_fallback",
    "cut_file",
    "module_name",
    "parse_source",
    "parser_for",
]


def module_name(rel_path: str) -> str:
    """Dotted module name of a file: ``inventory/pricing.py`` -> ``inventory.pricing``;
    an ``__init__.py`` names its package."""
    parts = [part for part in rel_path.replace("\\", "/").split("/") if part not in ("", ".", "..")]
    if not parts:
        return rel_path or "module"
    *directories, file_name = parts
    stem = file_name.rsplit(".", 1)[0] if "." in file_name.lstrip(".") else file_name
    if stem == "__init__" and directories:
        stem = ""
    # Leading dots (".github", ".eslintrc") would read as empty scope components.
    names = [name.lstrip(".") or name for name in [*directories, stem] if name]
    return ".".join(names)


def file_named_type(scope: str, language: str, params: Parameters) -> str:
    """The name a top-level type of the file is given once, by the file's scope alone: Java names a
    file after its public class, so ``Bridge.java``'s class ``Bridge`` is scoped ``...Bridge`` and its
    methods ``...Bridge.initWebView`` (java_class_scopes 'once'); its statements (``package``,
    ``import``) are then scoped by its folders, the package they declare; "" for none."""
    if language != "java" or params.java_class_scopes != "once":
        return ""
    return scope.rsplit(".", 1)[-1]


_PARSERS = threading.local()


def parser_for(language: str) -> Any:
    """A tree-sitter parser for the language, built once per thread: building
    one costs more than parsing a small file, and a parser must not be shared
    between threads (Streamlit runs each session in its own)."""
    parsers: dict[str, Any] = _PARSERS.__dict__.setdefault("by_language", {})
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = get_parser(language)  # type: ignore[arg-type]
    return parser


@dataclass(frozen=True)
class Cut:
    """One file cut into leaves, with the facts its syntax tree gave (see ``hsc.chunk.facts``)."""

    leaves: list[Leaf]
    definitions: list[Definition]
    facts: list[LeafFacts]  # parallel to leaves
    error_lines: list[int]  # 1-based lines of syntax errors
    bindings: list[ImportBinding] = field(default_factory=list)  # what its imports bind


def cut_file(source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter) -> Cut:
    """Leaves of one file in document order, the definitions and per-leaf facts
    read from the same syntax tree, and the lines of syntax errors."""
    is_component = language in COMPONENT_LANGUAGES.values()  # Vue, Svelte: see hsc.chunk.components
    if is_component or language in AST_LANGUAGES:
        try:
            parser_for(language)
        except Exception:  # a grammar missing from the installed pack: cut it as plain text
            language = "text"
        else:
            cut = _cut_component if is_component else _cut_ast
            return cut(source, rel_path, language, params, counter)
    fallback_language = language if language in ("markdown", "rst") else "text"
    leaves = chunk_fallback(source, rel_path, fallback_language, params, counter)
    return Cut(leaves, [], [LeafFacts() for _ in leaves], [])


def parse_source(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> tuple[list[Leaf], list[int]]:
    """Leaves of one file in document order, and the 1-based lines of syntax errors."""
    cut = cut_file(source, rel_path, language, params, counter)
    return cut.leaves, cut.error_lines


def construct_fine_grained_chunks_from_ast(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> tuple[list[Leaf], list[int]]:
    """Cut source code along its tree-sitter syntax tree (see the module docstring)."""
    cut = _cut_ast(source, rel_path, language, params, counter)
    return cut.leaves, cut.error_lines


def _cut_ast(source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter) -> Cut:
    data = source.encode("utf-8")
    minimum = params.minimum_for(language)  # leaf_minimums: Rust's thin methods keep neighbours
    if minimum != params.minimum_chunk_token_length:
        params = dataclasses.replace(params, minimum_chunk_token_length=minimum)
    scope = module_name(rel_path)
    file_type = file_named_type(scope, language, params)
    package = scope.rpartition(".")[0] if file_type else ""  # the folders: Java's package
    cutter = SyntaxCutter(data, params, counter, language, file_type, package)
    root = parser_for(language).parse(data).root_node  # parsed once: the cut and the facts share it
    if language == "go" and params.scope_names == "language":
        scope = go_package_scope(data, root, scope)
    if root.child_count:
        pieces = cutter.container_pieces(root.children, 0, len(data), scope, ())
    else:
        pieces = cutter.pack(cutter.line_atoms(0, len(data), root.type), scope, (), statements=True)
    leaves = cutter.leaves(cutter.merge_small(pieces), rel_path, language, "ast")
    reader = FactReader(data, language, scope, cutter.traits, cutter.overloads, file_type)
    definitions, facts = reader.read(root, leaves)
    return Cut(leaves, definitions, facts, _syntax_error_lines(root), reader.bindings)


def chunk_data(source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter) -> Cut:
    """Cut a data or generated file (:mod:`hsc.chunk.datafiles`): whole lines packed up to the
    maximum, no syntax tree read (its one "definition" may be a table of thousands of lines)."""
    data = source.encode("utf-8")
    cutter = ProseCutter(data, params, counter)
    pieces = cutter.pack(cutter.line_atoms(0, len(data), "data"), module_name(rel_path), (), statements=True)
    leaves = cutter.leaves(pieces, rel_path, language, "data")
    return Cut(leaves, [], [LeafFacts() for _ in leaves], [])


def _cut_component(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> Cut:
    """A Vue or Svelte file: its scripts cut along the script's syntax tree (see hsc.chunk.components),
    the markup between them along the component's elements."""
    data = source.encode("utf-8")
    component = parser_for(language).parse(data).root_node
    parts = script_parts(data, component)
    scripts = script_language(parts)
    root = parse_scripts(data, parts, scripts) if parts else None
    cutter = SyntaxCutter(data, params, counter, scripts)
    scope = module_name(rel_path)
    pieces = []
    position = 0
    for part in [*parts, None]:
        end = part.lo if part is not None else len(data)
        markup = [c for c in component.children if c.end_byte > position and c.start_byte < end]
        if markup:
            pieces += cutter.container_pieces(markup, position, end, scope, ())
        if part is None or root is None:
            break
        statements = [c for c in root.children if part.lo <= c.start_byte < part.hi]
        if statements:
            pieces += cutter.container_pieces(statements, part.lo, part.hi, scope, ())
        else:
            pieces += cutter.pack(cutter.line_atoms(part.lo, part.hi, "script"), scope, (), statements=True)
        position = part.hi
    leaves = cutter.leaves(cutter.merge_small(pieces), rel_path, language, "ast")
    if root is None:
        return Cut(leaves, [], [LeafFacts() for _ in leaves], _syntax_error_lines(component))
    definitions, facts = FactReader(data, scripts, scope).read(root, leaves)
    return Cut(leaves, definitions, facts, _syntax_error_lines(root))


def chunk_fallback(
    source: str, rel_path: str, language: str, params: Parameters, counter: TokenCounter
) -> list[Leaf]:
    """Cut text without a grammar: Markdown and reStructuredText into sections at headings,
    then paragraphs; anything else into blocks separated by blank lines."""
    data = source.encode("utf-8")
    cutter = ProseCutter(data, params, counter)
    scope = module_name(rel_path)
    if language == "markdown":
        pieces = cutter.markdown_pieces(scope)
        chunker = "paragraph"
    elif language == "rst":
        pieces = cutter.rst_pieces(scope)
        chunker = "paragraph"
    else:
        pieces = cutter.plain_pieces(scope)
        chunker = "lines"
    return cutter.leaves(cutter.merge_small(pieces), rel_path, language, chunker)


def _syntax_error_lines(root: Any, limit: int = 200) -> list[int]:
    """1-based lines of ERROR and MISSING nodes, in order, visiting only subtrees that have errors."""
    if not root.has_error:
        return []
    lines: set[int] = set()
    stack = [root]
    while stack and len(lines) < limit:
        node = stack.pop()
        if node.is_error or node.is_missing:
            lines.add(node.start_point[0] + 1)
        stack.extend(child for child in node.children if child.has_error or child.is_missing)
    if root.is_error and not lines:
        lines.add(root.start_point[0] + 1)
    return sorted(lines)
