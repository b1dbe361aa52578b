"""Summaries of mid-level groups and whole documents.

Two summarisers share one interface. ``DigestSummarizer`` needs no model: it
reads the code with regular expressions and writes a compact outline (what the
text covers, the signatures of its definitions with the first sentence of
their docs, what it imports and its most frequent identifiers). It works for
any language and is what runs when no Ollama server is configured or answers.
``OllamaSummarizer`` asks an Ollama server for a prose summary and falls back
to the digest, with a note saying why, whenever the server cannot give one.

Both keep the summary within the request's token budget, counted with the
project's token counter, because the summary stands in for text that was too
long and is embedded and shown in the same places as that text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from hsc.params import Settings
from hsc.tokens import TokenCounter, get_counter

SUMMARY_KINDS = ("group", "document")
DIGEST_MODEL = "digest-v1"
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"


@dataclass(frozen=True)
class SummaryRequest:
    """Everything a summariser may look at to summarise one group or document."""

    kind: str  # "group" or "document"
    path: str  # file path relative to the repository root
    language: str
    scope: str  # the group's or document's scope, e.g. "inventory.pricing"
    texts: list[str]  # the code of the leaves, in document order
    scopes: list[str]  # the scope of each leaf, parallel to texts
    token_budget: int  # the summary must stay within this many tokens

    def __post_init__(self) -> None:
        if self.kind not in SUMMARY_KINDS:
            raise ValueError(f"kind must be one of {', '.join(SUMMARY_KINDS)}, got {self.kind!r}")
        if len(self.texts) != len(self.scopes):
            raise ValueError(f"texts and scopes differ in length ({len(self.texts)} vs {len(self.scopes)})")

    def content_hash(self) -> str:
        """Stable identity of everything the summary depends on.

        Language and scope are included besides kind, path, texts, scopes and
        budget because both appear in the digest and in the Ollama prompt.
        JSON keeps field boundaries unambiguous (``["ab", "c"]`` differs from
        ``["a", "bc"]``), and the version prefix lets the format change later.
        """
        payload = json.dumps(
            [
                "summary-request-v1",
                self.kind,
                self.path,
                self.language,
                self.scope,
                list(self.texts),
                list(self.scopes),
                self.token_budget,
            ],
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Summary:
    """A finished summary and what actually produced it.

    ``summariser`` and ``model`` name who wrote ``text``: when Ollama fails and
    the digest stands in, they say "digest", so a cache keyed on them never
    files a digest under the Ollama model.
    """

    text: str
    summariser: str  # "digest" or "ollama"
    model: str  # "digest-v1" or the Ollama model name
    note: str = ""  # why this summariser was used instead of the configured one, if it was


class Summarizer(Protocol):
    name: str
    model: str

    def summarise(self, request: SummaryRequest) -> Summary: ...


# --------------------------------------------------------------------------------------------------------
# Token budget


def trim_to_budget(text: str, budget: int, counter: TokenCounter) -> str:
    """The longest start of ``text`` within ``budget`` tokens that ends at a line
    or sentence end, else at a word end (with an ellipsis); a word is cut only
    when a single word is longer than the budget."""
    text = text.strip()
    if budget <= 0 or not text:
        return ""
    if counter.count(text) <= budget:
        return text
    head = counter.split(text, budget)[0]
    cut = _last_boundary(head)
    candidate = head[:cut].rstrip() if cut else ""
    if not candidate:
        space = head.rstrip().rfind(" ")
        candidate = (head[:space].rstrip() + " …") if space > 0 else head.rstrip()
    # Re-tokenising a shorter string can, rarely, cost one token more at the cut; back off until it fits.
    while candidate and counter.count(candidate) > budget:
        space = candidate.rstrip(" …").rfind(" ")
        candidate = (candidate[:space].rstrip() + " …") if space > 0 else ""
    return candidate


_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|\n")


def _last_boundary(head: str) -> int:
    """Index just past the last line or sentence end in ``head`` that keeps at
    least half of it, or 0 when there is none that late."""
    ends = [match.end() for match in _SENTENCE_END.finditer(head + " ")]
    ends = [end for end in ends if end >= len(head) // 2]
    return ends[-1] if ends else 0


# --------------------------------------------------------------------------------------------------------
# Digest: reading definitions, docs, imports and identifiers out of code with regular expressions

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
    "markdown": "Markdown",
    "text": "plain text",
    "bash": "Bash",
}

# Language names are tree-sitter's; each maps to the family of regular expressions that reads it.
_FAMILIES = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "jsx": "js",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c_sharp": "java",
    "kotlin": "java",
    "scala": "java",
    "c": "c",
    "cpp": "c",
    "ruby": "ruby",
    "bash": "shell",
    "sh": "shell",
    "markdown": "prose",
    "text": "prose",
    "rst": "prose",
    "org": "prose",
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
    "module",
    "namespace",
    "macro",
    "section",
    "paragraph",
]
_PLURALS = {"class": "classes"}
_CONTAINER_KINDS = {"class", "struct", "interface", "trait", "enum", "impl", "module", "namespace"}

_Patterns = list[tuple[re.Pattern[str], str]]


def _patterns(*pairs: tuple[str, str]) -> _Patterns:
    return [(re.compile(regex), kind) for regex, kind in pairs]


_RUST_VISIBILITY = r"(?:pub(?:\([^)]*\))?\s+)?"
_JAVA_MODIFIERS = (
    r"(?:(?:public|private|protected|internal|abstract|final|static|sealed|non-sealed|open|data|partial|"
    r"override|virtual|synchronized|native|default|async|unsafe|extern|new|suspend|inline|strictfp)\s+)*"
)

_DEFINITION_PATTERNS: dict[str, _Patterns] = {
    "python": _patterns(
        (r"^\s*(?:async\s+)?def\s+(?P<name>\w+)", "function"),
        (r"^\s*class\s+(?P<name>\w+)", "class"),
    ),
    "js": _patterns(
        (r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)", "function"),
        (r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?P<name>[\w$]+)", "class"),
        (r"^\s*(?:export\s+)?(?:declare\s+)?interface\s+(?P<name>[\w$]+)", "interface"),
        (r"^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<name>[\w$]+)\s*(?:<[^=]*>)?\s*=", "type"),
        (r"^\s*(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+(?P<name>[\w$]+)", "enum"),
        # Arrow functions and function expressions bound to a name.
        (
            r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?"
            r"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)",
            "function",
        ),
    ),
    "go": _patterns(
        (r"^func\s+\([^)]*\)\s*(?P<name>\w+)", "method"),
        (r"^func\s+(?P<name>\w+)", "function"),
        (r"^type\s+(?P<name>\w+)(?:\[[^\]]*\])?\s+struct\b", "struct"),
        (r"^type\s+(?P<name>\w+)(?:\[[^\]]*\])?\s+interface\b", "interface"),
        (r"^type\s+(?P<name>\w+)\b", "type"),
    ),
    "rust": _patterns(
        (
            rf"^\s*{_RUST_VISIBILITY}(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
            r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+(?P<name>\w+)",
            "function",
        ),
        (rf"^\s*{_RUST_VISIBILITY}struct\s+(?P<name>\w+)", "struct"),
        (rf"^\s*{_RUST_VISIBILITY}enum\s+(?P<name>\w+)", "enum"),
        (rf"^\s*{_RUST_VISIBILITY}(?:unsafe\s+)?trait\s+(?P<name>\w+)", "trait"),
        (rf"^\s*{_RUST_VISIBILITY}type\s+(?P<name>\w+)", "type"),
        (rf"^\s*{_RUST_VISIBILITY}mod\s+(?P<name>\w+)", "module"),
        (r"^\s*(?:unsafe\s+)?impl\b(?:\s*<[^>]*>)?\s+(?P<name>[^{]+?)\s*(?:\{.*)?$", "impl"),
        (r"^\s*macro_rules!\s*(?P<name>\w+)", "macro"),
    ),
    "java": _patterns(
        (
            rf"^\s*(?:@\w+\s+)*{_JAVA_MODIFIERS}(?P<kind>class|interface|enum|record|struct|object|trait)\s+"
            r"(?P<name>\w+)",
            "class",
        ),
        (rf"^\s*{_JAVA_MODIFIERS}fun\s+(?:<[^>]+>\s*)?(?:[\w.]+\.)?(?P<name>\w+)", "function"),
        (rf"^\s*{_JAVA_MODIFIERS}def\s+(?P<name>\w+)", "function"),
    ),
    "c": _patterns(
        (
            r"^\s*(?:typedef\s+)?(?:template\s*<[^>]*>\s*)?(?P<kind>struct|union|enum|class)\s+"
            r"(?:[A-Z_]+\s+)?(?P<name>\w+)\s*(?:final\s*)?(?::[^{;]*)?\{?\s*$",
            "struct",
        ),
        (r"^\s*namespace\s+(?P<name>[\w:]+)", "namespace"),
    ),
    "ruby": _patterns(
        (r"^\s*def\s+(?P<name>(?:self\.)?[\w.]+[?!=]?|[^\s(;]+)", "function"),
        (r"^\s*class\s+(?P<name>[A-Z][\w:]*)", "class"),
        (r"^\s*module\s+(?P<name>[A-Z][\w:]*)", "module"),
    ),
    "shell": _patterns(
        (r"^\s*function\s+(?P<name>[\w.:-]+)", "function"),
        (r"^\s*(?P<name>[\w.:-]+)\s*\(\)", "function"),
    ),
    # Any other language: the keywords most languages use to introduce functions and types.
    "generic": _patterns(
        (
            r"^\s*(?:[\w@]+\s+)*?(?:function|func|fn|def|fun|sub|proc|defn|defp)\s+(?P<name>[\w.$:!?]+)",
            "function",
        ),
        (
            r"^\s*(?:[\w@]+\s+)*?(?P<kind>class|struct|interface|trait|module|enum|protocol|namespace|impl)\s+"
            r"(?P<name>[\w.:]+)",
            "class",
        ),
    ),
}
_KIND_ALIASES = {"record": "class", "object": "class", "protocol": "interface", "union": "struct"}

_JS_MEMBER_MODIFIERS = r"(?:(?:public|private|protected|static|readonly|async|override|abstract|get|set)\s+)*"
_JS_METHOD = re.compile(
    rf"^\s*{_JS_MEMBER_MODIFIERS}(?P<name>#?[\w$]+)\s*(?:<[^>]*>)?\s*\(.*\)\s*(?::\s*[^={{;]+)?\{{\s*\}}?\s*$"
)
# A class field holding an arrow function: "private onKey = (event: KeyboardEvent): void => {".
_JS_FIELD_FUNCTION = re.compile(
    rf"^\s*{_JS_MEMBER_MODIFIERS}(?P<name>#?[\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?\([^)]*\)\s*(?::[^=]+)?=>"
)
# Any name bound to a function value, whose own arrow ends its signature.
_BOUND_FUNCTION = re.compile(r"[^(]*=\s*(?:async\s*)?(?:\(|[\w$]+\s*=>)")
_JAVA_METHOD = re.compile(
    rf"^\s*(?:@\w+(?:\([^)]*\))?\s+)*{_JAVA_MODIFIERS}(?:<[^>]+>\s+)?"
    r"(?P<type>[\w.?]+(?:<[^()]*?>)?(?:\[\])*)\s+(?P<name>\w+)\s*\((?P<rest>[^;]*;?)\s*$"
)
_JS_ARROW_OPENING = re.compile(
    r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*=\s*(?:async\s+)?\($"
)
_ACCESS_LABEL = re.compile(r"^\s*(?:public|private|protected|internal)\s*:\s*$")
_C_TYPE_PREFIX = re.compile(r"^[\w\s:*&<>,~\[\]]*[\s*&]$")
_MARKDOWN_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<name>.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")

# Words that start a statement, never a definition, though "word(" looks like a call or a signature.
_CONTROL_WORDS = frozenset(
    word
    for words in (
        "if else for while switch case do try catch return new throw delete sizeof typedef using goto",
        "await yield defer go match when elif unless until loop with assert super this function import",
        "export package static_assert alignof decltype foreach synchronized lock fixed",
    )
    for word in words.split()
)

_IMPORT_PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "python": [
        re.compile(r"^\s*from\s+(?P<name>[\w.]+)\s+import\b"),
        re.compile(r"^\s*import\s+(?P<name>[\w.]+)"),
    ],
    "js": [
        re.compile(r"^\s*import\b[^'\"]*['\"](?P<name>[^'\"]+)['\"]"),
        re.compile(r"^\s*(?:export\b[^'\"]*|\}\s*)from\s+['\"](?P<name>[^'\"]+)['\"]"),
        re.compile(r"\brequire\(\s*['\"](?P<name>[^'\"]+)['\"]\s*\)"),
    ],
    "go": [
        re.compile(r"^\s*import\s+(?:[\w.]+\s+)?\"(?P<name>[^\"]+)\""),
        re.compile(r"^\s+(?:[\w.]+\s+)?\"(?P<name>[^\"]+)\"\s*$"),
    ],
    "rust": [
        re.compile(r"^\s*(?:pub\s+)?use\s+(?P<name>[\w:]+?)(?:::)?[{;*\s]"),
        re.compile(r"^\s*extern\s+crate\s+(?P<name>\w+)"),
    ],
    "java": [
        re.compile(r"^\s*import\s+(?:static\s+)?(?P<name>[\w.]+?)(?:\.\*)?\s*;"),
        re.compile(r"^\s*using\s+(?P<name>[\w.]+)\s*;"),
    ],
    "c": [re.compile(r"^\s*#\s*include\s*[<\"](?P<name>[^>\"]+)[>\"]")],
    "ruby": [re.compile(r"^\s*require(?:_relative)?\s*\(?\s*['\"](?P<name>[^'\"]+)['\"]")],
}

_VARIABLE_PATTERNS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)"),
    "js": re.compile(r"^(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)"),
    "go": re.compile(r"^(?:var|const)\s+(?P<name>\w+)"),
    "rust": re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?(?P<name>\w+)"),
    "c": re.compile(r"^\s*#\s*define\s+(?P<name>\w+)"),
    "ruby": re.compile(r"^\s*(?P<name>[A-Z][A-Z0-9_]*)\s*=(?!=)"),
    "java": re.compile(
        r"^\s*(?:(?:public|private|protected|static|final|const|readonly)\s+)+[\w<>\[\],.?]+\s+"
        r"(?P<name>[A-Z][A-Z0-9_]*)\s*="
    ),
}

# Comment lines that are tooling, not description.
_DOC_NOISE = re.compile(
    r"-\*-|^!|eslint|prettier|noqa|type:\s*ignore|pylint:|@ts-|nolint|go:build|go:generate|\+build|"
    r"frozen_string_literal|rubocop:|^\s*(?:todo|fixme|xxx)\b",
    re.IGNORECASE,
)
_LICENCE = re.compile(r"copyright|licen[cs]e|spdx-", re.IGNORECASE)

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

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_DOCSTRING_START = re.compile(r"^\s*[rRuUbB]{0,2}(\"\"\"|'''|\"|')")


@dataclass
class _Definition:
    kind: str
    name: str
    signature: str
    doc: str
    depth: int  # 0 = not inside another definition of the same text; sets the indentation
    nested: bool = False  # inside another definition, in the text or by its scope; ranks it lower


@dataclass
class _Outline:
    """What the digest found in a request's text."""

    overview: str = ""
    definitions: list[_Definition] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    line_count: int = 0


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def _shorten(text: str, limit: int) -> str:
    """``text`` cut at a word end to at most ``limit`` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;") + " …"


def _first_sentence(text: str, limit: int = 220) -> str:
    text = " ".join(text.replace("``", "`").split())
    # A sentence ends at . ! or ? before a capital or an opening mark, so "e.g. a list" stays whole.
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])", text)
    return _shorten(text[: match.start()] if match else text, limit)


def _code_chars(text: str, family: str) -> list[tuple[int, str, int]]:
    """(position, character, bracket depth before it) for each character outside string literals."""
    # Rust lifetimes ('a) look like unclosed character literals, so only double quotes delimit there.
    quotes = '"' if family == "rust" else "\"'`"
    out: list[tuple[int, str, int]] = []
    depth = 0
    quote = ""
    escaped = False
    for position, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in quotes:
            quote = char
            continue
        out.append((position, char, depth))
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
    return out


def _body_start(text: str, family: str, kind: str) -> int:
    """Where the body begins in a one-line signature: the first top-level ":" in
    Python, ";" in Ruby, "{" in the brace languages, or just after "=>" for a
    JavaScript function bound to a name. A type alias is all declaration."""
    if kind == "type":
        return len(text)
    chars = _code_chars(text, family)
    if family == "js" and _BOUND_FUNCTION.match(text):
        # A function bound to a name: its own arrow is the outermost one (parameter types and the
        # body may hold others). The arrow stays: it tells a reader this is a function value.
        arrows = [(depth, position) for position, char, depth in chars if text.startswith("=>", position)]
        if arrows:
            return min(arrows)[1] + 2
    for index, (position, char, depth) in enumerate(chars):
        if depth != 0:
            continue
        if family == "python" and char == ":":
            return position
        if family == "ruby" and char == ";":
            return position
        if family not in ("python", "ruby") and char == "{":
            # Go's "interface{}" or "struct{}" inside a signature is a type, not the body.
            following = chars[index + 1][1] if index + 1 < len(chars) else ""
            if following == "}" and position + 2 < len(text.rstrip()):
                continue
            return position
    return len(text)


def _signature(lines: list[str], index: int, family: str, kind: str) -> tuple[str, int]:
    """The cleaned signature that starts at ``lines[index]`` and the index of its last line.

    Lines are joined while brackets stay open (multi-line parameter lists);
    the body, a trailing ``{``, ``:`` or ``;`` and trailing comments go.
    """
    parts: list[str] = []
    depth = 0
    last = index
    for last in range(index, min(index + 12, len(lines))):
        line = lines[last]
        comment = r"\s#.*$" if family in ("python", "ruby", "shell") else r"\s//.*$"
        line = re.sub(comment, "", line)
        parts.append(line.strip())
        for _, char, _ in _code_chars(line, family):
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
        # A line that opens a body ends the signature even inside brackets, as in
        # "const run = ((...args) => {", where the parenthesis closes only after the body.
        opens_body = family not in ("python", "ruby", "prose") and line.rstrip().endswith("{")
        if depth <= 0 or opens_body:
            break
    text = re.sub(r"\s+", " ", " ".join(part for part in parts if part))
    text = re.sub(r"([(\[]) ", r"\1", text)
    text = re.sub(r",? ([)\]])", r"\1", text)
    signature = text[: _body_start(text, family, kind)].rstrip(" {:;=")
    return _shorten(signature, 180), last


def _comment_text(line: str, family: str) -> str | None:
    """The text of a comment line, or None when the line is not a comment."""
    stripped = line.strip()
    if family in ("python", "ruby", "shell"):
        markers: tuple[str, ...] = ("#",)
    elif family == "generic":
        markers = ("///", "//!", "//", "/**", "/*", "*/", "*", "#", "--", ";;")
    else:
        markers = ("///", "//!", "//", "/**", "/*", "*/", "*")
    for marker in markers:
        if stripped.startswith(marker):
            body = re.sub(r"\*/\s*$", "", stripped[len(marker) :])
            return body.lstrip("/*!# ").rstrip()
    return None


def _doc_from_comment_lines(comment_lines: list[str]) -> str:
    """First sentence of the first paragraph of comment lines, skipping tooling
    pragmas; a JSDoc-style tag or a heading ends the description."""
    paragraph: list[str] = []
    for text in comment_lines:
        if text.startswith("@") or (text.startswith("# ") and paragraph):
            break
        if not text or _DOC_NOISE.search(text):
            if paragraph:
                break
            continue
        paragraph.append(text)
    return _first_sentence(" ".join(paragraph)) if paragraph else ""


def _comment_block_above(lines: list[str], index: int, family: str) -> list[str]:
    """The comment lines directly above ``lines[index]``, past decorators and attributes."""
    position = index - 1
    while position >= 0 and re.match(r"^\s*(@|#\[|\[\[|\[[A-Z])", lines[position]):
        position -= 1
    collected: list[str] = []
    while position >= 0 and lines[position].strip():
        comment = _comment_text(lines[position], family)
        if comment is None:
            break
        collected.append(comment)
        if lines[position].strip().startswith("/*"):
            break
        position -= 1
    return list(reversed(collected))


def _python_docstring(lines: list[str], index: int) -> str:
    """First sentence of the docstring that starts at ``lines[index]``, if one does."""
    if index >= len(lines):
        return ""
    match = _DOCSTRING_START.match(lines[index])
    if not match:
        return ""
    quote = match.group(1)
    rest = lines[index][match.end() :]
    if len(quote) == 1:
        # A one-quote string is a docstring only when it is the whole statement.
        end = rest.find(quote)
        return _first_sentence(rest[:end]) if end >= 0 and not rest[end + 1 :].strip() else ""
    collected: list[str] = []
    for line in [rest, *lines[index + 1 : index + 60]]:
        end = line.find(quote)
        if end >= 0:
            collected.append(line[:end])
            break
        collected.append(line)
    return _doc_from_comment_lines([line.strip() for line in collected])


def _next_code_line(lines: list[str], index: int) -> int:
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index


def _relative_scope(scope: str, parent: str) -> list[str]:
    """The parts of ``scope`` below ``parent`` (or below what the two share)."""
    parts = scope.split(".") if scope else []
    parent_parts = parent.split(".") if parent else []
    shared = 0
    while shared < min(len(parts), len(parent_parts)) and parts[shared] == parent_parts[shared]:
        shared += 1
    return parts[shared:]


def _match_definition(
    lines: list[str], index: int, family: str, parent_kind: str, leaf_start: bool
) -> tuple[str, str] | None:
    """(kind, name) when ``lines[index]`` starts a definition."""
    line = lines[index]
    for pattern, kind in _DEFINITION_PATTERNS.get(family, _DEFINITION_PATTERNS["generic"]):
        match = pattern.match(line)
        if match:
            found_kind = match.groupdict().get("kind") or kind
            return _KIND_ALIASES.get(found_kind, found_kind), match.group("name").strip()
    if family == "js":
        # A name bound to "(" that opens a multi-line parameter list of an arrow function.
        arrow = _JS_ARROW_OPENING.match(line)
        if arrow and any("=>" in later for later in lines[index + 1 : index + 8]):
            return "function", arrow.group("name")
        # A call statement cannot take this shape ("name(...) {"), so no enclosing class is needed.
        method = _JS_METHOD.match(line) or _JS_FIELD_FUNCTION.match(line)
        if method and method.group("name") not in _CONTROL_WORDS:
            return "method", method.group("name")
    if family == "java":
        method = _JAVA_METHOD.match(line)
        if method and not {method.group("type"), method.group("name")} & _CONTROL_WORDS:
            # A declaration without a body ends in ";": an interface's or an abstract method.
            declaration_only = method.group("rest").endswith(";")
            if not declaration_only or parent_kind == "interface" or "abstract " in line:
                return "method", method.group("name")
    if family == "c":
        return _match_c_function(lines, index, parent_kind, leaf_start)
    return None


def _match_c_function(
    lines: list[str], index: int, parent_kind: str, leaf_start: bool
) -> tuple[str, str] | None:
    """A C or C++ function definition or prototype: type words, a name, "(" and no "=" before it."""
    line = lines[index]
    head, paren, _ = line.partition("(")
    if not paren or line.lstrip().startswith("#"):
        return None
    match = re.match(r"^(?P<indent>\s*)(?P<prefix>.*?)(?P<name>~?[A-Za-z_][\w:]*|operator\s*\S+)\s*$", head)
    if not match:
        return None
    prefix = match.group("prefix")
    name = match.group("name")
    if prefix and not _C_TYPE_PREFIX.match(prefix):
        return None
    first_word = (prefix.split() or [name])[0]
    if first_word in _CONTROL_WORDS or name.split("::")[-1] in _CONTROL_WORDS:
        return None
    in_class = parent_kind in ("class", "struct")
    # Without a return type only out-of-line members ("Foo::bar(") and constructors are definitions;
    # anything else is a call or a macro.
    if not prefix.strip() and "::" not in name and not in_class:
        return None
    stripped = line.rstrip()
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    if stripped.endswith(";"):
        # A prototype declares a function only outside function bodies, where "Foo bar(a);" constructs.
        if match.group("indent") and parent_kind not in _CONTAINER_KINDS and not leaf_start:
            return None
    elif not (
        stripped.endswith(("{", ")", ",", "(", "const", "override"))
        or following.startswith("{")
        or (stripped.endswith("}") and "{" in stripped)  # a body on the same line
    ):
        return None
    return ("method" if in_class else "function"), name


def _inside_go_import_block(lines: list[str], index: int) -> bool:
    for position in range(index - 1, max(-1, index - 200), -1):
        stripped = lines[position].strip()
        if stripped.startswith("import ("):
            return True
        if stripped == ")" or stripped.startswith(("func ", "type ", "var ", "const ")):
            return False
    return False


def _leading_overview(lines: list[str], family: str) -> str:
    """The text's own description: a module docstring, or a comment block at the
    very start that is neither a licence nor attached to a definition."""
    index = 0
    while index < len(lines) and (not lines[index].strip() or lines[index].startswith(("#!", "# -*-"))):
        index += 1
    if index >= len(lines):
        return ""
    if family == "python" and _DOCSTRING_START.match(lines[index]):
        return _python_docstring(lines, index)
    comment_lines: list[str] = []
    position = index
    while position < len(lines) and lines[position].strip():
        text = _comment_text(lines[position], family)
        if text is None:
            break
        comment_lines.append(text)
        position += 1
        if lines[position - 1].rstrip().endswith("*/"):
            break
    if not comment_lines or _LICENCE.search(" ".join(comment_lines)):
        return ""
    # A comment directly above code belongs to that code, except Go's package comment.
    following = lines[position] if position < len(lines) else ""
    if following.strip() and not following.startswith("package "):
        return ""
    return _doc_from_comment_lines(comment_lines)


def _outline(request: SummaryRequest) -> _Outline:
    """Read definitions, docs, imports, variables and key terms out of the request's text."""
    family = _FAMILIES.get(request.language.lower(), "generic")
    lines: list[str] = []
    leaf_of_line: list[int] = []
    for leaf_index, text in enumerate(request.texts):
        leaf_lines = text.splitlines() or [""]
        lines.extend(leaf_lines)
        leaf_of_line.extend([leaf_index] * len(leaf_lines))
    outline = _Outline(line_count=sum(len(text.splitlines()) for text in request.texts))
    if family == "prose":
        _read_prose(lines, request.language.lower() == "markdown", outline)
    else:
        _read_code(request, lines, leaf_of_line, family, outline)
    outline.terms = _key_terms(request.texts, outline.definitions)
    return outline


def _read_code(
    request: SummaryRequest, lines: list[str], leaf_of_line: list[int], family: str, outline: _Outline
) -> None:
    outline.overview = _leading_overview(lines, family)
    open_definitions: list[tuple[int, str]] = []  # (indent, kind) of definitions that may enclose a line
    leaves_with_a_definition: set[int] = set()
    seen_imports: set[str] = set()
    import_patterns = _IMPORT_PATTERNS.get(family, [])
    variable_pattern = _VARIABLE_PATTERNS.get(family)
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        leaf = leaf_of_line[index]
        leaf_start = index == 0 or leaf != leaf_of_line[index - 1]
        if leaf_start:
            # A leaf starts at its node, so its first line lost its indentation: nesting restarts here.
            open_definitions = []
        if _ACCESS_LABEL.match(line):
            index += 1  # "public:" sits at the class's own indentation but does not end the class
            continue
        indent = _indent(line)
        while open_definitions and open_definitions[-1][0] >= indent:
            open_definitions.pop()
        parent_kind = open_definitions[-1][1] if open_definitions else ""

        for pattern in import_patterns:
            imported = pattern.search(line)
            if imported and (family != "go" or "import" in line or _inside_go_import_block(lines, index)):
                name = imported.group("name")
                if name not in seen_imports and name != "__future__":
                    seen_imports.add(name)
                    outline.imports.append(name)
                break

        found = _match_definition(lines, index, family, parent_kind, leaf_start)
        if found is None:
            variable = variable_pattern.match(line) if variable_pattern and not open_definitions else None
            if variable and variable.group("name") not in outline.variables:
                outline.variables.append(variable.group("name"))
            index += 1
            continue

        kind, name = found
        if kind == "function" and parent_kind in _CONTAINER_KINDS:
            kind = "method"
        signature, last = _signature(lines, index, family, kind)
        doc = _python_docstring(lines, _next_code_line(lines, last + 1)) if family == "python" else ""
        if not doc:
            doc = _doc_from_comment_lines(_comment_block_above(lines, index, family))
        depth = len(open_definitions)
        nested = depth > 0
        if depth == 0 and leaf not in leaves_with_a_definition and leaf < len(request.scopes):
            # A method cut out of its class arrives as a leaf of its own, but its scope still names the
            # class ("inventory.models.Item.with_price"): a capitalised parent is a type by convention.
            scope_parts = request.scopes[leaf].split(".")
            if len(scope_parts) >= 2 and scope_parts[-1] == name and scope_parts[-2][:1].isupper():
                nested = True
                kind = "method" if kind == "function" else kind
            relative = _relative_scope(request.scopes[leaf], request.scope)
            bare_name = re.search(rf"(?<![\w.$]){re.escape(name)}\b", signature)
            # The signature names the method with its class when the text no longer shows the class,
            # unless it does already, as Go's receiver in "func (s *Stack) Push".
            qualify = len(relative) >= 2 and relative[-1] == name and bare_name is not None
            if qualify and bare_name and relative[-2] not in signature[: bare_name.start()]:
                position = bare_name.start()
                signature = f"{signature[:position]}{'.'.join(relative[:-1])}.{signature[position:]}"
        leaves_with_a_definition.add(leaf)
        outline.definitions.append(_Definition(kind, name, signature, doc, depth, nested))
        open_definitions.append((indent, kind))
        index = last + 1


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
            sentence = _first_sentence(text, limit=200)
            outline.definitions.append(_Definition("paragraph", sentence, sentence, "", 0))
        return
    top = min(level for _, level, _ in headings)
    for number, (at, level, title) in enumerate(headings):
        section_end = headings[number + 1][0] if number + 1 < len(headings) else len(lines) + 1
        first = next((text for start_line, text in paragraphs if at < start_line < section_end), "")
        depth = min(level - top, 2)
        section = _Definition("section", title, title, _first_sentence(first), depth, nested=depth > 0)
        outline.definitions.append(section)
    before_first_heading = [text for start_line, text in paragraphs if start_line < headings[0][0]]
    outline.overview = _first_sentence(before_first_heading[0]) if before_first_heading else ""


def _key_terms(texts: list[str], definitions: list[_Definition], limit: int = 12) -> list[str]:
    """The most telling words of the text: identifiers split at snake_case and
    camelCase, lower-cased, without stopwords; words of definition names count
    extra because they name what the code is about."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for text in texts:
        for identifier in _IDENTIFIER.findall(text):
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


# --------------------------------------------------------------------------------------------------------
# Digest: choosing the lines that fit the budget


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


def _digest(request: SummaryRequest, counter: TokenCounter) -> str:
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


class DigestSummarizer:
    """A deterministic outline of the code; needs no model and no server.

    ``reason`` says why the digest is in use when something else was wanted
    (e.g. Ollama did not answer); ``describe_summarizer`` shows it and each
    summary carries it as its note.
    """

    name = "digest"
    model = DIGEST_MODEL

    def __init__(self, counter: TokenCounter | None = None, reason: str = "") -> None:
        self.counter = counter if counter is not None else get_counter()
        self.reason = reason

    def summarise(self, request: SummaryRequest) -> Summary:
        note = f"{self.reason}; used the embedded digest" if self.reason else ""
        return Summary(_digest(request, self.counter), self.name, self.model, note=note)


# --------------------------------------------------------------------------------------------------------
# Ollama


def normalise_host(host: str) -> str:
    """``host`` as a base URL, with the defaults the Ollama client applies
    (http, port 11434), so messages show the address actually used."""
    host = host.strip().rstrip("/") or DEFAULT_OLLAMA_HOST
    if "://" not in host:
        host = f"http://{host}"
        split = urllib.parse.urlsplit(host)
        if split.port is None:
            host = f"http://{split.netloc or '127.0.0.1'}:11434{split.path}"
    return host


_OLLAMA_SYSTEM = (
    "You summarise source code for developers browsing a repository and for a code-search index. "
    "Answer with the summary only: plain text, no Markdown, no code, no preamble."
)


def _prompt(request: SummaryRequest, counter: TokenCounter, code_budget: int) -> str:
    language = LANGUAGE_NAMES.get(request.language.lower(), request.language or "code")
    words = max(12, int(request.token_budget * 0.6))
    if request.kind == "document":
        what = f"the whole file {request.path}"
        ask = "Say what the file is for, then name its main functions, classes or sections and what they do."
    else:
        scope = f" (scope {request.scope})" if request.scope else ""
        what = f"a part of {request.path}{scope}"
        ask = "Say what this code does, naming its key functions and classes and what each is for."
    code = "\n\n".join(
        f"--- {leaf_scope or request.scope or request.path} ---\n{text.rstrip()}"
        for text, leaf_scope in zip(request.texts, request.scopes, strict=True)
    )
    if counter.count(code) > code_budget:
        # Too long for the model's context: an outline of everything, then as much of the code as fits.
        outline = _digest(dataclasses.replace(request, token_budget=max(64, code_budget // 4)), counter)
        excerpt = trim_to_budget(code, code_budget - counter.count(outline) - 16, counter)
        code = f"Outline of all of it:\n{outline}\n\nThe code, from the start (the rest is cut):\n{excerpt}"
    return (
        f"Summarise {what}, written in {language}. {ask} "
        f"Mention important inputs, outputs and side effects. Use at most {words} words.\n\n"
        f"{code}\n\n"
        f"Summary of the code above in at most {words} words, plain text:"
    )


_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)
_PREAMBLE = re.compile(r"^(?:here(?:'s| is)[^\n]*?:|summary:)\s*", re.IGNORECASE)


def _clean_answer(text: str) -> str:
    text = _THINKING.sub("", text)
    text = re.sub(r"```[\w-]*", "", text)
    text = text.replace("**", "").strip()
    text = _PREAMBLE.sub("", text).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


@dataclass(frozen=True)
class _Failure:
    reason: str  # human text for the note
    lasting: bool  # True when later requests would fail the same way, so they should not be sent
    timeout: bool = False


def _failure(error: BaseException, model: str, timeout: float) -> _Failure:
    """What went wrong with a request to Ollama, in words a user can act on."""
    # The client libraries are imported where Ollama is used: an index or a
    # query with the digest summariser never pays their ~0.3 s (seconds under load).
    import httpx
    import ollama

    if isinstance(error, ollama.ResponseError):
        message = _shorten(" ".join(str(error.error).split()), 160)
        if error.status_code == 404 and "model" in message and "not found" in message:
            return _Failure(f'has no model "{model}" ({message})', lasting=True)
        # A missing endpoint or a refused login fails the same way every time; a server error may not.
        lasting = error.status_code in (401, 403, 404, 405)
        return _Failure(f"answered HTTP {error.status_code} ({message})", lasting=lasting)
    if isinstance(error, httpx.ConnectTimeout):
        return _Failure(f"did not accept a connection within {timeout:g} s", lasting=True)
    if isinstance(error, httpx.TimeoutException):
        return _Failure(f"did not answer within {timeout:g} s", lasting=False, timeout=True)
    if isinstance(error, ConnectionError):
        # The client replaces the transport error with a generic message; the original says why.
        cause = error.__context__ or error.__cause__
        detail = str(cause or error)
        if "refused" in detail.lower():
            detail = "connection refused"
        elif "name or service not known" in detail.lower() or "nodename nor servname" in detail.lower():
            detail = "unknown host name"
        return _Failure(f"did not answer ({_shorten(detail, 120)})", lasting=True)
    if isinstance(error, httpx.TransportError):
        return _Failure(f"broke the connection ({_describe_exception(error)})", lasting=True)
    if isinstance(error, (ValueError, TypeError)):
        return _Failure(f"sent a malformed answer ({_describe_exception(error)})", lasting=False)
    return _Failure(f"failed ({_describe_exception(error)})", lasting=False)


def _describe_exception(error: BaseException) -> str:
    return f"{type(error).__name__}: {_shorten(str(error), 120)}"


def _fallback_label(summarizer: Summarizer) -> str:
    if isinstance(summarizer, DigestSummarizer):
        return "the embedded digest"
    return describe_summarizer(summarizer)


class OllamaSummarizer:
    """Summaries written by a model on an Ollama server, with a fallback.

    Any failure gives the fallback's summary with a note that says what went
    wrong. Failures that would repeat (server unreachable, model missing, two
    time-outs in a row) are remembered, so a run over hundreds of groups does
    not wait on a dead server for each of them.
    """

    name = "ollama"
    # A fixed context size: Ollama reloads a model whenever num_ctx changes, so it must not vary per request.
    context_tokens = 8192
    timeouts_before_giving_up = 2

    def __init__(
        self, host: str, model: str, timeout: float, counter: TokenCounter, fallback: Summarizer
    ) -> None:
        self.host = normalise_host(host)
        self.model = model
        self.timeout = timeout
        self.counter = counter
        self.fallback = fallback
        import httpx
        import ollama

        # Connecting should be quick even when generating is slow, so a dead address fails fast.
        timeouts = httpx.Timeout(timeout, connect=min(timeout, 5.0))
        self._client = ollama.Client(host=self.host, timeout=timeouts)
        self._lock = threading.Lock()
        self._gave_up = ""  # the note to repeat once the server is known to be unusable
        self._timeouts_in_a_row = 0

    @property
    def unusable(self) -> str:
        """Why this instance no longer asks the server ("" while it still does)."""
        with self._lock:
            return self._gave_up

    def summarise(self, request: SummaryRequest) -> Summary:
        gave_up = self.unusable
        if gave_up:
            return self._fall_back(request, gave_up)
        if request.token_budget <= 0:
            return Summary("", self.name, self.model)
        # Headroom over the budget because the model's tokenizer is not ours; the answer is trimmed after.
        predict = min(request.token_budget + request.token_budget // 4 + 16, self.context_tokens // 2)
        code_budget = self.context_tokens - predict - 400
        try:
            response = self._client.generate(
                model=self.model,
                prompt=_prompt(request, self.counter, code_budget),
                system=_OLLAMA_SYSTEM,
                options={"num_predict": predict, "num_ctx": self.context_tokens, "temperature": 0.2},
                stream=False,
            )
            text = _clean_answer(response.response or "")
            if not text:
                raise ValueError("the answer has no response text")
        except Exception as error:  # any failure must still produce a summary
            return self._fall_back(request, self._note_for(error))
        with self._lock:
            self._timeouts_in_a_row = 0
        return Summary(trim_to_budget(text, request.token_budget, self.counter), self.name, self.model)

    def _note_for(self, error: BaseException) -> str:
        failure = _failure(error, self.model, self.timeout)
        fallback = _fallback_label(self.fallback)
        note = f"Ollama at {self.host} {failure.reason}; used {fallback}"
        with self._lock:
            self._timeouts_in_a_row = self._timeouts_in_a_row + 1 if failure.timeout else 0
            gives_up = failure.lasting or self._timeouts_in_a_row >= self.timeouts_before_giving_up
            if gives_up:
                if failure.timeout:
                    reason = f"{failure.reason}, {self._timeouts_in_a_row} times in a row"
                    note = f"Ollama at {self.host} {reason}; used {fallback}"
                note += " and will not ask it again in this run"
                self._gave_up = self._gave_up or note
        return note

    def _fall_back(self, request: SummaryRequest, note: str) -> Summary:
        summary = self.fallback.summarise(request)
        return Summary(summary.text, summary.summariser, summary.model, note=note)


@dataclass(frozen=True)
class _Probe:
    answers: bool
    message: str
    models: list[str] = field(default_factory=list)


def _probe(host: str, timeout: float) -> _Probe:
    import httpx
    import ollama

    base = normalise_host(host)
    try:
        with ollama.Client(host=base, timeout=timeout) as client:
            listing = client.list()
    except Exception as error:  # whatever went wrong, the answer is "no" with the reason
        return _Probe(False, f"Ollama at {base} {_failure(error, '', timeout).reason}")
    models = [model.model or "" for model in listing.models]
    version = ""
    try:
        # The client has no call for the version; it is nice to show but not needed.
        answer = httpx.get(f"{base}/api/version", timeout=timeout)
        version = str(answer.json().get("version", "")) if answer.status_code == 200 else ""
    except (httpx.HTTPError, ValueError, AttributeError):
        version = ""
    label = f"Ollama {version}" if version else "Ollama"
    listed = ", ".join(models) if models else "no models pulled yet"
    return _Probe(True, f"{label} at {base} answers; models: {listed}", models)


def check_ollama(host: str, timeout: float = 2.0) -> tuple[bool, str]:
    """Whether an Ollama server answers at ``host``, and a message with its
    version and models, or with the error."""
    probe = _probe(host, timeout)
    return probe.answers, probe.message


def _has_model(models: list[str], wanted: str) -> bool:
    return wanted in models or (":" not in wanted and f"{wanted}:latest" in models)


def make_summarizer(settings: Settings, counter: TokenCounter) -> Summarizer:
    """The summariser ``settings.summariser`` asks for.

    "auto" uses Ollama when ``ollama_host`` is set, the server answers and has
    the model; otherwise the digest, whose ``reason`` says why.
    """
    choice = settings.summariser.strip().lower()
    if choice == "digest":
        return DigestSummarizer(counter)
    host = settings.ollama_host.strip()
    if choice == "ollama":
        return OllamaSummarizer(
            host or DEFAULT_OLLAMA_HOST,
            settings.ollama_model,
            settings.ollama_timeout,
            counter,
            DigestSummarizer(counter),
        )
    if choice != "auto":
        raise ValueError(f"summariser must be 'digest', 'ollama' or 'auto', got {settings.summariser!r}")
    if not host:
        return DigestSummarizer(counter)
    probe = _probe(host, timeout=min(2.0, settings.ollama_timeout))
    if not probe.answers:
        return DigestSummarizer(counter, reason=probe.message)
    if not _has_model(probe.models, settings.ollama_model):
        model = settings.ollama_model
        missing = f'Ollama at {normalise_host(host)} answers but has no model "{model}" (ollama pull {model})'
        return DigestSummarizer(counter, reason=missing)
    return OllamaSummarizer(
        host, settings.ollama_model, settings.ollama_timeout, counter, DigestSummarizer(counter)
    )


def describe_summarizer(summarizer: Summarizer) -> str:
    """One line saying which summariser is in use, for a sidebar."""
    if isinstance(summarizer, DigestSummarizer):
        return "Embedded digest (no server)" + (f"; {summarizer.reason}" if summarizer.reason else "")
    if isinstance(summarizer, OllamaSummarizer):
        gave_up = summarizer.unusable
        status = "; not answering, so the embedded digest is used" if gave_up else ""
        return f"Ollama {summarizer.model} at {summarizer.host}{status}"
    return f"{summarizer.name} {summarizer.model}"
