"""A repository's history as localisation questions: a commit's subject, the tree at its parent,
and the functions the commit changed (read through ``git``; pure functions besides).

A question is usable when the commit has one parent (no merges), is not a version bump, and
changes at least one file whose role is code (:mod:`hsc.chunk.roles`): a change of docs or tests
alone asks for no code. Its gold comes later, from the parent's tree as hsc indexed it (the
chunker's definitions, :func:`gold_definitions`): never from the commit's own tree.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from hsc.chunk.roles import file_role
from hsc.model import Definition

# Definitions whose lines make a changed "function" (a class changed outside its methods is
# not one: finding a 600-line class says little about finding the code to touch).
FUNCTION_KINDS = frozenset({"function", "method", "constructor"})
# A commit touching more files than this is a sweep (a rename, a reformat), not a change one
# sentence describes.
MAX_CHANGED_FILES = 40
_BUMP = re.compile(
    r"^\s*(v?\d+(\.\d+)+\S*\s*$|(bump|release|prepare|start|update|set|change)\b.{0,20}\b(version|release)"
    r"|(release|version|bump)\b|(release|version)\s+v?\d)",
    re.IGNORECASE,
)
# A tool's sweep over the code (a formatter, a linter, spelling): no sentence of a change to find.
_SWEEP = re.compile(
    r"\b(black|isort|flake8|ruff|pyupgrade|prettier|pre-commit|reformat(ted|ting)?|lint(ing|er)?|typos?"
    r"|whitespace|formatting|code style)\b",
    re.IGNORECASE,
)
_PULL_REFERENCE = re.compile(r"\s*\((#|gh-)\d+\)\s*$")


class GitError(RuntimeError):
    """A git command failed; its message is git's own last line."""


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str
    subject: str  # the question: the commit's first line, without a trailing "(#123)"
    date: int  # committer time, seconds
    paths: tuple[str, ...]  # files it changed (old names for renames)


@dataclass(frozen=True)
class Gold:
    """The functions of the parent's tree that a commit changed."""

    functions: tuple[tuple[str, int, int, str], ...]  # (path, start line, end line, qualified scope)

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(path for path, *_ in self.functions))


def git(git_dir: Path, *args: str, data: bool = False) -> str | bytes:
    done = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout if data else done.stdout.decode("utf-8", "replace")


def git_dir_of(path: Path) -> Path:
    """The git directory of ``path``: a working tree's ``.git``, or a bare repository itself."""
    if (path / ".git").exists():
        return path / ".git"
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path
    raise ValueError(f"not a git repository: {path} (give a working tree or a bare repository)")


def is_bump(subject: str) -> bool:
    return bool(_BUMP.search(subject))


def history(git_dir: Path, ref: str = "HEAD") -> list[Commit]:
    """Every commit reachable from ``ref`` with one parent, newest first, with the files it changed."""
    out = git(
        git_dir, "log", ref, "--no-merges", "--no-renames", "--format=%x1e%H %P%x1f%ct%x1f%s", "--name-only"
    )
    commits = []
    for record in str(out).split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        shas, date, subject = head.split("\x1f", 2)
        ids = shas.split()
        if len(ids) != 2:  # a root commit has no parent to index
            continue
        paths = tuple(line for line in names.splitlines() if line.strip())
        commits.append(Commit(ids[0], ids[1], _PULL_REFERENCE.sub("", subject).strip(), int(date), paths))
    return commits


def usable(commit: Commit) -> bool:
    """A question hsc can be asked: a sentence, no version bump or tool's sweep, some code changed,
    not too many files."""
    if len(commit.subject.split()) < 3 or is_bump(commit.subject) or _SWEEP.search(commit.subject):
        return False
    if not commit.paths or len(commit.paths) > MAX_CHANGED_FILES:
        return False
    return any(file_role(path) == "code" for path in commit.paths)


def draw(commits: list[Commit], count: int, seed: int, span: int) -> list[Commit]:
    """``count`` usable commits drawn with ``seed`` from the newest ``span`` usable ones, oldest
    first (consecutive parents are then close, and indexing one after another stays cheap)."""
    pool = [commit for commit in commits if usable(commit)][:span]
    chosen = random.Random(seed).sample(pool, min(count, len(pool)))
    return sorted(chosen, key=lambda commit: commit.date)


def write_tree(git_dir: Path, sha: str, folder: Path) -> None:
    """Make ``folder`` hold exactly the tree of ``sha``: files that differ are written again, files
    it lacks removed, files that are the same left alone."""
    wanted: dict[str, bytes] = {}
    packed = io.BytesIO(git(git_dir, "archive", sha, data=True))  # type: ignore[arg-type]
    with tarfile.open(fileobj=packed) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None:
                wanted[member.name] = handle.read()
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(folder.rglob("*"), reverse=True):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() or path.is_symlink():
            if relative not in wanted:
                path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for relative, data in wanted.items():
        target = folder / relative
        if target.is_file() and not target.is_symlink() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def changed_lines(diff: str) -> dict[str, list[tuple[int, int, bool]]]:
    """Old path -> (first, last, inserted) of the parent's lines a ``git diff -U0`` changed. A
    pure insertion after line ``a`` is (a, a + 1, True): it changes a definition only when it
    falls inside one (both lines are the definition's)."""
    out: dict[str, list[tuple[int, int, bool]]] = {}
    path: str | None = None
    for line in diff.splitlines():
        if line.startswith("--- "):
            name = line[4:].strip()
            path = None if name == "/dev/null" else name.removeprefix("a/")
        elif line.startswith("@@") and path is not None:
            match = _HUNK.match(line)
            if match is None:
                continue
            start, count = int(match.group(1)), int(match.group(2) or 1)
            ranges = out.setdefault(path, [])
            ranges.append((start, start + count - 1, False) if count else (start, start + 1, True))
    return out


def commit_changes(git_dir: Path, commit: Commit) -> dict[str, list[tuple[int, int, bool]]]:
    diff = git(git_dir, "diff", "-U0", "--no-renames", "--no-color", commit.parent, commit.sha, "--")
    return changed_lines(str(diff))


def gold_definitions(
    changes: dict[str, list[tuple[int, int, bool]]], definitions: dict[str, list[Definition]]
) -> Gold:
    """The functions of code files that hold a changed line: for each changed range, the
    innermost function or method around each of its lines (``definitions``: the parent's, per
    path, as the chunker read them)."""
    found: dict[tuple[str, int, int, str], None] = {}
    for path, ranges in sorted(changes.items()):
        if file_role(path) != "code":
            continue
        functions = [d for d in definitions.get(path, []) if d.kind in FUNCTION_KINDS]
        for start, end, inserted in ranges:
            for line in (start,) if inserted else range(start, end + 1):
                around = [
                    d
                    for d in functions
                    if d.start_line <= line <= d.end_line and (not inserted or d.end_line >= end)
                ]
                if around:
                    inner = min(around, key=lambda d: d.end_line - d.start_line)
                    found[(path, inner.start_line, inner.end_line, inner.scope)] = None
    return Gold(tuple(found))
