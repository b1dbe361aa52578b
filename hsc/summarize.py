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

import hashlib
import json
import re
import threading
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

import httpx
import ollama

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
}

_JS_FAMILY = {"javascript", "typescript", "tsx", "jsx"}
_JAVA_FAMILY = {"java", "c_sharp", "kotlin", "scala"}
_C_FAMILY = {"c", "cpp"}
_HASH_COMMENT_LANGUAGES = {"python", "ruby", "bash", "perl", "r", "yaml", "toml", "elixir", "julia", "nim"}
_PROSE_LANGUAGES = {"markdown", "text", "rst", "org"}

# Kinds in the order the header lists them; the plural is the kind plus "s" unless given here.
_KIND_ORDER = [
    "function", "method", "class", "struct", "interface", "trait", "enum", "type", "impl",
    "module", "namespace", "macro", "section", "paragraph",
]
_PLURALS = {"class": "classes"}
_CONTAINER_KINDS = {"class", "struct", "interface", "trait", "enum", "impl", "module", "namespace"}

_Pattern = tuple["re.Pattern[str]", str]


def _patterns(*pairs: tuple[str, str]) -> list[_Pattern]:
    return [(re.compile(regex), kind) for regex, kind in pairs]


_PYTHON = _patterns(
    (r"^\s*(?:async\s+)?def\s+(?P<name>\w+)", "function"),
    (r"^\s*class\s+(?P<name>\w+)", "class"),
)
_JS = _patterns(
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
)
# Methods are recognised only directly inside a class, where a call statement cannot look like one.
_JS_METHOD = re.compile(
    r"^\s+(?:(?:public|private|protected|static|readonly|async|override|abstract|get|set)\s+)*"
    r"(?P<name>#?[\w$]+)\s*(?:<[^>]*>)?\s*\([^)]*\)\s*(?::\s*[^={;]+)?\{\s*$"
)
_GO = _patterns(
    (r"^func\s+\([^)]*\)\s*(?P<name>\w+)", "method"),
    (r"^func\s+(?P<name>\w+)", "function"),
    (r"^type\s+(?P<name>\w+)(?:\[[^\]]*\])?\s+struct\b", "struct"),
    (r"^type\s+(?P<name>\w+)(?:\[[^\]]*\])?\s+interface\b", "interface"),
    (r"^type\s+(?P<name>\w+)\b", "type"),
)
_RUST_VIS = r"(?:pub(?:\([^)]*\))?\s+)?"
_RUST = _patterns(
    (
        rf"^\s*{_RUST_VIS}(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?"
        r"fn\s+(?P<name>\w+)",
        "function",
    ),
    (rf"^\s*{_RUST_VIS}struct\s+(?P<name>\w+)", "struct"),
    (rf"^\s*{_RUST_VIS}enum\s+(?P<name>\w+)", "enum"),
    (rf"^\s*{_RUST_VIS}(?:unsafe\s+)?trait\s+(?P<name>\w+)", "trait"),
    (rf"^\s*{_RUST_VIS}type\s+(?P<name>\w+)", "type"),
    (rf"^\s*{_RUST_VIS}mod\s+(?P<name>\w+)", "module"),
    (r"^\s*(?:unsafe\s+)?impl\b(?:\s*<[^>]*>)?\s+(?P<name>[^{]+?)\s*(?:\{.*)?$", "impl"),
    (r"^\s*macro_rules!\s*(?P<name>\w+)", "macro"),
)
_JAVA_MODIFIERS = (
    r"(?:(?:public|private|protected|internal|abstract|final|static|sealed|non-sealed|open|data|partial|"
    r"override|virtual|synchronized|native|default|async|unsafe|extern|new|suspend|inline|strictfp)\s+)*"
)
_JAVA = _patterns(
    (
        rf"^\s*(?:@\w+\s+)*{_JAVA_MODIFIERS}(?P<kind>class|interface|enum|record|struct|object|trait)\s+"
        r"(?P<name>\w+)",
        "class",
    ),
    (rf"^\s*{_JAVA_MODIFIERS}fun\s+(?:<[^>]+>\s*)?(?:[\w.]+\.)?(?P<name>\w+)", "function"),
    (rf"^\s*{_JAVA_MODIFIERS}def\s+(?P<name>\w+)", "function"),
)
_JAVA_METHOD = re.compile(
    rf"^\s*{_JAVA_MODIFIERS}(?:<[^>]+>\s+)?(?P<type>[\w<>\[\],.?]+(?:<[^()]*>)?)\s+(?P<name>\w+)\s*\([^;]*$"
)
_C = _patterns(
    (r"^\s*(?:typedef\s+)?(?:template\s*<[^>]*>\s*)?(?P<kind>struct|union|enum|class)\s+(?:\w+\s+)?"
     r"(?P<name>\w+)\s*(?:final\s*)?(?::[^{;]*)?\{?\s*$", "struct"),
    (r"^\s*namespace\s+(?P<name>[\w:]+)", "namespace"),
)
# A C/C++ function: type words, then a name and "(", and nothing before the "(" but type-ish tokens.
_C_FUNCTION = re.compile(
    r"^(?P<indent>\s*)(?:template\s*<[^>]*>\s*)?(?P<prefix>(?:[\w:*&<>,~\[\]]+\s+)*?[\w:*&<>,~\[\]]*?[\s*&]+)?"
    r"(?P<name>~?[A-Za-z_][\w:]*|operator\s*[^\s(]+)\s*\((?P<rest>.*)$"
)
_RUBY = _patterns(
    (r"^\s*def\s+(?P<name>(?:self\.)?[\w.]+[?!=]?|[^\s(;]+)", "function"),
    (r"^\s*class\s+(?P<name>[A-Z][\w:]*)", "class"),
    (r"^\s*module\s+(?P<name>[A-Z][\w:]*)", "module"),
)
_GENERIC = _patterns(
    (r"^\s*(?:[\w@]+\s+)*?(?:function|func|fn|def|fun|sub|proc|defn|defp)\s+(?P<name>[\w.$:!?]+)", "function"),
    (
        r"^\s*(?:[\w@]+\s+)*?(?P<kind>class|struct|interface|trait|module|enum|object|protocol|record|"
        r"namespace|impl)\s+(?P<name>[\w.:]+)",
        "class",
    ),
)
_MARKDOWN_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<name>.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")

