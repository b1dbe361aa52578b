"""Stage 1a: find a repository's source files and read each one safely.

``walk_repository`` lists candidate files; ``load_file`` turns one into a
:class:`~hsc.model.ParsedFile` and never raises for bad input: whatever is
wrong with a file (too large, binary, not UTF-8, minified, empty,
unreadable) ends up as a ``skipped`` or ``error`` report with a reason a
person can act on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

import pathspec

from hsc.chunk.components import COMPONENT_LANGUAGES
from hsc.chunk.datafiles import data_reason
from hsc.chunk.languages import extensions
from hsc.chunk.parse import chunk_data, cut_file
from hsc.chunk.reading import FileBytes, decode_text, os_reason, read_file_bytes, stored_name
from hsc.chunk.tokens import TokenCounter
from hsc.model import FileReport, ParsedFile
from hsc.params import Parameters, Settings

LANGUAGE_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
    ".sh": "bash",
    ".bash": "bash",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",  # its own reader (hsc.chunk.prose): sections at titles, literal blocks kept whole
    **extensions(),  # C#, PHP, Kotlin, Swift, Scala, Lua, R, Elixir, Julia: see hsc.chunk.languages
    **COMPONENT_LANGUAGES,  # Vue and Svelte: their scripts cut as JavaScript or TypeScript
}

# Directories that hold tools' state, dependencies or build output, not the project's own code.
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hsc",
        ".venv",
        "venv",
        "node_modules",
        "vendor",
        "third_party",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        "dist",
        "build",
        "target",
        # an installed environment inside the tree (a Python install's own Lib/ has one)
        "site-packages",
        "dist-packages",
    }
)

# Extensions of files that are binary even when their first 8 KiB has no NUL byte.
BINARY_EXTENSIONS = frozenset(
    {
        *(".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tif", ".tiff", ".psd", ".icns"),
        *(".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war"),
        *(".whl", ".egg", ".so", ".dylib", ".dll", ".exe", ".bin", ".o", ".a", ".lib", ".obj", ".class"),
        *(".pyc", ".pyo", ".pyd", ".wasm", ".woff", ".woff2", ".ttf", ".otf", ".eot"),
        *(".mp3", ".mp4", ".wav", ".ogg", ".flac", ".avi", ".mov", ".mkv", ".webm"),
        *(".sqlite", ".sqlite3", ".db", ".npy", ".npz", ".pkl", ".pickle", ".parquet", ".h5", ".hdf5"),
        *(".onnx", ".pt", ".pth", ".safetensors", ".ckpt"),
    }
)

# .gitignore files are read for patterns only; one larger than this is not a real one.
GITIGNORE_MAX_BYTES = 1_000_000

ErrorCallback = Callable[[str, str], None]


def detect_language(rel_path: str) -> str:
    """tree-sitter language name from the file extension; "markdown" for
    documentation, "text" (blank-line blocks) for anything else."""
    return LANGUAGE_BY_EXTENSION.get(PurePosixPath(rel_path).suffix.lower(), "text")


# Patterns (gitignore syntax) of paths a repository keeps out of its index, one a line, in
# this file at its top; ``walk_repository(excludes=...)`` adds more (the CLI's ``--exclude``).
HSCIGNORE = ".hscignore"


def exclusion_spec(root: Path, excludes: Iterable[str] = ()) -> pathspec.PathSpec | None:
    """The patterns of ``root/.hscignore`` and ``excludes`` as one spec (None: nothing excluded)."""
    lines = [pattern for pattern in excludes if pattern.strip()]
    if os.path.lexists(os.path.join(root, HSCIGNORE)):
        raw = read_file_bytes(root, HSCIGNORE, GITIGNORE_MAX_BYTES)
        if raw.data is not None:
            lines = raw.data.decode("utf-8", errors="replace").splitlines() + lines
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def parse_excludes(text: str) -> list[str]:
    """Exclusion patterns as a person types them (one a line, or separated by commas; blank
    lines and ``#`` comments ignored); a ValueError naming a pattern that is not one."""
    patterns = [part.strip() for line in text.splitlines() for part in line.split(",")]
    patterns = [pattern for pattern in patterns if pattern and not pattern.startswith("#")]
    for pattern in patterns:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as error:  # pathspec's own error types differ between its versions
            raise ValueError(f"not a glob pattern: {pattern!r} ({error})") from None
    return patterns


def walk_repository(
    root: Path, on_error: ErrorCallback | None = None, excludes: Iterable[str] = ()
) -> Iterator[str]:
    """Relative POSIX paths of the candidate files under ``root``, sorted.

    Honours ``.gitignore`` files at every level (git's wildmatch rules; a
    deeper file overrides a shallower one), skips ``SKIPPED_DIRECTORIES``,
    hidden directories and dotfiles (configuration such as ``.env`` may hold
    secrets), and does not follow symlinked directories. Symlinked files are
    listed; ``load_file`` reports one that is broken or leads out of ``root``.
    Paths are the OS's names (a name that is not valid UTF-8 holds lone
    surrogates); :func:`~hsc.chunk.reading.stored_name` makes them storable.

    A directory that cannot be read (or a root that is not a directory) does
    not stop the walk: ``on_error(rel_path, reason)`` is called for it, with
    ``rel_path`` ``""`` for the root, and the walk goes on with the rest.

    Paths matching ``root/.hscignore`` or ``excludes`` (gitignore patterns, relative to
    ``root``) are left out whatever a ``.gitignore`` says.
    """
    root = Path(root)
    ignore_specs: list[tuple[str, pathspec.PathSpec]] = []
    yield from _walk_directory(root, "", ignore_specs, on_error, exclusion_spec(root, excludes))


def _walk_directory(
    root: Path,
    rel_dir: str,
    ignore_specs: list[tuple[str, pathspec.PathSpec]],
    on_error: ErrorCallback | None,
    excluded: pathspec.PathSpec | None = None,
) -> Iterator[str]:
    directory = root / rel_dir if rel_dir else root
    try:
        with os.scandir(directory) as scan:
            entries = list(scan)
    except OSError as error:
        if on_error is not None:
            on_error(stored_name(rel_dir), os_reason(error))
        return
    spec = _read_gitignore(root, rel_dir, on_error)
    specs = [*ignore_specs, (rel_dir, spec)] if spec is not None else ignore_specs

    candidates: list[tuple[str, str, bool]] = []  # (sort key, rel path, is directory)
    for entry in entries:
        name = entry.name
        rel_path = f"{rel_dir}/{name}" if rel_dir else name
        try:
            is_directory = entry.is_dir(follow_symlinks=False)
            is_symlink = entry.is_symlink()
        except OSError as error:
            if on_error is not None:
                on_error(stored_name(rel_path), os_reason(error))
            continue
        if name.startswith("."):
            continue
        if is_directory:
            if name in SKIPPED_DIRECTORIES or _is_ignored(rel_path, True, specs):
                continue
            if excluded is not None and excluded.match_file(rel_path + "/"):
                continue
            candidates.append((name + "/", rel_path, True))
            continue
        if is_symlink and _points_to_directory(entry):
            continue  # symlinked directories are not followed
        if _is_ignored(rel_path, False, specs) or (excluded is not None and excluded.match_file(rel_path)):
            continue
        candidates.append((name, rel_path, False))

    # Sorting names with a "/" after directories orders the paths exactly as
    # sorting the full relative paths would, without collecting them all first.
    for _key, rel_path, is_directory in sorted(candidates):
        if is_directory:
            yield from _walk_directory(root, rel_path, specs, on_error, excluded)
        else:
            yield rel_path


def _points_to_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


def _read_gitignore(root: Path, rel_dir: str, on_error: ErrorCallback | None) -> pathspec.PathSpec | None:
    rel_path = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
    if not os.path.lexists(os.path.join(root, rel_path)):
        return None
    # Read like any other file: a .gitignore that is a FIFO or a symlink out of the tree is not followed.
    raw = read_file_bytes(root, rel_path, GITIGNORE_MAX_BYTES)
    if raw.data is None:
        if on_error is not None:
            on_error(stored_name(rel_path), f".gitignore not read: {raw.reason}")
        return None
    return pathspec.GitIgnoreSpec.from_lines(raw.data.decode("utf-8", errors="replace").splitlines())


def _is_ignored(rel_path: str, is_directory: bool, specs: list[tuple[str, pathspec.PathSpec]]) -> bool:
    """Git's answer for one path: the deepest .gitignore with a matching
    pattern (ignore or ``!`` re-include) decides."""
    for base, spec in reversed(specs):
        relative = rel_path[len(base) + 1 :] if base else rel_path
        if is_directory:
            relative += "/"
        result = spec.check_file(relative)
        if result.include is not None:
            return bool(result.include)
    return False


def load_file(
    root: Path,
    rel_path: str,
    params: Parameters,
    settings: Settings,
    counter: TokenCounter,
    raw: FileBytes | None = None,
) -> ParsedFile:
    """Read one file and cut it into leaves; never raises for bad input.

    ``rel_path`` is the path as :func:`walk_repository` gives it (the OS's
    name); the report and the leaves carry its :func:`~hsc.chunk.reading.stored_name`.
    ``raw``: the file's bytes when the caller has read them already (with
    :func:`~hsc.chunk.reading.read_file_bytes`).

    Status ``skipped`` (with the reason) for files that are too large,
    binary, minified, empty, not regular files or symlinks out of the
    repository; ``error`` (with the OS message) for files that cannot be
    read; otherwise ``indexed``, with ``reason`` naming any syntax errors
    (the file is still cut) and any encoding other than plain UTF-8 (see
    :func:`~hsc.chunk.reading.decode_text`). Leaf byte offsets count in the UTF-8
    form of the decoded text. ``content_hash`` is the SHA-1 of the file's bytes.
    """
    language = detect_language(rel_path)
    name_shown = stored_name(rel_path)

    def report(
        status: str, reason: str, size: int = 0, digest: str = "", lang: str | None = language
    ) -> ParsedFile:
        return ParsedFile(FileReport(name_shown, lang, status, reason, size, digest))

    name = PurePosixPath(rel_path).name.lower()
    suffix = PurePosixPath(name).suffix
    if suffix in BINARY_EXTENSIONS:
        return report("skipped", f"binary file ({suffix})", lang=None)

    raw = raw or read_file_bytes(root, rel_path, settings.max_file_bytes)
    if raw.data is None:
        return report(raw.status, raw.reason, raw.size)
    data = raw.data
    size = len(data)
    digest = hashlib.sha1(data).hexdigest()

    decoded = decode_text(data)
    if decoded.text is None:
        lang = None if decoded.note.startswith("binary") else language
        return report("skipped", decoded.note, size, digest, lang=lang)
    source = decoded.text
    notes = [decoded.note] if decoded.note else []
    if not source.strip():
        return report("skipped", "empty file" if not source else "whitespace only", size, digest)
    if ".min." in name or name.endswith((".min", "-min.js", "-min.css")):
        return report("skipped", "minified (file name)", size, digest)
    long_line = _first_long_line(source, settings.max_line_length)
    if long_line is not None:
        line_number, length = long_line
        reason = (
            f"minified or generated: line {line_number} has {length:,} characters "
            f"(limit {settings.max_line_length:,})"
        )
        return report("skipped", reason, size, digest)

    data_like = data_reason(source, language)
    try:
        if data_like:
            cut = chunk_data(source, name_shown, language, params, counter)
            notes.append(data_like)
        else:
            cut = cut_file(source, name_shown, language, params, counter)
    except Exception as error:  # a chunker bug must not stop a whole repository
        return report("error", f"chunking failed: {type(error).__name__}: {error}", size, digest)
    if cut.error_lines:
        notes.insert(0, _syntax_errors(cut.error_lines))
    indexed = FileReport(name_shown, language, "indexed", "; ".join(notes), size, digest)
    return ParsedFile(indexed, cut.leaves, cut.definitions, cut.facts, cut.bindings)


def _first_long_line(source: str, limit: int) -> tuple[int, int] | None:
    """(1-based line number, length) of the first line longer than ``limit`` characters."""
    if not _has_long_line(source, limit):
        return None
    for number, line in enumerate(source.split("\n"), start=1):
        if len(line) > limit:
            return number, len(line)
    return None


def _has_long_line(source: str, limit: int) -> bool:
    """Whether a line is longer than ``limit`` characters, without splitting the text.

    From a line's start, the last newline within ``limit + 1`` characters ends every line
    that starts before it within the limit, and the next line starts after it; a line
    with no newline that near is too long."""
    start = 0
    while len(source) - start > limit:
        newline = source.rfind("\n", start, start + limit + 1)
        if newline < 0:
            return True
        start = newline + 1
    return False


def _syntax_errors(lines: list[int]) -> str:
    shown = ", ".join(str(line) for line in lines[:3])
    more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
    return f"syntax errors near line{'s' if len(lines) > 1 else ''} {shown}{more}"
