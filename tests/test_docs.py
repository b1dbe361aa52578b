"""The documentation site: its reference pages say what the code says, and it builds with --strict.

The parameter page's tables are written from ``hsc.params`` and the command-line reference from the
parser when the site is built (``hsc/reference.py``, through ``docs/hooks/reference.py``); these tests
read the tables back and compare them with the dataclasses' fields and the parser's own actions, then
build the site as ``make docs`` does and look for every parameter and option in the HTML.
"""

from __future__ import annotations

import argparse
import html
import inspect
import os
import re
import subprocess
import sys
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from hsc import Index, reference
from hsc.cli import build_parser
from hsc.params import Parameters, Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def rows(markdown: str, section: str) -> list[list[str]]:
    """The body rows of the table under ``### section``."""
    part = re.split(r"\n#{2,3} ", markdown.split(f"### {section}\n", 1)[1], maxsplit=1)[0]
    return [
        reference_cells(line) for line in part.splitlines() if line.startswith("| ") and "---" not in line
    ][1:]


def reference_cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_the_parameter_page_is_written_from_hsc_params() -> None:
    source = (DOCS / "parameters.md").read_text(encoding="utf-8")
    assert reference.MARKERS["parameters"] in source
    # No hand-kept copy of a row beside the generated tables.
    assert not re.search(r"^\| `minimum_chunk_token_length` \|", source, flags=re.MULTILINE)
    page = reference.expand(source)
    for kind in (Parameters, Settings):
        shown = {row[0].strip("`"): row for row in rows(page, kind.__name__)}
        assert list(shown) == [f.name for f in fields(kind)]
        for field in fields(kind):
            _, default, stage, _allowed, help_text = shown[field.name]
            value = field.default if field.default is not MISSING else field.default_factory()  # type: ignore[misc]
            expected = "$OLLAMA_HOST or empty" if field.name == "ollama_host" else str(value)
            assert default == f"`{expected}`", field.name
            assert stage == field.metadata["stage"], field.name
            assert help_text == " ".join(field.metadata["help"].split()), field.name


def test_the_parameters_page_points_only_at_parameters_hsc_has() -> None:
    source = (DOCS / "parameters.md").read_text(encoding="utf-8")
    part = source.split("## Where the figures behind each choice are", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in part.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`(\w+)`", row.split(" | ")[0])}
    known = {f.name for kind in (Parameters, Settings) for f in fields(kind)}
    assert named and named <= known, named - known


def subcommands(parser: argparse.ArgumentParser | None = None) -> dict[str, argparse.ArgumentParser]:
    """Every command of the parser by its words, nested ones too (``encoder train``)."""
    parser = parser or build_parser()
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found[name] = command
                found.update({f"{name} {inner}": c for inner, c in subcommands(command).items()})
    return found


def test_the_cli_page_is_written_from_the_parser() -> None:
    source = (DOCS / "cli-reference.md").read_text(encoding="utf-8")
    assert reference.MARKERS["cli"] in source
    page = reference.expand(source)
    commands = subcommands()
    assert "encoder train" in commands  # a nested command has a section of its own
    assert re.findall(r"^### `hsc ([\w ]+)`$", page, flags=re.MULTILINE) == list(commands)
    for name, command in commands.items():
        section = page.split(f"### `hsc {name}`\n", 1)[1].split("\n### ", 1)[0]
        listed = [row[0] for row in rows(f"### x\n{section}", "x")]
        actions = [
            a
            for a in command._actions
            if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS
        ]
        assert len(listed) == len(actions), name
        for action, shown in zip(actions, listed, strict=True):
            words = action.option_strings or (
                [str(c) for c in action.choices] if action.choices else [action.metavar or action.dest]
            )
            assert all(word in shown for word in words), (name, shown)
            if action.help:
                assert " ".join(action.help.split()) in section.replace("\\|", "|"), (name, action.help)


def _mkdocs() -> None:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings_handlers.python  # noqa: F401
    except ImportError as error:
        if os.environ.get("CI"):
            raise ImportError(f"mkdocs is missing in CI; install hsc[docs] ({error})") from error
        pytest.skip("mkdocs not installed (pip install 'hsc[docs]')")


def test_the_site_builds_strictly_with_every_parameter_and_option(tmp_path: Path) -> None:
    _mkdocs()
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    parameters = html.unescape((site / "parameters" / "index.html").read_text(encoding="utf-8"))
    for kind in (Parameters, Settings):
        for field in fields(kind):
            assert f"<code>{field.name}</code>" in parameters, field.name
    cli = html.unescape((site / "cli-reference" / "index.html").read_text(encoding="utf-8"))
    for name, command in subcommands().items():
        assert f"hsc {name}" in cli, name
        for action in command._actions:
            assert all(option in cli for option in action.option_strings), (name, action.option_strings)
    # The API page is the docstrings': each public method of Index with the first line of its own.
    api = (site / "api-reference" / "index.html").read_text(encoding="utf-8")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", api)).split())
    for name in ("open", "index", "build", "query", "context"):
        first_line = inspect.getdoc(getattr(Index, name)).splitlines()[0]
        # Up to a Sphinx role, which the page shows as written; code marks become <code>.
        first_line = re.split(r":\w+:", first_line)[0].replace("`", "")
        assert " ".join(first_line.split()) in text, (name, first_line)
