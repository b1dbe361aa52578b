"""Property tests: for any text and for generated source in several
languages, leaves tile the file; for any bytes, ingestion never raises.
Plus a bounded run of the fuzz target (HSC_FUZZ_SECONDS, default 5)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fuzz_parse_ingest import check_file, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parse import assert_covers

from hsc.chunk.ingest import detect_language
from hsc.chunk.parse import parse_source
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters

COUNTER = get_counter()
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
SIZES = st.sampled_from(
    [
        Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=8),
        Parameters(minimum_chunk_token_length=8, maximum_chunk_token_length=24),
        Parameters(),
    ]
)

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
WORDS = st.lists(NAMES, min_size=1, max_size=12).map(" ".join)


def check_leaves(source: str, path: str, params: Parameters) -> None:
    leaves, _errors = parse_source(source, path, detect_language(path), params, COUNTER)
    assert_covers(source, leaves)  # ordered, disjoint, exact slices, every non-blank line covered
    lines = source.split("\n")
    for leaf in leaves:
        if leaf.token_count > params.maximum_chunk_token_length:
            # Only a line that is over the maximum by itself may make a leaf over it.
            longest = max(COUNTER.count(line.strip()) for line in lines[leaf.start_line - 1 : leaf.end_line])
            assert leaf.start_line == leaf.end_line or longest > params.maximum_chunk_token_length, leaf


@st.composite
def python_source(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        name, words = draw(NAMES), draw(st.lists(WORDS, min_size=1, max_size=6))
        lines = [f"{name}_{i} = '{word}'" for i, word in enumerate(words)]
        if draw(st.booleans()):
            body = "".join(f"        {line}\n" for line in lines)
            parts.append(f"class C{name}:\n    def m_{name}(self):\n{body}        return self\n")
        else:
            body = "".join(f"    {line}\n" for line in lines)
            parts.append(f"def f_{name}(x):\n{body}    return x\n")
    return "\n\n".join(parts)


@st.composite
def brace_source(draw) -> tuple[str, str]:
    extension = draw(st.sampled_from([".js", ".ts", ".go", ".c", ".java", ".rs"]))
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        name, words = draw(NAMES), draw(st.lists(WORDS, min_size=1, max_size=6))
        body = "".join(f'  print("{w}");\n' for w in words)
        head = {
            ".js": f"function {name}(x) {{",
            ".ts": f"export function {name}(x: number): number {{",
            ".go": f"func {name}(x int) int {{",
            ".c": f"int {name}(int x) {{",
            ".java": f"class K{name} {{ int {name}(int x) {{",
            ".rs": f"fn {name}(x: i32) -> i32 {{",
        }[extension]
        tail = "}}" if extension == ".java" else "}"
        parts.append(f"{head}\n{body}  return x;\n{tail}\n")
    prefix = "package main\n\n" if extension == ".go" else ""
    return prefix + "\n".join(parts), extension


# One generated definition per language of hsc.chunk.languages: a type holding a method whose body
# runs the generated statements (``{s}``) and a lambda, with an attribute and a doc comment above.
TABLED_TEMPLATES = {
    ".cs": "/// <summary>Doc {n}.</summary>\n[Attr]\npublic class K{n} {{\n  public int M{n}(int x) {{\n{s}"
    "    Func<int, int> f = y => y;\n    return x;\n  }}\n  struct S{n} {{ int Q() => 1; }}\n}}\n",
    ".php": "/** Doc {n}. */\n#[Attr]\nclass K{n} {{\n  public function m{n}($x) {{\n{s}"
    "    $f = fn($y) => $y;\n    return $x;\n  }}\n}}\n",
    ".kt": "/** Doc {n}. */\n@Attr\nclass K{n} {{\n  fun m{n}(x: Int): Int {{\n{s}"
    "    val f = {{ y: Int -> y }}\n    return x\n  }}\n  companion object {{ fun q() = 1 }}\n}}\n",
    ".swift": "/// Doc {n}.\n@available(*)\nstruct K{n} {{\n  func m{n}(x: Int) -> Int {{\n{s}"
    "    let f = {{ (y: Int) in y }}\n    return x\n  }}\n}}\n",
    ".scala": "/** Doc {n}. */\n@Attr\nclass K{n} {{\n  def m{n}(x: Int): Int = {{\n{s}"
    "    val f = (y: Int) => y\n    x\n  }}\n  object Q {{ def q = 1 }}\n}}\n",
    ".lua": "--- Doc {n}.\nfunction M.m{n}(x)\n{s}  local f = function(y) return y end\n  return x\nend\n",
    ".r": "#' Doc {n}.\nm{n} <- function(x) {{\n{s}  f <- function(y) y\n  x\n}}\n",
    ".ex": "defmodule K{n} do\n  # Doc {n}.\n  def m{n}(x) do\n{s}    f = fn y -> y end\n    x\n  end\nend\n",
    ".jl": "# Doc {n}.\nmodule K{n}\nfunction m{n}(x)\n{s}  f = y -> y\n  x\nend\ng{n}(x) = x + 1\nend\n",
    # Vue and Svelte: the script parts cut with the script's grammar, the markup around them
    ".vue": '<template>\n  <p>{{{{ m{n} }}}}</p>\n</template>\n<script lang="ts">\n/** Doc {n}. */\n'
    "export function m{n}(x: number): number {{\n{s}  const f = (y: number) => y;\n"
    "  return x;\n}}\n</script>\n",
    ".svelte": "<script>\n  // Doc {n}.\n  function m{n}(x) {{\n{s}    return x;\n  }}\n</script>\n"
    "<h1>{{m{n}(1)}}</h1>\n",
}
TABLED_STATEMENTS = {
    ".cs": '    Print("{w}");\n',
    ".php": '    print("{w}");\n',
    ".lua": '  print("{w}")\n',
    ".r": '  print("{w}")\n',
    ".jl": '  println("{w}")\n',
    ".vue": '  print("{w}");\n',
}


@st.composite
def tabled_source(draw) -> tuple[str, str]:
    extension = draw(st.sampled_from(sorted(TABLED_TEMPLATES)))
    statement = TABLED_STATEMENTS.get(extension, '    print("{w}")\n')
    parts = []
    for number in range(draw(st.integers(1, 4))):
        words = draw(st.lists(WORDS, min_size=0, max_size=6))
        body = "".join(statement.format(w=word) for word in words)
        parts.append(TABLED_TEMPLATES[extension].format(n=number, s=body))
    if draw(st.booleans()):  # a syntax error somewhere
        at = draw(st.integers(0, len(parts)))
        parts.insert(at, draw(st.sampled_from(["} ) ]", "class {", "def (", "fun fun", "<?php ?> ]]"])))
    prefix = "<?php\n" if extension == ".php" else ""
    return prefix + "\n".join(parts), extension


@SETTINGS
@given(st.text(max_size=600), st.sampled_from(["a.py", "a.md", "a.txt", "a.js", "a.go"]), SIZES)
def test_any_text_is_tiled_by_leaves(text: str, path: str, params: Parameters) -> None:
    check_leaves(text, path, params)


@SETTINGS
@given(python_source(), SIZES)
def test_generated_python_is_tiled_by_leaves(source: str, params: Parameters) -> None:
    check_leaves(source, "gen.py", params)


@SETTINGS
@given(brace_source(), SIZES)
def test_generated_brace_languages_are_tiled_by_leaves(source_and_extension, params: Parameters) -> None:
    source, extension = source_and_extension
    check_leaves(source, f"gen{extension}", params)


@SETTINGS
@given(tabled_source(), SIZES)
def test_generated_tabled_languages_are_tiled_by_leaves(source_and_extension, params: Parameters) -> None:
    """C#, PHP, Kotlin, Swift, Scala, Lua, R, Elixir, Julia (hsc.chunk.languages), Vue, Svelte."""
    source, extension = source_and_extension
    check_leaves(source, f"gen{extension}", params)


@SETTINGS
@given(tabled_source(), st.binary(max_size=200), st.integers(0, 10_000))
def test_tabled_languages_with_random_bytes_never_raise(source_and_extension, noise: bytes, at: int) -> None:
    source, extension = source_and_extension
    data = source.encode()
    at %= len(data) + 1
    check_file(data[:at] + noise + data[at:], extension)


@SETTINGS
@given(st.binary(max_size=3000), st.sampled_from([".py", ".md", ".txt", ".ts", ".rb", *TABLED_TEMPLATES]))
def test_any_bytes_as_a_file_never_raise(data: bytes, extension: str) -> None:
    check_file(data, extension)


def test_the_fuzz_target_runs_for_a_bounded_time() -> None:
    seconds = float(os.environ.get("HSC_FUZZ_SECONDS", "5"))
    assert run(seconds) > 0


def test_the_fuzz_target_takes_a_hostile_file() -> None:
    folder = Path(tempfile.mkdtemp())
    check_file(b"\xff\xfe" + "def f():\n    return 1\n".encode("utf-16-le"), ".py")
    check_file(b"\x00" * 10 + b"\xff" * 10, ".c")
    assert folder.exists()
