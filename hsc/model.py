"""Plain data carried between the pipeline's stages.

Every stage takes and returns these dataclasses; none of them knows about
SQLite, models or HTTP, so each stage can be tested and reused on its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


def content_hash(text: str) -> str:
    """Stable identity of a piece of text (hex SHA-1, 40 characters)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def common_prefix(sequences: list[list[str]]) -> list[str]:
    """The longest run of items every sequence starts with."""
    if not sequences:
        return []
    prefix = sequences[0]
    for sequence in sequences[1:]:
        size = 0
        while size < min(len(prefix), len(sequence)) and prefix[size] == sequence[size]:
            size += 1
        prefix = prefix[:size]
    return prefix


def common_scope(scopes: list[str]) -> str:
    """The dotted prefix every scope starts with ("a.b.c", "a.b.d" -> "a.b")."""
    return ".".join(common_prefix([scope.split(".") for scope in scopes]))


@dataclass(frozen=True)
class Leaf:
    """The smallest retrievable unit: one AST node, a split piece of one, or
    several small neighbours merged together.

    Ranges are half-open in bytes (``start_byte <= b < end_byte``) and
    1-based inclusive in lines, matching what editors show.
    """

    path: str  # relative to the repository root, forward slashes
    language: str  # tree-sitter language name, or "markdown" / "rst" / "text"
    node_type: str  # AST node type of the (largest) node; "paragraph"/"lines" for fallbacks
    scope: str  # enclosing scope, e.g. "inventory.pricing.PriceBook.apply_discount"
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    text: str
    token_count: int
    chunker: str = "ast"  # "ast", "paragraph", "lines" or "data" (hsc.chunk.datafiles): how the leaf was cut

    @property
    def embedding_text(self) -> str:
        """What the embedding model sees: the scope name, then the code."""
        return f"{self.scope}\n{self.text}"

    @property
    def content_hash(self) -> str:
        """Hash of the embedded text, so a moved-but-unchanged function and
        its cached vector are found again."""
        return content_hash(self.embedding_text)


@dataclass(frozen=True)
class FileReport:
    """What ingestion did with one file: indexed, skipped (with why), or failed."""

    path: str
    language: str | None
    status: str  # "indexed", "skipped" or "error"
    reason: str = ""  # empty when indexed cleanly; a warning such as syntax errors otherwise
    size: int = 0
    content_hash: str = ""


@dataclass(frozen=True)
class Definition:
    """A function, method, type or other named definition, as the syntax tree shows it.

    ``signature`` is the header up to the body as written (whitespace
    collapsed); ``doc`` the first sentence of its docstring or of the doc
    comment above it. Kind ``file`` is the file's own description (a module
    docstring or a leading comment), with an empty signature.
    """

    kind: str  # function, method, class, struct, interface, trait, enum, type, impl, module, ...
    name: str
    scope: str  # qualified: "inventory.pricing.PriceBook.price_of"
    signature: str
    doc: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class LeafFacts:
    """What one leaf imports, the names it defines, the identifiers it uses (sorted) and the
    member references it makes (``self.clamp``, ``util.clamp``, ``super().close``; sorted)."""

    imports: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    references: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportBinding:
    """One name a file's import brings in: ``local`` is bound to ``name`` of ``module`` (``name``
    empty: to the module itself; ``*``: everything it exports). ``level`` counts a Python
    relative import's leading dots; ``module`` is as written (a path for JavaScript and Go, ``a.b``
    for Python and Java, ``a::b`` for Rust)."""

    local: str
    module: str
    name: str = ""
    level: int = 0
    line: int = 0


@dataclass(frozen=True)
class LeafContext:
    """What the syntax tree says about one leaf, for the stages after cutting: its names (lexical
    search) and the definitions it starts or sits inside (a context header)."""

    facts: LeafFacts
    definitions: tuple[Definition, ...] = ()  # definitions that start in the leaf, in line order
    enclosing: tuple[Definition, ...] = ()  # definitions that hold the whole leaf, outermost first


def leaf_context(
    facts: LeafFacts, definitions: list[Definition], start_line: int, end_line: int
) -> LeafContext:
    """The context of a leaf on lines ``start_line..end_line`` among its file's definitions."""
    return LeafContext(
        facts,
        tuple(d for d in definitions if start_line <= d.start_line <= end_line and d.kind != "file"),
        tuple(
            d
            for d in definitions
            if d.start_line < start_line and d.end_line >= end_line and d.kind != "file"
        ),
    )


@dataclass
class ParsedFile:
    """A file turned into leaves, in document order, with what its syntax tree says.

    ``facts`` is parallel to ``leaves``; ``definitions`` are in line order."""

    report: FileReport
    leaves: list[Leaf] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    facts: list[LeafFacts] = field(default_factory=list)
    bindings: list[ImportBinding] = field(default_factory=list)
