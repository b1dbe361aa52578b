"""What a file is for, from the conventions a person would expect of its path.

A coding agent asks for the code a change must touch; a release-notes line or a test that
near-quotes its words is not that code. Each file gets one role, read from its path alone
(so it costs nothing at index time and a renamed file changes role with its name):

- ``changelog``: ``CHANGES*``, ``CHANGELOG*``, ``HISTORY*``, ``NEWS*``, ``RELEASE*`` notes and
  towncrier-style fragment folders;
- ``test``: ``tests/``, ``test/``, ``testing/``, ``__tests__/``, ``spec/`` folders, ``test_*.py``,
  ``*_test.py``, ``*_test.go``, ``*.test.js``, ``*.spec.ts``, ``conftest.py``, ``*Test.java``...;
- ``example``: ``examples/``, ``samples/``, ``demo/`` folders and their like;
- ``docs``: ``docs/`` and ``doc/`` folders, prose files (Markdown, reStructuredText, plain text),
  ``README``, ``LICENSE``, ``CONTRIBUTING`` and their like;
- ``config``: build, packaging, CI and tool settings (``*.toml``, ``*.cfg``, ``*.ini``, ``*.yaml``,
  ``*.json``, ``Makefile``, ``Dockerfile``, ``.github/``...);
- ``generated``: lock files, minified bundles, protocol-buffer and other generated sources;
- ``code``: everything else (the project's own source).

The first rule that matches wins, in the order of :data:`ROLE_ORDER` below.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

ROLES = ("code", "test", "docs", "changelog", "example", "config", "generated")
# What agents' tools search unless asked for more (README of this module: docs/agents.md).
CODE_ROLES = ("code",)

_CHANGELOG_NAME = re.compile(
    r"^(changes|changelog|change_log|history|news|releases?|release[-_]notes|whatsnew|whats[-_]new)"
    r"([-_.].*)?$",
    re.IGNORECASE,
)
_CHANGELOG_DIRS = frozenset({"changelog.d", "changes.d", "newsfragments", "changelog", "release-notes"})
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "testdata"})
_TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.(py|go|rb|exs?|cc|cpp|c|rs)|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?"
    r"|.*(Test|Tests|Spec)\.(java|kt|cs|scala|swift|php)|.*_spec\.rb|test\.py|tests\.py)$"
)
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "sample_repos"})
_DOCS_DIRS = frozenset({"doc", "docs", "documentation", "man", "manual", "site"})
_PROSE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".tex"})
_DOCS_NAME = re.compile(
    r"^(readme|license|licence|copying|contributing|authors|contributors|code_of_conduct|security"
    r"|notice|maintainers|governance|support)([-_.].*)?$",
    re.IGNORECASE,
)
_CONFIG_SUFFIXES = frozenset(
    {".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".jsonc", ".xml", ".properties", ".editorconfig"}
)
_CONFIG_NAMES = frozenset(
    {
        "makefile",
        "dockerfile",
        "justfile",
        "setup.cfg",
        "tox.ini",
        "noxfile.py",
        "setup.py",
        "manifest.in",
        ".gitignore",
        ".gitattributes",
        ".dockerignore",
        ".hscignore",
        "requirements.txt",
        "cmakelists.txt",
        "build.gradle",
        "gradle.properties",
        "go.mod",
        "go.sum",
    }
)
_CONFIG_DIRS = frozenset({".github", ".circleci", ".gitlab", ".devcontainer", ".vscode", ".idea"})
_GENERATED_NAME = re.compile(
    r"(_pb2(_grpc)?\.pyi?|\.pb\.go|\.pb\.(cc|h)|\.min\.(js|css)|\.generated\.\w+|\.g\.dart|\.lock"
    r"|^package-lock\.json|^pnpm-lock\.yaml|^yarn\.lock)$",
    re.IGNORECASE,
)
_GENERATED_DIRS = frozenset({"generated", "__generated__", "gen-src"})
_REQUIREMENTS = re.compile(r"^requirements([-_.].*)?\.(txt|in)$", re.IGNORECASE)


def file_role(path: str) -> str:
    """The role (one of :data:`ROLES`) of the file at the repository-relative ``path``."""
    pure = PurePosixPath(path.replace("\\", "/"))
    name, suffix = pure.name, pure.suffix.lower()
    folders = {part.lower() for part in pure.parts[:-1]}
    if _GENERATED_NAME.search(name) or folders & _GENERATED_DIRS:
        return "generated"
    if _CHANGELOG_NAME.match(name) and (suffix in _PROSE_SUFFIXES or not suffix) or folders & _CHANGELOG_DIRS:
        return "changelog"
    if folders & _TEST_DIRS or _TEST_NAME.match(name):
        return "test"
    if folders & _EXAMPLE_DIRS:
        return "example"
    if folders & _DOCS_DIRS or suffix in _PROSE_SUFFIXES and not _REQUIREMENTS.match(name):
        return "docs"
    if _DOCS_NAME.match(name):
        return "docs"
    lower = name.lower()
    if lower in _CONFIG_NAMES or suffix in _CONFIG_SUFFIXES or folders & _CONFIG_DIRS:
        return "config"
    if _REQUIREMENTS.match(name) or lower.startswith(".") and not suffix:
        return "config"
    return "code"


def parse_roles(text: str | None) -> tuple[str, ...] | None:
    """``"code,test"`` -> ("code", "test"); None or "" -> None (every role); a ValueError naming
    an unknown role and the known ones."""
    if not text or not text.strip():
        return None
    wanted = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [role for role in wanted if role not in ROLES]
    if unknown:
        raise ValueError(f"unknown role {unknown[0]!r}; choose from {', '.join(ROLES)}")
    return wanted or None


def check_roles(roles: tuple[str, ...] | list[str] | None) -> tuple[str, ...] | None:
    """Roles given as a sequence, checked (None or empty: every role)."""
    return parse_roles(",".join(roles)) if roles else None
