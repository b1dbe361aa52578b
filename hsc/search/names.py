"""Names a query writes as code, matched against the definitions the chunker stored.

A sentence about a change often names the code it changes: ``remove the override of
Headers.get``, ``fix send_from_directory with a pathlib path``. The words of such a name are
common (``get`` is in a fifth of a web framework's leaves), so BM25 weighs them little and the
term-share cut-off drops them; and a dense encoder reads ``Headers.get`` as two words. Here a
name written as code (in backticks, dotted, ``snake_case``, ``camelCase`` or ``PascalCase`` with
two humps, a ``dunder``, or followed by ``(``) is looked up among the definitions' names; a
dotted one must match the end of a definition's qualified scope (``Headers.get`` is the method
``get`` of a class ``Headers``, not any ``get``). The leaf holding each such definition's first
line gets ``exact_name_weight`` added to its score (:func:`name_boost`), and the name's terms are
kept by BM25 whatever their share (:func:`kept_terms`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from hsc.hierarchy.groups import LeafTable
from hsc.search.lexical import terms

_BACKTICKS = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w.]*\w)")
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?![\w.]*\w)")
_CODE_WORD = re.compile(r"\w_\w|[a-z0-9][A-Z]|[A-Z]{2,}[a-z]|^__\w+__$")
# A dotted word that names a file, not code ("setup.py", "CHANGES.rst").
_FILE_SUFFIX = re.compile(r"\.(py|pyi|rst|md|txt|toml|cfg|ini|json|yaml|yml|js|ts|go|rs|java|html|css)$")

# (path, name, qualified scope, first line, last line) of definitions called one of some names.
DefinitionsNamed = Callable[[list[str]], list[tuple[str, str, str, int, int]]]


def code_names(text: str) -> list[str]:
    """The names ``text`` writes as code, as written (dotted ones whole), in order, once each."""
    found: list[str] = []
    for inner in _BACKTICKS.findall(text):
        found.extend(match.group(0) for match in re.finditer(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", inner))
    for match in _DOTTED.finditer(text):
        name = match.group(0)
        parts = name.split(".")
        if all(len(part) >= 2 for part in parts) and not _FILE_SUFFIX.search(name):
            found.append(name)
    for match in _WORD.finditer(text):
        word = match.group(0)
        called = text[match.end() : match.end() + 1] == "("
        if called or _CODE_WORD.search(word):
            found.append(word)
    return [name for name in dict.fromkeys(found) if len(name) >= 2]


def kept_terms(text: str) -> set[str]:
    """The BM25 terms of the names ``text`` writes as code: never left out for being common."""
    return {term for name in code_names(text) for term in terms(name)}


def named_definitions(text: str, lookup: DefinitionsNamed) -> list[tuple[str, int, int]]:
    """(path, first line, last line) of the definitions the query names: a plain name matches a
    definition of that name, a dotted one the definitions whose qualified scope ends with it."""
    names = code_names(text)
    if not names:
        return []
    wanted = {name.rsplit(".", 1)[-1] for name in names}
    dotted = [name for name in names if "." in name]
    plain = {name for name in names if "." not in name}
    out = []
    for path, name, scope, start, end in lookup(sorted(wanted)):
        qualified = any(scope == d or scope.endswith("." + d) for d in dotted)
        if name in plain or qualified:
            out.append((path, start, end))
    return out


def name_boost(text: str, table: LeafTable, lookup: DefinitionsNamed, weight: float) -> dict[int, float]:
    """Row of ``table`` -> ``weight`` for the leaf holding the first line of each definition the
    query names (the leaf starting after it when that line is blank in no leaf)."""
    if weight <= 0 or not len(table):
        return {}
    file_of = {path: number for number, path in enumerate(table.paths)}
    out: dict[int, float] = {}
    for path, start, _ in named_definitions(text, lookup):
        number = file_of.get(path)
        if number is None:
            continue
        lo = int(np.searchsorted(table.file_index, number, side="left"))
        hi = int(np.searchsorted(table.file_index, number, side="right"))
        ends = table.end_lines[lo:hi]
        at = int(np.searchsorted(ends, start, side="left"))  # the first leaf ending at or after it
        if at < hi - lo:
            out[lo + at] = weight
    return out
