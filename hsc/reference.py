"""The documentation's reference pages, written from the code at build time.

The parameter tables come from :mod:`hsc.params` (the one truth for parameters) and the command-line
reference from :func:`hsc.cli.build_parser`, so neither page is a hand-kept copy: the site's build
(a MkDocs hook, ``docs/hooks/reference.py``) puts them in place of a page's line that says so
(``MARKERS``). ``python -m hsc.reference parameters|cli`` prints the same Markdown.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from hsc.params import Parameters, Settings, describe

# A page holds one of these lines where its table goes: read in the repository it says where the table
# comes from; the site's build puts the table in its place.
MARKERS = {
    "parameters": (
        "*The tables of parameters and settings are written here from `hsc.params` when the site is built"
        " (`make docs`); `python -m hsc params` prints them too.*"
    ),
    "cli": (
        "*The reference of every command is written here from hsc's parser when the site is built"
        " (`make docs`); `hsc COMMAND --help` prints it too.*"
    ),
}
# Usage lines are wrapped at this width whatever the terminal, so the page does not depend on it.
USAGE_WIDTH = 80


def _cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def shown_default(entry: dict[str, Any]) -> str:
    """A default as the page shows it; ollama_host's comes from the environment, so it is named."""
    if entry["name"] == "ollama_host":
        return "$OLLAMA_HOST or empty"
    return str(entry["default"])


def parameters_markdown() -> str:
    """One table for the parameters of the method, one for the settings."""
    out = []
    for kind, title in ((Parameters, "Parameters"), (Settings, "Settings")):
        out += [
            f"### {title}",
            "",
            "| name | default | stage | allowed | what it does |",
            "| --- | --- | --- | --- | --- |",
        ]
        out += [
            f"| `{e['name']}` | `{_cell(shown_default(e))}` | {e['stage']} | {_cell(e['allowed'])} "
            f"| {_cell(e['help'])} |"
            for e in describe(kind)
        ]
        out.append("")
    return "\n".join(out)


@contextmanager
def _as_installed_command() -> Iterator[None]:
    """The parser names itself after argv[0]: the page shows the installed command, `hsc`."""
    saved = sys.argv[:]
    sys.argv[:] = ["hsc", *saved[1:]]
    try:
        yield
    finally:
        sys.argv[:] = saved


def parser() -> argparse.ArgumentParser:
    from hsc.cli import build_parser

    with _as_installed_command():
        return build_parser()


def subcommands(top: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _help_of_subcommands(top: argparse.ArgumentParser) -> dict[str, str]:
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help or "" for choice in action._choices_actions}


def argument_name(action: argparse.Action) -> str:
    """How an argument is written: its option strings, or a positional's name, with what it takes."""
    if action.option_strings:
        name = ", ".join(action.option_strings)
        if action.nargs != 0:
            takes = action.metavar or (
                "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
            )
            name += f" {takes}"
        return name
    if action.choices and not action.metavar:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return str(action.metavar or action.dest)


def arguments(command: argparse.ArgumentParser) -> list[argparse.Action]:
    """A command's arguments as the page lists them (help itself left out)."""
    return [a for a in command._actions if not isinstance(a, argparse._HelpAction)]


def _default(action: argparse.Action) -> str:
    if action.default in (None, False, argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return f"`{_cell(action.default)}`"


def _usage(command: argparse.ArgumentParser) -> str:
    command.formatter_class = partial(argparse.HelpFormatter, width=USAGE_WIDTH)
    return command.format_usage().strip()


def commands(top: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """Every command under ``top``, nested ones too (``encoder train``), by its words: parser and help."""
    found: dict[str, tuple[argparse.ArgumentParser, str]] = {}
    helps = _help_of_subcommands(top)
    for name, command in subcommands(top).items():
        found[name] = (command, helps.get(name, ""))
        if any(isinstance(a, argparse._SubParsersAction) for a in command._actions):
            found.update({f"{name} {inner}": value for inner, value in commands(command).items()})
    return found


def cli_markdown() -> str:
    """Every subcommand: what it does, its usage, and each argument with its default and help."""
    top = parser()
    out = ["```text", _usage(top), "```", ""]
    for name, (command, help_text) in commands(top).items():
        out += [f"### `hsc {name}`", "", _cell(help_text or command.description or ""), ""]
        out += ["```text", _usage(command), "```", ""]
        rows = [a for a in arguments(command) if a.help != argparse.SUPPRESS]
        if rows:
            out += ["| argument | default | what it does |", "| --- | --- | --- |"]
            out += [f"| `{_cell(argument_name(a))}` | {_default(a)} | {_cell(a.help or '')} |" for a in rows]
            out.append("")
    return "\n".join(out)


def expand(markdown: str) -> str:
    """A page's text with each marker replaced by the Markdown it stands for."""
    if MARKERS["parameters"] in markdown:
        markdown = markdown.replace(MARKERS["parameters"], parameters_markdown())
    if MARKERS["cli"] in markdown:
        markdown = markdown.replace(MARKERS["cli"], cli_markdown())
    return markdown


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in MARKERS:
        print("usage: python -m hsc.reference parameters|cli", file=sys.stderr)
        raise SystemExit(2)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(parameters_markdown() if what == "parameters" else cli_markdown())
