"""The digest: a deterministic outline of a group or file, composed from the facts
the syntax tree gave when the file was cut (``hsc.chunk.facts``), with no model.

What the text covers, the signatures of its definitions with the first sentence
of their docs, what it imports and defines, and its most telling words. Code
is never read again here: definitions, imports and names come from the
request's facts. Markdown and plain text, which have no syntax tree, are read
as prose (headings and paragraphs).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from hsc.chunk.doctext import first_sentence
from hsc.chunk.doctext import shorten as _shorten
from hsc.chunk.parse import module_name
from hsc.chunk.tokens import TokenCounter, trim_to_budget
from hsc.hierarchy.summary import SummaryRequest
from hsc.model import Definition

LANGUAGE_NAMES = {
    "python": "Python",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "tsx": "TSX",
    "go": "Go",
    "rust": "Rust",
    "java": "Java",
    "c": "C",
    "cpp": "C++",
    "c_sharp": "C#",
    "ruby": "Ruby",
    "php": "PHP",
    "kotlin": "Kotlin",
    "swift": "Swift",
    "scala": "Scala",
    "csharp": "C#",
    "lua": "Lua",
    "perl": "Perl",
    "r": "R",
    "elixir": "Elixir",
    "julia": "Julia",
    "markdown": "Markdown",
    "rst": "reStructuredText",
    "text": "plain text",
    "bash": "Bash",
}

# Kinds in the order the header lists them; the plural adds "s" unless given here.
_KIND_ORDER = [
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "impl",
    "protocol",
    "object",
    "extension",
    "property",
    "module",
    "namespace",
    "macro",
    "section",
    "paragraph",
]
_PLURALS = {"class": "classes", "property": "properties"}


# Words that say nothing about what a piece of code is for: keywords and builtin types of the supported
# languages, generic programming words and common English words.
_STOPWORDS = frozenset(
    word
    for words in (
        # keywords and builtin types
        "abstract and any args argv arguments array as assert async await auto begin bool boolean break",
        "byte case catch char class cls const constexpr continue crate def default defer del delete",
        "deriving do double dyn elif else end ensure enum except explicit export extends extern false",
        "final finally float fn for from func function get goto if impl implements import in init inline",
        "instanceof int interface internal is kwargs lambda len let long loop match mod module mut",
        "namespace native new nil none nonlocal not null object of operator or override package pass",
        "print private protected pub public raise readonly record ref register rescue return self signed",
        "sizeof static str string struct super switch synchronized template then this throw throws trait",
        "true try type typedef typename typeof uint union unless unsafe unsigned until use using val var",
        "undefined virtual void volatile when where while with yield usize isize",
        "include define ifdef ifndef endif pragma",
        # generic programming words
        "err ctx tmp obj value values item items data key keys list dict map set tuple vec option some",
        "result ok opt optional",
        # common English words
        "the to are was be been it its that these those on at by into onto than there here we you they he",
        "she them our your their no yes can could should would will shall may might must does did done",
        "has have had having also only just more most less least very such each every all both either",
        "neither other same so which who whom whose what why how after before above below between under",
        "over again further once out off up down old one two three first last next prev number numbers",
        "name names make makes made call calls called returns returned given gets sets note see etc test",
        "tests http https www com org",
    )
    for word in words.split()
)

_WORD_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")

_MARKDOWN_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<name>.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_PROSE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class _Definition:
    kind: str
    name: str
    signature: str
    doc: str
    depth: int  # enclosing definitions shown in the same digest; sets the indentation
    nested: bool = False  # inside another definition, shown or not; ranks it lower


@dataclass
class _Outline:
    """What the digest shows of a request."""

    overview: str = ""
    definitions: list[_Definition] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    line_count: int = 0


def _outline(request: SummaryRequest) -> _Outline:
    outline = _Outline(line_count=sum(len(text.splitlines()) for text in request.texts))
    if request.language.lower() in ("markdown", "rst", "text") or not request.facts:
        lines = [line for text in request.texts for line in (text.splitlines() or [""])]
        _read_prose(lines, request.language.lower() == "markdown", outline)
        outline.terms = _key_terms(_prose_words(request.texts), outline.definitions)
        return outline
    _read_facts(request, outline)
    words = [name for facts in request.facts for name in (*facts.defines, *facts.uses)]
    outline.terms = _key_terms(words, outline.definitions)
    return outline


def _read_facts(request: SummaryRequest, outline: _Outline) -> None:
    """Definitions with their depth among those shown, module names and imports, from the facts."""
    definitions = [d for d in request.definitions if d.kind != "file"]
    overview = [d.doc for d in request.definitions if d.kind == "file" and d.doc]
    outline.overview = overview[0] if overview else ""
    by_scope = {d.scope: d for d in definitions}
    for definition in definitions:
        # Depth counts the enclosing definitions shown here that hold it in their lines (a Go method
        # names its type by scope but stands outside it).
        depth = 0
        parent = definition.scope.rpartition(".")[0]
        while parent:
            enclosing = by_scope.get(parent)
            if enclosing is not None and enclosing.start_line <= definition.start_line <= enclosing.end_line:
                depth += 1
            parent = parent.rpartition(".")[0]
        signature = definition.signature or definition.name
        qualified = signature
        owner = _owning_type(definition, module_name(request.path))
        if depth == 0 and owner and not request.scope.endswith(owner):
            qualified = _qualified(signature, definition.name, owner)
        # A method shown without its type (cut out of it) ranks with the nested definitions.
        nested = (
            depth > 0 or (bool(owner) and qualified != signature) or (owner and request.scope.endswith(owner))
        )
        outline.definitions.append(
            _Definition(
                definition.kind, definition.name, _shorten(qualified, 180), definition.doc, depth, nested
            )
        )
    names = {d.name for d in definitions}
    for facts in request.facts:
        outline.imports.extend(name for name in facts.imports if name not in outline.imports)
        outline.variables.extend(
            name for name in facts.defines if name not in names and name not in outline.variables
        )


def _owning_type(definition: Definition, module_scope: str) -> str:
    """The type a method belongs to, below the module, e.g. ``Item`` for ``pkg.mod.Item.with_price``."""
    if definition.kind != "method":
        return ""
    parent = definition.scope.rpartition(".")[0]
    if module_scope and parent == module_scope:
        # A method right below the module: of the type its Java file is named after (scoped once,
        # java_class_scopes 'once'); no other language scopes a method so.
        return parent.rpartition(".")[2]
    if module_scope and not parent.startswith(module_scope + "."):
        return parent.rpartition(".")[2]
    return parent[len(module_scope) + 1 :] if module_scope else parent


def _qualified(signature: str, name: str, owner: str) -> str:
    """``signature`` with its name prefixed by the owning type, unless the type is named before it
    already (Go's receiver in ``func (s *Stack) Push``)."""
    position = _word_at(signature, name)
    if position < 0 or owner.rpartition(".")[2] in signature[:position]:
        return signature
    return f"{signature[:position]}{owner}.{signature[position:]}"


def _word_at(text: str, word: str) -> int:
    """Index of ``word`` standing alone in ``text`` (not part of a longer name), or -1."""
    start = text.find(word)
    while start >= 0:
        before = text[start - 1] if start else " "
        after = text[start + len(word)] if start + len(word) < len(text) else " "
        if not (before.isalnum() or before in "_.$") and not (after.isalnum() or after == "_"):
            return start
        start = text.find(word, start + 1)
    return -1


def _prose_words(texts: list[str]) -> list[str]:
    return [word for text in texts for word in _PROSE_WORD.findall(text)]


def _read_prose(lines: list[str], markdown: bool, outline: _Outline) -> None:
    """Markdown headings become sections with their first sentence; plain text is read by paragraph."""
    paragraphs: list[tuple[int, str]] = []  # (line index, text)
    headings: list[tuple[int, int, str]] = []  # (line index, level, title)
    current: list[str] = []
    start = 0
    in_fence = False
    for index, line in enumerate([*lines, ""]):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _MARKDOWN_HEADING.match(line) if markdown else None
        if heading:
            headings.append((index, len(heading.group("level")), heading.group("name")))
        if line.lstrip().startswith(("|", "<")):
            continue  # tables and HTML read badly as a sentence
        if heading or not line.strip():
            if current:
                paragraphs.append((start, " ".join(current)))
                current = []
            continue
        if not current:
            start = index
        current.append(line.strip().lstrip("-*>| ").strip())
    if not headings:
        for _, text in paragraphs:
            sentence = first_sentence(text, limit=200)
            outline.definitions.append(_Definition("paragraph", sentence, sentence, "", 0))
        return
    top = min(level for _, level, _ in headings)
    for number, (at, level, title) in enumerate(headings):
        section_end = headings[number + 1][0] if number + 1 < len(headings) else len(lines) + 1
        first = next((text for start_line, text in paragraphs if at < start_line < section_end), "")
        depth = min(level - top, 2)
        section = _Definition("section", title, title, first_sentence(first), depth, nested=depth > 0)
        outline.definitions.append(section)
    before_first_heading = [text for start_line, text in paragraphs if start_line < headings[0][0]]
    outline.overview = first_sentence(before_first_heading[0]) if before_first_heading else ""


def _key_terms(words: list[str], definitions: list[_Definition], limit: int = 12) -> list[str]:
    """The most telling words: names split at snake_case and camelCase,
    lower-cased, without stopwords; words of definition names count extra
    because they name what the code is about."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for identifier in words:
        if identifier.lower() in _STOPWORDS:
            continue
        for part in _WORD_PART.findall(identifier):
            word = part.lower()
            if len(word) < 3 or word in _STOPWORDS:
                continue
            counts[word] += 1
            first_seen.setdefault(word, len(first_seen))
    for definition in definitions:
        if definition.kind in ("section", "paragraph"):
            continue
        for part in _WORD_PART.findall(definition.name):
            if part.lower() in counts:
                counts[part.lower()] += 3
    ranked = sorted(counts, key=lambda word: (-counts[word], first_seen[word]))
    return [word for word in ranked if counts[word] >= 2][:limit]


def _contents_phrase(outline: _Outline, leaf_count: int) -> str:
    counts = Counter(definition.kind for definition in outline.definitions)
    phrases = []
    for kind in sorted(counts, key=lambda kind: _KIND_ORDER.index(kind) if kind in _KIND_ORDER else 99):
        number = counts[kind]
        phrases.append(f"{number} {kind if number == 1 else _PLURALS.get(kind, kind + 's')}")
    if phrases:
        return ", ".join(phrases)
    return f"statements only, in {leaf_count} block{'s' if leaf_count != 1 else ''}"


def _header(request: SummaryRequest, outline: _Outline) -> str:
    language = LANGUAGE_NAMES.get(request.language.lower(), request.language or "unknown language")
    size = f"{outline.line_count} line{'s' if outline.line_count != 1 else ''}"
    contents = _contents_phrase(outline, len(request.texts))
    if request.kind == "document":
        return f"{request.path}: {language} file, {size}: {contents}."
    scope = f" ({request.scope})" if request.scope else ""
    return f"Part of {request.path}{scope}, {size}: {contents}."


@dataclass
class _Line:
    """A candidate line of the digest; ``order`` places it in the output."""

    order: tuple[int, int]
    text: str
    with_doc: str = ""  # the same line followed by its doc sentence, used when that fits too


# Output sections, in the order a reader meets them.
_OVERVIEW, _DEFINITIONS, _ALSO, _USES, _TERMS = range(1, 6)


def digest(request: SummaryRequest, counter: TokenCounter) -> str:
    """Header, overview, signatures with doc sentences, left-out names, imports and
    key terms, keeping what matters most when the budget is short.

    What is kept, in this order while it fits: the header; the overview; the
    signatures of top-level definitions; their doc sentences; nested
    signatures (methods); key terms; the names of whatever was left out;
    nested doc sentences; imports. A line is either kept whole or dropped.
    """
    budget = request.token_budget
    if budget <= 0:
        return ""
    outline = _outline(request)
    header = _header(request, outline)
    if counter.count(header) >= budget:
        return trim_to_budget(header, budget, counter)

    overview = [_Line((_OVERVIEW, 0), outline.overview)] if outline.overview else []
    top_level: list[_Line] = []
    nested: list[_Line] = []
    definition_lines: list[_Line] = []
    for position, definition in enumerate(outline.definitions):
        text = "  " * min(definition.depth, 2) + definition.signature
        line = _Line((_DEFINITIONS, position), text, f"{text} — {definition.doc}" if definition.doc else "")
        definition_lines.append(line)
        (nested if definition.nested else top_level).append(line)
    terms = [_Line((_TERMS, 0), "Key terms: " + ", ".join(outline.terms))] if outline.terms else []
    uses = [_Line((_USES, 0), "Uses: " + ", ".join(outline.imports[:15]))] if outline.imports else []

    # Per-line counts choose the lines; an exact count of the joined text checks the result at the end.
    chosen: dict[int, str] = {}  # id(line) -> the text used for it
    kept_in_order: list[_Line] = []  # in the order they were chosen, so the last ones go first if need be
    used = counter.count(header)

    def add(lines: list[_Line]) -> None:
        nonlocal used
        for line in lines:
            cost = counter.count(line.text) + 1
            if used + cost <= budget:
                chosen[id(line)] = line.text
                kept_in_order.append(line)
                used += cost

    def add_docs(lines: list[_Line]) -> None:
        nonlocal used
        for line in lines:
            if line.with_doc and id(line) in chosen:
                extra = counter.count(line.with_doc) - counter.count(line.text)
                if used + extra <= budget:
                    chosen[id(line)] = line.with_doc
                    used += extra

    if not outline.definitions:
        add(uses)  # for a block of imports the imports are the content
    add(overview)
    add(top_level)
    add_docs(top_level)
    add(nested)
    add(terms)
    # Whatever was left out is at least named, so that it can still be found.
    left_out = [
        definition.name
        for definition, line in zip(outline.definitions, definition_lines, strict=True)
        if id(line) not in chosen and definition.kind != "paragraph"
    ]
    prose = bool(outline.definitions) and outline.definitions[0].kind == "section"
    also = ""
    for name in left_out + [name for name in outline.variables if name not in left_out]:
        attempt = f"{also}, {name}" if also else ("Also covers: " if prose else "Also defines: ") + name
        if used + counter.count(attempt) + 1 > budget:
            break
        also = attempt
    also_line = [_Line((_ALSO, 0), also)] if also else []
    add(also_line)
    add_docs(nested)
    add(uses)

    lines = [*overview, *definition_lines, *also_line, *uses, *terms]

    def render() -> str:
        return "\n".join([header, *(chosen[id(line)] for line in lines if id(line) in chosen)])

    digest = render()
    # Joined lines can tokenise a little differently from separate ones; shed the last chosen till it fits.
    while counter.count(digest) > budget and kept_in_order:
        del chosen[id(kept_in_order.pop())]
        digest = render()
    return digest if counter.count(digest) <= budget else trim_to_budget(digest, budget, counter)