_CONTROL_WORDS = {
    "if", "else", "for", "while", "switch", "case", "do", "try", "catch", "return", "new", "throw", "delete",
    "sizeof", "typedef", "using", "goto", "await", "yield", "defer", "go", "match", "when", "elif", "unless",
    "until", "loop", "with", "assert", "print", "super", "this", "function", "import", "export", "package",
    "static_assert", "alignof", "decltype", "constructor" if False else "",
}

_IMPORT_PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "python": [re.compile(r"^\s*from\s+(?P<name>[\w.]+)\s+import\b"), re.compile(r"^\s*import\s+(?P<name>[\w.]+)")],
    "js": [
        re.compile(r"^\s*import\b[^'\"]*['\"](?P<name>[^'\"]+)['\"]"),
        re.compile(r"\brequire\(\s*['\"](?P<name>[^'\"]+)['\"]\s*\)"),
        re.compile(r"^\s*export\b[^'\"]*\bfrom\s+['\"](?P<name>[^'\"]+)['\"]"),
    ],
    "go": [re.compile(r"^\s*import\s+(?:\w+\s+)?\"(?P<name>[^\"]+)\""), re.compile(r"^\s+(?:\w+\s+)?\"(?P<name>[^\"]+)\"\s*$")],
    "rust": [re.compile(r"^\s*(?:pub\s+)?use\s+(?P<name>[\w:]+)"), re.compile(r"^\s*extern\s+crate\s+(?P<name>\w+)")],
    "java": [re.compile(r"^\s*import\s+(?:static\s+)?(?P<name>[\w.]+?)(?:\.\*)?\s*;"), re.compile(r"^\s*using\s+(?P<name>[\w.]+)\s*;")],
    "c": [re.compile(r"^\s*#\s*include\s*[<\"](?P<name>[^>\"]+)[>\"]")],
    "ruby": [re.compile(r"^\s*require(?:_relative)?\s*\(?\s*['\"](?P<name>[^'\"]+)['\"]")],
}

_DOC_NOISE = re.compile(
    r"copyright|licen[cs]e|spdx-|-\*-|^!|eslint|prettier|noqa|type:\s*ignore|pylint:|@ts-|nolint|go:build|"
    r"\+build|frozen_string_literal|rubocop:|^\s*(?:todo|fixme|xxx)\b",
    re.IGNORECASE,
)

