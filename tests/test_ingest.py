"""Walking a repository and reading its files, on real temporary trees."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hsc.chunk.ingest import _first_long_line, detect_language, load_file, walk_repository
from hsc.chunk.tokens import get_counter
from hsc.model import ParsedFile
from hsc.params import Parameters, Settings

COUNTER = get_counter()
PARAMS = Parameters()
SETTINGS = Settings()
RUNNING_AS_ROOT = os.geteuid() == 0
NOBODY = 65534


@contextmanager
def unprivileged_tree() -> Iterator[Path]:
    """A scratch directory an unprivileged user can enter (pytest's own tmp_path is private to root)."""
    root = Path(tempfile.mkdtemp(prefix="hsc-ingest-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(root)


def run_unprivileged(task: Callable[[], Any]) -> Any:
    """Run ``task`` so that file modes apply: directly for an ordinary user,
    or as root in a forked child that drops to ``nobody`` first (root reads
    any file whatever its mode, and the tests run as root in CI). The result
    comes back as JSON, so tuples return as lists."""
    if not RUNNING_AS_ROOT:
        return json.loads(json.dumps(task()))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: whatever happens, it must never return into pytest
        try:
            os.close(read_end)
            try:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                payload = json.dumps({"result": task()})
            except BaseException as error:  # reported to the parent rather than lost
                payload = json.dumps({"error": repr(error)})
            with os.fdopen(write_end, "w") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        answer = json.loads(pipe.read() or '{"error": "no answer"}')
    os.waitpid(pid, 0)
    assert "error" not in answer, answer["error"]
    return answer["result"]


def write(root: Path, rel_path: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel_path
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def load(root: Path, rel_path: str, settings: Settings = SETTINGS, params: Parameters = PARAMS) -> ParsedFile:
    return load_file(root, rel_path, params, settings, COUNTER)


UNMERGED = Parameters(minimum_chunk_token_length=0)  # every function its own leaf


def walk(root: Path) -> tuple[list[str], list[tuple[str, str]]]:
    errors: list[tuple[str, str]] = []
    paths = list(walk_repository(root, on_error=lambda path, reason: errors.append((path, reason))))
    return paths, errors


# --------------------------------------------------------------------- walking


def test_walk_respects_root_and_nested_gitignore(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\nout/\n!keep.log\n/secret.py\n")
    write(tmp_path, "main.py")
    write(tmp_path, "keep.log", "kept by a negation\n")
    write(tmp_path, "debug.log", "ignored\n")
    write(tmp_path, "secret.py")  # anchored to the root only
    write(tmp_path, "pkg/secret.py")
    write(tmp_path, "out/result.py")
    write(tmp_path, "pkg/out/result.py")  # "out/" matches at any depth
    write(tmp_path, "src/.gitignore", "generated_*.py\n!generated_keep.py\n")
    write(tmp_path, "src/app.py")
    write(tmp_path, "src/generated_models.py")
    write(tmp_path, "src/generated_keep.py")
    write(tmp_path, "src/deep/generated_more.py")  # nested patterns apply below their directory too
    write(tmp_path, "other/generated_models.py")  # ...but not beside it
    write(tmp_path, "src/trace.log")  # the root's patterns still apply in src/

    paths, errors = walk(tmp_path)
    assert errors == []
    assert paths == [
        "keep.log",
        "main.py",
        "other/generated_models.py",
        "pkg/secret.py",
        "src/app.py",
        "src/generated_keep.py",
    ]


def test_walk_skips_tool_dependency_build_and_hidden_directories(tmp_path: Path) -> None:
    skipped = [
        ".git/config.py",
        ".hsc/index.py",
        ".venv/lib/site.py",
        "venv/lib/site.py",
        "node_modules/react/index.js",
        "vendor/lib.go",
        "third_party/zlib.c",
        "__pycache__/mod.py",
        ".mypy_cache/x.py",
        ".pytest_cache/x.py",
        "dist/bundle.js",
        "build/lib/mod.py",
        "target/debug/main.rs",
        ".github/workflows/ci.sh",
        "pkg/node_modules/left-pad/index.js",
        "pkg/.cache/x.py",
        "lib/python3.11/site-packages/six.py",
    ]
    for rel_path in skipped:
        write(tmp_path, rel_path)
    write(tmp_path, ".env", "TOKEN=secret\n")  # dotfiles are configuration, not code
    write(tmp_path, "pkg/mod.py")
    write(tmp_path, "builder/make.py")  # only exact directory names are skipped
    paths, errors = walk(tmp_path)
    assert errors == []
    assert paths == ["builder/make.py", "pkg/mod.py"]


def test_walk_is_sorted_like_the_full_paths(tmp_path: Path) -> None:
    for rel_path in ["a/b.py", "a.py", "a-b.py", "ab/c.py", "B.py", "a/a/z.py", "a/a.py"]:
        write(tmp_path, rel_path)
    paths, _errors = walk(tmp_path)
    assert paths == sorted(paths)
    assert len(paths) == 7
    assert list(walk_repository(tmp_path)) == paths  # deterministic


def test_walk_does_not_follow_symlinked_directories(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py")
    (tmp_path / "linked_src").symlink_to(tmp_path / "src", target_is_directory=True)
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "alias.py").symlink_to(tmp_path / "src" / "app.py")
    paths, errors = walk(tmp_path)
    assert errors == []
    assert paths == ["alias.py", "src/app.py"]


def test_walk_reports_a_root_that_cannot_be_listed_and_carries_on(tmp_path: Path) -> None:
    not_a_directory = write(tmp_path, "file.py")
    paths, errors = walk(not_a_directory)
    assert paths == []
    assert errors == [("", "Not a directory")]
    paths, errors = walk(tmp_path / "missing")
    assert paths == [] and errors == [("", "No such file or directory")]


def test_walk_reports_an_unreadable_directory_and_carries_on() -> None:
    with unprivileged_tree() as root:
        write(root, "locked/hidden.py")
        write(root, "open/visible.py")
        (root / "locked").chmod(0)
        paths, errors = run_unprivileged(lambda: walk(root))
        (root / "locked").chmod(0o755)
    assert paths == ["open/visible.py"]
    assert errors == [["locked", "Permission denied"]]


# --------------------------------------------------------------------- loading


def test_indexed_file_report(tmp_path: Path) -> None:
    source = "import os\n\n\ndef here():\n    return os.getcwd()\n"
    write(tmp_path, "pkg/where.py", source)
    parsed = load(tmp_path, "pkg/where.py")
    report = parsed.report
    assert (report.path, report.language, report.status, report.reason) == (
        "pkg/where.py",
        "python",
        "indexed",
        "",
    )
    assert report.size == len(source.encode())
    assert report.content_hash == hashlib.sha1(source.encode()).hexdigest()
    assert parsed.leaves and parsed.leaves[0].path == "pkg/where.py"
    assert "".join(leaf.text for leaf in parsed.leaves).replace("\n", "") == source.replace("\n", "")
    assert {leaf.scope for leaf in parsed.leaves} <= {"pkg.where", "pkg.where.here"}


def test_binary_files_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "data.bin.txt", b"header\x00\x01\x02 more")
    write(tmp_path, "logo.png", b"looks like text but is an image")
    by_content = load(tmp_path, "data.bin.txt").report
    assert (by_content.status, by_content.reason) == ("skipped", "binary file (NUL byte at offset 6)")
    assert by_content.language is None
    by_name = load(tmp_path, "logo.png").report
    assert (by_name.status, by_name.reason) == ("skipped", "binary file (.png)")


def test_legacy_encoded_text_is_decoded_and_the_encoding_recorded(tmp_path: Path) -> None:
    write(tmp_path, "latin1.py", b"def greet():\n    return 'caf\xe9 cr\xe8me'\n")
    parsed = load(tmp_path, "latin1.py")
    assert parsed.report.status == "indexed"
    assert parsed.report.reason.startswith("decoded as cp1252 (not valid UTF-8: byte 0xe9 at offset 28)")
    assert "café crème" in parsed.leaves[0].text
    # 0x81 is undefined in cp1252: latin-1 reads it
    write(tmp_path, "odd.txt", b"hello w\x81rld\n")
    odd = load(tmp_path, "odd.txt")
    assert odd.report.reason.startswith("decoded as latin-1") and "w\x81rld" in odd.leaves[0].text


def test_utf16_and_utf32_with_a_byte_order_mark_are_text(tmp_path: Path) -> None:
    source = "def f():\n    return 'π'\n\n\ndef g():\n    return 2\n"
    for codec, label in (("utf-16", "UTF-16 LE"), ("utf-16-be", "UTF-16 BE"), ("utf-32", "UTF-32 LE")):
        data = source.encode(codec)
        if codec == "utf-16-be":
            data = b"\xfe\xff" + data
        write(tmp_path, f"{codec}.py", data)
        parsed = load(tmp_path, f"{codec}.py", params=UNMERGED)
        assert parsed.report.status == "indexed", parsed.report
        assert parsed.report.reason.startswith(f"decoded as {label}")
        assert [(leaf.start_line, leaf.end_line) for leaf in parsed.leaves] == [(1, 2), (5, 6)]
    write(tmp_path, "broken16.py", b"\xff\xfe" + b"a\x00" + b"\x00\xd8")  # a lone surrogate
    broken = load(tmp_path, "broken16.py").report
    assert broken.status == "skipped"
    assert broken.reason == "not valid UTF-16 LE after its byte order mark (offset 4)"


def test_bytes_that_are_neither_utf8_nor_text_are_binary(tmp_path: Path) -> None:
    write(tmp_path, "noise.txt", bytes(range(1, 256)) * 4)
    report = load(tmp_path, "noise.txt").report
    assert report.status == "skipped" and report.reason.startswith("binary file (not UTF-8 and ")


def test_lone_cr_line_ends_count_as_lines_like_an_editor(tmp_path: Path) -> None:
    data = b"def a():\r    return 1\r\r\rdef b():\r\n    return 2\r\n"
    write(tmp_path, "mac.py", data)
    parsed = load(tmp_path, "mac.py", params=UNMERGED)
    assert "4 lone CR line ends read as line breaks" in parsed.report.reason
    assert [(leaf.start_line, leaf.end_line) for leaf in parsed.leaves] == [(1, 2), (5, 6)]
    for leaf in parsed.leaves:  # one byte for one: offsets still index the file's bytes
        assert data[leaf.start_byte : leaf.end_byte].replace(b"\r\n", b"\n").replace(b"\r", b"\n") == (
            leaf.text.replace("\r\n", "\n").encode()
        )


def test_too_large_file_is_skipped_with_sizes(tmp_path: Path) -> None:
    write(tmp_path, "big.py", "x = 1\n" * 400_000)  # 2.4 MB
    report = load(tmp_path, "big.py").report
    assert (report.status, report.reason) == ("skipped", "too large: 2.4 MB > 1.0 MB limit")
    assert report.size == 2_400_000
    write(tmp_path, "small.py", "y = 2\n" * 30)
    tight = Settings(max_file_bytes=100)
    assert load(tmp_path, "small.py", tight).report.reason == "too large: 180 B > 100 B limit"


def test_minified_files_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "app.min.js", "function a(){return 1}\n")
    by_name = load(tmp_path, "app.min.js").report
    assert (by_name.status, by_name.reason) == ("skipped", "minified (file name)")
    write(tmp_path, "bundle.js", "// header\nvar a=" + "1+" * 2500 + "1;\n")
    by_line = load(tmp_path, "bundle.js").report
    assert by_line.status == "skipped"
    assert by_line.reason == "minified or generated: line 2 has 5,008 characters (limit 4,000)"


def test_empty_and_blank_files_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "empty.py", "")
    write(tmp_path, "blank.py", "\n   \n\t\n")
    assert (load(tmp_path, "empty.py").report.status, load(tmp_path, "empty.py").report.reason) == (
        "skipped",
        "empty file",
    )
    assert load(tmp_path, "blank.py").report.reason == "whitespace only"


def test_unreadable_paths_are_errors_with_the_os_message(tmp_path: Path) -> None:
    (tmp_path / "dangling.py").symlink_to(tmp_path / "does-not-exist.py")
    broken = load(tmp_path, "dangling.py").report
    assert (broken.status, broken.reason) == ("error", "No such file or directory")
    (tmp_path / "looks_like_a_file.py").mkdir()
    directory = load(tmp_path, "looks_like_a_file.py").report
    assert (directory.status, directory.reason) == ("error", "Is a directory")
    assert load(tmp_path, "never/was.py").report.status == "error"


def test_file_without_read_permission_is_an_error() -> None:
    with unprivileged_tree() as root:
        write(root, "locked.py").chmod(0)
        status, reason = run_unprivileged(lambda: status_and_reason(load(root, "locked.py")))
    assert (status, reason) == ("error", "Permission denied")


def status_and_reason(parsed: ParsedFile) -> tuple[str, str]:
    return parsed.report.status, parsed.report.reason


def test_special_files_are_skipped_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    report = load(tmp_path, "pipe.py").report
    assert (report.status, report.reason) == ("skipped", "not a regular file: a named pipe (FIFO)")


def test_byte_order_mark_is_stripped_and_offsets_follow_the_parsed_text(tmp_path: Path) -> None:
    source = "import os\n\n\ndef f():\n    return 'é'\n"
    raw = b"\xef\xbb\xbf" + source.encode()
    write(tmp_path, "bom.py", raw)
    parsed = load(tmp_path, "bom.py")
    report = parsed.report
    assert report.status == "indexed"
    assert "byte order mark" in report.reason
    assert report.size == len(raw) and report.content_hash == hashlib.sha1(raw).hexdigest()
    data = source.encode()
    assert parsed.leaves[0].start_byte == 0 and parsed.leaves[0].start_line == 1
    for leaf in parsed.leaves:
        assert data[leaf.start_byte : leaf.end_byte].decode() == leaf.text
        assert "\ufeff" not in leaf.text


def test_syntax_errors_are_indexed_with_a_warning(tmp_path: Path) -> None:
    source = "def ok():\n    return 1\n\n\ndef broken(:\n    pass\n"
    write(tmp_path, "broken.py", source)
    parsed = load(tmp_path, "broken.py")
    assert parsed.report.status == "indexed"
    assert parsed.report.reason == "syntax errors near line 5"
    assert any("def broken" in leaf.text for leaf in parsed.leaves)


def test_text_and_markdown_files_are_indexed_with_fallbacks(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# Title\n\nSome words about the project.\n")
    write(tmp_path, "NOTES", "first block\n\nsecond block\n")
    markdown = load(tmp_path, "README.md")
    text = load(tmp_path, "NOTES")
    assert (markdown.report.language, text.report.language) == ("markdown", "text")
    assert markdown.leaves[0].chunker == "paragraph" and text.leaves[0].chunker == "lines"


def test_walk_then_load_a_small_repository(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.tmp\n")
    write(tmp_path, "app/main.go", 'package main\n\nfunc main() { println("hi") }\n')
    write(tmp_path, "app/util.ts", "export const twice = (n: number) => n * 2;\n")
    write(tmp_path, "app/scratch.tmp", "ignored\n")
    write(tmp_path, "assets/icon.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    reports = [load(tmp_path, rel_path).report for rel_path in walk_repository(tmp_path)]
    assert [(r.path, r.status, r.language) for r in reports] == [
        ("app/main.go", "indexed", "go"),
        ("app/util.ts", "indexed", "typescript"),
        ("assets/icon.png", "skipped", None),
    ]
    assert detect_language("app/util.ts") == "typescript"


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(st.sampled_from(["\n", "a", "bb", "é", "\r", "x" * 7]), max_size=40).map("".join),
    st.integers(1, 12),
)
def test_a_long_line_is_found_as_splitting_the_text_finds_it(source: str, limit: int) -> None:
    lines = source.split("\n")
    first = next(((n, len(line)) for n, line in enumerate(lines, start=1) if len(line) > limit), None)
    assert _first_long_line(source, limit) == first