# Words that say nothing about what a piece of code is for: keywords and builtin types of the supported
# languages, generic programming words and common English words.
_STOPWORDS = frozenset(
    """
    abstract and any args argv arguments array as assert async await auto begin bool boolean break byte
    case catch char class cls const constexpr continue crate def default defer del delete deriving do double
    dyn elif else end ensure enum except explicit export extends extern false final finally float fn for
    from func function get goto if impl implements import in init inline instanceof int interface internal
    is kwargs lambda len let long loop match mod module mut namespace native new nil none nonlocal not null
    object of operator or override package pass print private protected pub public raise readonly record ref
    register rescue return self signed sizeof static str string struct super switch synchronized template
    then this throw throws trait true try type typedef typename typeof uint union unless unsafe unsigned
    until use using val var virtual void volatile when where while with yield usize isize i32 i64 u32 u64 u8
    f32 f64 int32 int64 uint32 uint64 err error errors ctx tmp val vals obj value values item items data key
    keys list dict map set tuple vec option some result ok opt optional the a an to is are was be been it
    its this that these those for on at by with from as into onto than then there here we you they he she
    them our your their not no yes can could should would will shall may might must do does did done has
    have had having also only just more most less least very such each every all both either neither other
    same so if else when while which who whom whose what why how where after before above below between
    under over again further once out off up down new old one two three first last next prev number
    numbers name names use used uses using make makes made call calls called return returns returned
    given gets sets note see e.g i.e etc test tests js ts py go rs
    """.split()
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


@dataclass
class _Definition:
    kind: str
    name: str
    signature: str
    doc: str
    depth: int  # 0 = not inside another definition of the same text


@dataclass
class _Outline:
    """What the digest found in a request's text."""

    overview: str = ""
    definitions: list[_Definition] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    line_count: int = 0


def _family(language: str) -> str:
    if language in _JS_FAMILY:
        return "js"
    if language in _JAVA_FAMILY:
        return "java"
    if language in _C_FAMILY:
        return "c"
    if language in {"python", "go", "rust", "ruby"}:
        return language
    if language in _PROSE_LANGUAGES:
        return "prose"
    return "generic"


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def _shorten(text: str, limit: int) -> str:
    """``text`` cut at a word end to at most ``limit`` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;") + " …"


def _first_sentence(text: str, limit: int = 220) -> str:
    text = " ".join(text.replace("``", "`").split())
    # A sentence ends at . ! or ? followed by a capital or an opening mark, so "e.g. a list" stays whole.
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])", text)
    sentence = text[: match.start()] if match else text
    return _shorten(sentence, limit)


def _strip_quotes_and_depth(text: str, language: str) -> list[tuple[str, int]]:
    """Characters of ``text`` outside string literals, each with its bracket depth before it."""
    # Rust lifetimes ('a) look like unclosed character literals, so only double quotes delimit there.
    quotes = '"' if language == "rust" else "\"'`"
    out: list[tuple[str, int]] = []
    depth = 0
    quote = ""
    escaped = False
    for char in text:
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
        out.append((char, depth))
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
    return out


def _signature(lines: list[str], index: int, language: str) -> tuple[str, int]:
    """The cleaned signature starting at ``lines[index]`` and the index of its last line.

    Continuation lines are joined while brackets stay open (multi-line
    parameter lists); the body, a trailing ``{`` or ``:`` and comments go.
    """
    family = _family(language)
    parts: list[str] = []
    depth = 0
    last = index
    for last in range(index, min(index + 12, len(lines))):
        line = lines[last]
        if family in ("python", "ruby"):
            line = re.sub(r"\s#.*$", "", line)
        else:
            line = re.sub(r"\s//.*$", "", line)
        parts.append(line.strip())
        for char, _ in _strip_quotes_and_depth(line, language):
            depth += 1 if char in "([" else -1 if char in ")]" else 0
        if depth <= 0:
            break
    text = " ".join(part for part in parts if part)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"([(\[]) ", r"\1", text)
    text = re.sub(r",? ([)\]])", r"\1", text)

    # Find where the body starts: the first top-level ":" (Python), "{" (brace languages) or "=>" (JS).
    cut = len(text)
    scanned = "".join(char for char, _ in _strip_quotes_and_depth(text, language))
    if len(scanned) == len(text):  # no string literals, so positions line up with the original
        if family == "python":
            for position, (char, char_depth) in enumerate(_strip_quotes_and_depth(text, language)):
                if char == ":" and char_depth == 0:
                    cut = position
                    break
        elif family == "ruby":
            cut = text.find(";") if ";" in text else cut
        elif family != "prose":
            arrow = text.find("=>")
            if family == "js" and arrow >= 0:
                cut = arrow + 2
            else:
                for position, (char, char_depth) in enumerate(_strip_quotes_and_depth(text, language)):
                    if char == "{" and char_depth == 0:
                        # Go's "interface{}" or "struct{}" inside a signature is a type, not the body.
                        if text[position + 1 : position + 2] == "}" and position + 2 < len(text.rstrip()):
                            continue
                        cut = position
                        break
    signature = text[:cut].rstrip(" {:;=")
    if family == "js" and signature.endswith("=>"):
        signature = signature  # keep the arrow: it tells a reader this is a function value
    return _shorten(signature, 180), last


def _comment_text(line: str, family: str) -> str | None:
    """The text of a comment line, or None when the line is not a comment."""
    stripped = line.strip()
    markers = ["///", "//!", "//", "/**", "/*", "*/", "*"]
    if family in ("python", "ruby", "generic"):
        markers = ["#", *markers] if family != "generic" else [*markers, "#", "--"]
    if family == "c" and stripped.startswith("#"):
        return None
    for marker in markers:
        if stripped.startswith(marker):
            if marker == "#" and stripped.startswith(("#[", "#!")) and family not in ("python", "ruby"):
                return None
            body = stripped[len(marker) :]
            body = re.sub(r"\*/\s*$", "", body)
            return body.lstrip("/*!# ").rstrip()
    return None


def _doc_before(lines: list[str], index: int, family: str) -> str:
    """First sentence of the comment block directly above ``lines[index]``,
    skipping decorators, annotations and attributes in between."""
    position = index - 1
    while position >= 0 and re.match(r"^\s*(@|#\[|\[\[)", lines[position]):
        position -= 1
    collected: list[str] = []
    while position >= 0:
        line = lines[position]
        if not line.strip():
            break
        comment = _comment_text(line, family)
        if comment is None:
            break
        collected.append(comment)
        position -= 1
        if line.strip().startswith("/*"):
            break
    return _doc_from_comment_lines(list(reversed(collected)))


def _doc_from_comment_lines(comment_lines: list[str]) -> str:
    """First sentence of the first paragraph of comment lines, skipping
    pragmas and licence lines; JSDoc-style tags end the description."""
    paragraph: list[str] = []
    for text in comment_lines:
        if text.startswith("@") or text.startswith("# ") and paragraph:
            break
        if not text:
            if paragraph:
                break
            continue
        if _DOC_NOISE.search(text):
            if paragraph:
                break
            continue
        paragraph.append(text)
    return _first_sentence(" ".join(paragraph)) if paragraph else ""


_DOCSTRING_START = re.compile(r"^\s*[rRuUbBfF]{0,2}(\"\"\"|'''|\"|')")


def _python_docstring(lines: list[str], index: int) -> str:
    """First sentence of the docstring that starts at ``lines[index]``, if one does."""
    if index >= len(lines):
        return ""
    match = _DOCSTRING_START.match(lines[index])
    if not match:
        return ""
    quote = match.group(1)
    rest = lines[index][match.end() :]
    collected: list[str] = []
    for offset, line in enumerate([rest, *lines[index + 1 : index + 40]]):
        end = line.find(quote)
        if end >= 0:
            collected.append(line[:end])
            break
        collected.append(line)
        if offset == 0 and len(quote) == 1:
            break
    return _doc_from_comment_lines([line.strip() for line in collected])


def _next_code_line(lines: list[str], index: int) -> int:
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index


def _relative_scope(scope: str, parent: str) -> list[str]:
    """``scope`` as parts below ``parent`` (or below what the two share)."""
    parts = scope.split(".") if scope else []
    parent_parts = parent.split(".") if parent else []
    shared = 0
    while shared < min(len(parts), len(parent_parts)) and parts[shared] == parent_parts[shared]:
        shared += 1
    return parts[shared:]


def _match_definition(
    line: str, language: str, family: str, parent_kind: str, lines: list[str], index: int
) -> tuple[str, str] | None:
    """(kind, name) when ``line`` starts a definition in ``language``."""
    table = {"python": _PYTHON, "js": _JS, "go": _GO, "rust": _RUST, "java": _JAVA, "c": _C, "ruby": _RUBY}
    for pattern, kind in table.get(family, _GENERIC):
        match = pattern.match(line)
        if match:
            groups = match.groupdict()
            found_kind = groups.get("kind") or kind
            if found_kind in ("record", "object"):
                found_kind = "class"
            if found_kind == "union":
                found_kind = "struct"
            if family == "js" and kind == "function" and "=>" not in line and "function" not in line:
                continue
            return found_kind, match.group("name").strip()
    # A line that ends in "(" may open a multi-line arrow function parameter list.
    if family == "js":
        arrow = re.match(r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*=\s*(?:async\s+)?\($", line)
        if arrow and any("=>" in later for later in lines[index + 1 : index + 8]):
            return "function", arrow.group("name")
        if parent_kind in ("class", "interface"):
            method = _JS_METHOD.match(line)
            if method and method.group("name") not in _CONTROL_WORDS:
                return "method", method.group("name")
    if family == "java" and parent_kind in _CONTAINER_KINDS:
        method = _JAVA_METHOD.match(line)
        if (
            method
            and method.group("type") not in _CONTROL_WORDS
            and method.group("name") not in _CONTROL_WORDS
            and not line.rstrip().endswith((";", ")")) or method and parent_kind == "interface"
        ):
            return "method", method.group("name")
    if family == "c":
        return _match_c_function(line, parent_kind, lines, index)
    return None


def _match_c_function(line: str, parent_kind: str, lines: list[str], index: int) -> tuple[str, str] | None:
    match = _C_FUNCTION.match(line)
    if not match or line.lstrip().startswith("#"):
        return None
    prefix = (match.group("prefix") or "").strip()
    name = match.group("name")
    first_word = (prefix.split() or [name])[0]
    if first_word in _CONTROL_WORDS or name in _CONTROL_WORDS or "=" in line.split("(", 1)[0]:
        return None
    top_level = not match.group("indent") or parent_kind in _CONTAINER_KINDS
    # Without a return type only out-of-line members ("Foo::bar(") and constructors are definitions;
    # anything else is a call or a macro.
    if not prefix and "::" not in name and parent_kind not in ("class", "struct"):
        return None
    stripped = line.rstrip()
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    if stripped.endswith(";"):
        # A prototype declares a function only outside function bodies, where "Foo bar(a);" constructs.
        if not top_level:
            return None
    elif not (stripped.endswith(("{", ")", ",", "(")) or following.startswith("{") or ") const" in stripped):
        return None
    return ("method" if parent_kind in ("class", "struct") else "function"), name


def _python_variable(line: str) -> str | None:
    match = re.match(r"^(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)", line)
    return match.group("name") if match else None


_VARIABLE_PATTERNS = {
    "js": re.compile(r"^(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)"),
    "go": re.compile(r"^(?:var|const)\s+(?P<name>\w+)"),
    "rust": re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?(?P<name>\w+)"),
    "c": re.compile(r"^\s*#\s*define\s+(?P<name>\w+)"),
    "ruby": re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s*=(?!=)"),
    "java": re.compile(r"^\s*(?:(?:public|private|protected|static|final|const|readonly)\s+)+[\w<>\[\],.?]+\s+(?P<name>[A-Z][A-Z0-9_]*)\s*="),
}


def _outline(request: SummaryRequest) -> _Outline:
    """Read definitions, docs, imports, variables and key terms out of the request's text."""
    language = request.language.lower()
    family = _family(language)
    lines: list[str] = []
    leaf_of_line: list[int] = []
    for leaf_index, text in enumerate(request.texts):
        leaf_lines = text.splitlines() or [""]
        lines.extend(leaf_lines)
        leaf_of_line.extend([leaf_index] * len(leaf_lines))
    outline = _Outline(line_count=sum(len(text.splitlines()) for text in request.texts))
    if family == "prose":
        _outline_prose(lines, language, outline)
    else:
        _outline_code(request, lines, leaf_of_line, language, family, outline)
    outline.terms = _key_terms(request.texts, outline.definitions)
    return outline


def _outline_code(
    request: SummaryRequest,
    lines: list[str],
    leaf_of_line: list[int],
    language: str,
    family: str,
    outline: _Outline,
) -> None:
    outline.overview = _leading_overview(lines, family)
    open_definitions: list[tuple[int, str]] = []  # (indent, kind) of definitions that may enclose the next line
    first_definition_of_leaf: set[int] = set()
    seen_imports: set[str] = set()
    skip_until = -1
    for index, line in enumerate(lines):
        if index <= skip_until or not line.strip():
            continue
        indent = _indent(line)
        if index > 0 and leaf_of_line[index] != leaf_of_line[index - 1]:
            # A leaf starts at its node, so its first line lost its indentation: nesting restarts here.
            open_definitions = []
        while open_definitions and open_definitions[-1][0] >= indent:
            open_definitions.pop()
        parent_kind = open_definitions[-1][1] if open_definitions else ""

        for pattern in _IMPORT_PATTERNS.get(family, []):
            imported = pattern.search(line)
            if imported and (family != "go" or _inside_go_import(lines, index) or "import" in line):
                name = imported.group("name")
                if name not in seen_imports:
                    seen_imports.add(name)
                    outline.imports.append(name)
                break

        found = _match_definition(line, language, family, parent_kind, lines, index)
        if found is None:
            variable = _python_variable(line) if family == "python" else None
            pattern = _VARIABLE_PATTERNS.get(family)
            if variable is None and pattern is not None and (indent == 0 or family in ("c", "java")):
                matched = pattern.match(line)
                variable = matched.group("name") if matched else None
            if variable and not open_definitions and variable not in outline.variables:
                outline.variables.append(variable)
            continue
        kind, name = found
        if kind == "function" and parent_kind in _CONTAINER_KINDS:
            kind = "method"
        signature, last = _signature(lines, index, language)
        doc = ""
        if family == "python":
            doc = _python_docstring(lines, _next_code_line(lines, last + 1))
        if not doc:
            doc = _doc_before(lines, index, family)
        depth = len(open_definitions)
        leaf = leaf_of_line[index]
        if depth == 0 and leaf not in first_definition_of_leaf and leaf < len(request.scopes):
            # A method cut out of its class arrives as its own leaf; its scope still names the class.
            relative = _relative_scope(request.scopes[leaf], request.scope)
            if len(relative) >= 2 and relative[-1] == name:
                qualifier = ".".join(relative[:-1])
                signature = re.sub(rf"(?<![\w.]){re.escape(name)}\b", f"{qualifier}.{name}", signature, count=1)
                if kind == "function" and qualifier.split(".")[-1][:1].isupper():
                    kind = "method"
        first_definition_of_leaf.add(leaf)
        outline.definitions.append(_Definition(kind, name, signature, doc, depth))
        open_definitions.append((indent, kind))
        skip_until = last if family != "python" else last


def _inside_go_import(lines: list[str], index: int) -> bool:
    for position in range(index - 1, max(-1, index - 200), -1):
        stripped = lines[position].strip()
        if stripped.startswith("import ("):
            return True
        if stripped == ")" or stripped.startswith(("func ", "type ", "var ", "const ")):
            return False
    return False


def _leading_overview(lines: list[str], family: str) -> str:
    """The file's own description: a module docstring or a comment block at the
    very start that is not attached to a definition."""
    index = 0
    while index < len(lines) and (not lines[index].strip() or lines[index].startswith(("#!", "# -*-"))):
        index += 1
    if index >= len(lines):
        return ""
    if family == "python" and _DOCSTRING_START.match(lines[index]):
        return _python_docstring(lines, index)
    comment_lines: list[str] = []
    position = index
    while position < len(lines):
        text = _comment_text(lines[position], family)
        if text is None or not lines[position].strip():
            break
        comment_lines.append(text)
        position += 1
        if lines[position - 1].rstrip().endswith("*/"):
            break
    if not comment_lines:
        return ""
    # A comment followed directly by code belongs to that code, unless it is a Go package comment.
    attached = position < len(lines) and lines[position].strip() and not lines[position].startswith("package ")
    if attached:
        return ""
    return _doc_from_comment_lines(comment_lines)


def _outline_prose(lines: list[str], language: str, outline: _Outline) -> None:
    """Markdown headings become sections with their first sentence; plain text is read by paragraph."""
    paragraphs: list[tuple[int, str]] = []  # (line index, text)
    current: list[str] = []
    start = 0
    in_fence = False
    headings: list[tuple[int, int, str]] = []  # (line index, level, title)
    for index, line in enumerate([*lines, ""]):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _MARKDOWN_HEADING.match(line) if language == "markdown" else None
        if heading:
            headings.append((index, len(heading.group("level")), heading.group("name")))
        if heading or not line.strip():
            if current:
                paragraphs.append((start, " ".join(current)))
                current = []
            continue
        if not current:
            start = index
        current.append(line.strip().lstrip("-*> ").strip())
    if headings:
        top = min(level for _, level, _ in headings)
        for heading_index, level, title in headings:
            following = next((text for at, text in paragraphs if at > heading_index), "")
            next_heading = next((at for at, _, _ in headings if at > heading_index), len(lines))
            start_of_following = next((at for at, _ in paragraphs if at > heading_index), len(lines))
            doc = _first_sentence(following) if start_of_following < next_heading else ""
            outline.definitions.append(_Definition("section", title, title, doc, min(level - top, 2)))
        before_first = [text for at, text in paragraphs if at < headings[0][0]]
        outline.overview = _first_sentence(before_first[0]) if before_first else ""
    else:
        for _, text in paragraphs:
            sentence = _first_sentence(text, limit=200)
            outline.definitions.append(_Definition("paragraph", sentence, sentence, "", 0))


def _key_terms(texts: list[str], definitions: list[_Definition], limit: int = 12) -> list[str]:
    """Most telling words of the identifiers (and comments) in ``texts``: identifiers
    split at snake_case and camelCase, lower-cased, without stopwords; words in
    definition names count extra because they name what the code is about."""
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
            word = part.lower()
            if word in counts:
                counts[word] += 3
    ranked = sorted(counts, key=lambda word: (-counts[word], first_seen[word]))
    return [word for word in ranked if counts[word] >= 2][:limit]


# --------------------------------------------------------------------------------------------------------
# Digest: choosing and rendering lines within the budget


def _count_phrase(outline: _Outline, leaf_count: int) -> str:
    counts = Counter(definition.kind for definition in outline.definitions)
    phrases = []
    for kind in sorted(counts, key=lambda kind: _KIND_ORDER.index(kind) if kind in _KIND_ORDER else 99):
        number = counts[kind]
        plural = _PLURALS.get(kind, kind + "s")
        phrases.append(f"{number} {kind if number == 1 else plural}")
    if not phrases:
        return f"statements only ({leaf_count} block{'s' if leaf_count != 1 else ''})"
    return ", ".join(phrases)


def _header(request: SummaryRequest, outline: _Outline) -> str:
    language = LANGUAGE_NAMES.get(request.language.lower(), request.language or "unknown language")
    lines = f"{outline.line_count} line{'s' if outline.line_count != 1 else ''}"
    contents = _count_phrase(outline, len(request.texts))
    if request.kind == "document":
        return f"{request.path}: {language} file, {lines}: {contents}."
    scope = f" ({request.scope})" if request.scope else ""
    return f"Part of {request.path}{scope}, {lines}: {contents}."


@dataclass
class _Line:
    """One candidate line of the digest, in output order ``order``."""

    order: float
    text: str
    priority: int
    upgrade: str = ""  # a longer version of ``text`` that may replace it if it fits, e.g. with the doc


def _definition_line(definition: _Definition) -> tuple[str, str]:
    indent = "  " * min(definition.depth, 2)
    short = f"{indent}{definition.signature}"
    full = f"{short} — {definition.doc}" if definition.doc else ""
    return short, full


def _digest(request: SummaryRequest, counter: TokenCounter) -> str:
    budget = request.token_budget
    if budget <= 0:
        return ""
    outline = _outline(request)
    header = _header(request, outline)
    if counter.count(header) >= budget:
        return trim_to_budget(header, budget, counter)

    candidates: list[_Line] = []
    if outline.overview:
        candidates.append(_Line(1, outline.overview, priority=1))
    for position, definition in enumerate(outline.definitions):
        short, full = _definition_line(definition)
        nested = definition.depth > 0
        candidates.append(_Line(2 + position / 10_000, short, priority=4 if nested else 2, upgrade=full))
    definitions_end = 3.0
    if outline.terms:
        candidates.append(_Line(definitions_end + 2, "Key terms: " + ", ".join(outline.terms), priority=3))
    if outline.imports and request.kind == "document" or len(outline.imports) >= 1 and not outline.definitions:
        candidates.append(_Line(definitions_end + 1, "Uses: " + ", ".join(outline.imports[:15]), priority=5))

    used = counter.count(header)
    chosen: list[tuple[_Line, str]] = []
    # Cheap per-line estimates pick the lines; an exact count of the joined text checks the result below.
    for candidate in sorted(candidates, key=lambda line: (line.priority, line.order)):
        cost = counter.count(candidate.text) + 1
        if used + cost <= budget:
            chosen.append((candidate, candidate.text))
            used += cost
    # Docs come after every signature that fits, top-level definitions first, so a tight budget keeps the
    # list of what is defined rather than the explanations of the first few.
    upgrades = sorted(
        (index for index, (line, _) in enumerate(chosen) if line.upgrade),
        key=lambda index: (chosen[index][0].priority, chosen[index][0].order),
    )
    for index in upgrades:
        line, text = chosen[index]
        extra = counter.count(line.upgrade) - counter.count(text)
        if used + extra <= budget:
            chosen[index] = (line, line.upgrade)
            used += extra

    # Whatever was left out is at least named, so it can still be found.
    shown = {id(line) for line, _ in chosen}
    left_out = [
        definition.name
        for definition, candidate in zip(
            outline.definitions, [c for c in candidates if c.order >= 2 and c.order < 3], strict=False
        )
        if id(candidate) not in shown and definition.kind != "paragraph"
    ]
    also_names = left_out + [name for name in outline.variables if name not in left_out]
    also_text = ""
    for name in also_names:
        attempt = (also_text + ", " + name) if also_text else ("Also defines: " + name)
        if used + counter.count(attempt) + 1 > budget:
            break
        also_text = attempt
    if also_text:
        chosen.append((_Line(definitions_end + 0.5, also_text, priority=9), also_text))

    def render() -> str:
        body = [text for _, text in sorted(chosen, key=lambda item: item[0].order)]
        return "\n".join([header, *body])

    digest = render()
    # The joined text can tokenise a little differently from its lines; drop the least valuable until it fits.
    while counter.count(digest) > budget and chosen:
        least = max(range(len(chosen)), key=lambda index: (chosen[index][0].priority, chosen[index][0].order))
        line, text = chosen[least]
        if text != line.text:
            chosen[least] = (line, line.text)
        else:
            chosen.pop(least)
        digest = render()
    return digest if counter.count(digest) <= budget else trim_to_budget(digest, budget, counter)


class DigestSummarizer:
    """A deterministic outline of the code; needs no model and no server.

    ``reason`` says why the digest is in use when something else was wanted
    (e.g. Ollama did not answer); it is shown by ``describe_summarizer`` and
    carried in each summary's note.
    """

    name = "digest"
    model = DIGEST_MODEL

    def __init__(self, counter: TokenCounter | None = None, reason: str = "") -> None:
        self.counter = counter if counter is not None else get_counter()
        self.reason = reason

    def summarise(self, request: SummaryRequest) -> Summary:
        return Summary(_digest(request, self.counter), self.name, self.model, note=self.reason)


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
            host = f"http://{split.hostname or '127.0.0.1'}:11434{split.path}"
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
        ask = "Say what the file is for, then name its main functions, classes or sections and what each does."
    else:
        scope = f" (scope {request.scope})" if request.scope else ""
        what = f"a part of {request.path}{scope}"
        ask = "Say what this code does, naming its key functions and classes and what each is for."
    blocks = [f"--- {scope or request.scope or request.path} ---\n{text.rstrip()}"
              for text, scope in zip(request.texts, request.scopes, strict=True)]
    code = "\n\n".join(blocks)
    if counter.count(code) > code_budget:
        # Too long for the model's context: an outline of everything, then as much of the code as fits.
        outline_request = SummaryRequest(
            request.kind, request.path, request.language, request.scope,
            request.texts, request.scopes, max(64, code_budget // 4),
        )
        outline = _digest(outline_request, counter)
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


def _failure(error: BaseException, host: str, model: str, timeout: float) -> _Failure:
    """What went wrong with a request to Ollama, in words a user can act on."""
    if isinstance(error, ollama.ResponseError):
        message = _shorten(" ".join(str(error.error).split()), 160)
        if error.status_code == 404 and "not found" in message:
            return _Failure(f'has no model "{model}" ({message}; run `ollama pull {model}` there)', lasting=True)
        return _Failure(f"answered HTTP {error.status_code} ({message})", lasting=False)
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
        return _Failure(f"broke the connection ({type(error).__name__}: {_shorten(str(error), 120)})", lasting=True)
    if isinstance(error, (ValueError, TypeError)):
        return _Failure(f"sent a malformed answer ({type(error).__name__}: {_shorten(str(error), 120)})", False)
    return _Failure(f"failed ({type(error).__name__}: {_shorten(str(error), 120)})", lasting=False)


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
        # Connecting should be quick even when generating is slow, so a dead address fails fast.
        self._client = ollama.Client(host=self.host, timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)))
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
        predict = request.token_budget + request.token_budget // 4 + 16
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
        failure = _failure(error, self.host, self.model, self.timeout)
        fallback = _fallback_label(self.fallback)
        note = f"Ollama at {self.host} {failure.reason}; used {fallback}"
        with self._lock:
            self._timeouts_in_a_row = self._timeouts_in_a_row + 1 if failure.timeout else 0
            gives_up = failure.lasting or self._timeouts_in_a_row >= self.timeouts_before_giving_up
            if gives_up:
                if failure.timeout:
                    note = f"Ollama at {self.host} {failure.reason}, {self._timeouts_in_a_row} times in a row; used {fallback}"
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
    base = normalise_host(host)
    try:
        with ollama.Client(host=base, timeout=timeout) as client:
            listing = client.list()
    except Exception as error:  # whatever went wrong, the answer is "no" with the reason
        return _Probe(False, f"Ollama at {base} {_failure(error, base, '', timeout).reason}")
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
            host or DEFAULT_OLLAMA_HOST, settings.ollama_model, settings.ollama_timeout, counter,
            DigestSummarizer(counter),
        )
    if choice != "auto":
        raise ValueError(f"summariser must be 'digest', 'ollama' or 'auto', got {settings.summariser!r}")
    if not host:
        return DigestSummarizer(counter)
    probe = _probe(host, timeout=min(2.0, settings.ollama_timeout))
    if not probe.answers:
        return DigestSummarizer(counter, reason=f"{probe.message}; using the embedded digest")
    if not _has_model(probe.models, settings.ollama_model):
        model = settings.ollama_model
        return DigestSummarizer(
            counter,
            reason=(
                f"Ollama at {normalise_host(host)} answers but has no model \"{model}\" "
                f"(run `ollama pull {model}` there); using the embedded digest"
            ),
        )
    return OllamaSummarizer(host, settings.ollama_model, settings.ollama_timeout, counter, DigestSummarizer(counter))


def describe_summarizer(summarizer: Summarizer) -> str:
    """One line saying which summariser is in use, for a sidebar."""
    if isinstance(summarizer, DigestSummarizer):
        return "Embedded digest (no server)" + (f": {summarizer.reason}" if summarizer.reason else "")
    if isinstance(summarizer, OllamaSummarizer):
        gave_up = summarizer.unusable
        status = "; not answering, so the embedded digest is used" if gave_up else ""
        return f"Ollama {summarizer.model} at {summarizer.host}{status}"
    return f"{summarizer.name} {summarizer.model}"
