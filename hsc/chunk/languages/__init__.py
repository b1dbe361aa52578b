"""Languages whose syntax-tree knowledge is kept as data, one module each.

Each module (``csharp``, ``php``, ``kotlin``, ``swift``, ``scala``, ``lua``,
``r``, ``elixir``, ``julia``) holds one
:class:`~hsc.chunk.languages.tables.LanguageTables`: what its grammar calls a
definition, a container, a body, a comment, a name and an import.
``hsc.chunk.grammar`` answers from these for the languages named here; the
languages it has always known (Python, JavaScript, TypeScript, Go, Rust,
Java, C, C++, Ruby, Bash) keep their shared tables there. Perl is not among them: the
Perl grammar of tree-sitter-language-pack 0.13.0 never returns on some inputs (``VB#``,
three bytes), and a parse cannot be interrupted, so Perl files are cut into blocks of lines.
"""

from __future__ import annotations

from typing import Any

from hsc.chunk.languages import csharp, elixir, julia, kotlin, lua, php, r, scala, swift
from hsc.chunk.languages.tables import ImportForm, LanguageTables

__all__ = ["LANGUAGE_TABLES", "ImportForm", "LanguageTables", "extensions", "file_imports", "tables_for"]

LANGUAGE_TABLES: dict[str, LanguageTables] = {
    module.TABLES.name: module.TABLES for module in (csharp, php, kotlin, swift, scala, lua, r, elixir, julia)
}


def tables_for(language: str) -> LanguageTables | None:
    """The tables of a language registered here, or None (a language grammar.py's shared tables cover)."""
    return LANGUAGE_TABLES.get(language)


def extensions() -> dict[str, str]:
    """File extension -> language, for the registered languages."""
    return {suffix: tables.name for tables in LANGUAGE_TABLES.values() for suffix in tables.extensions}


def file_imports(data: bytes, root: Any, language: str) -> list[tuple[int, ImportForm]]:
    """(start byte, binding) of every import statement in a parsed file of a registered language,
    wherever it stands (C# ``using`` inside a namespace, Elixir ``alias`` inside a module), in order."""
    tables = LANGUAGE_TABLES.get(language)
    if tables is None:
        return []
    found: list[tuple[int, ImportForm]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        forms = tables.imports(data, node)
        if forms:
            found.extend((node.start_byte, form) for form in forms)
            continue
        stack.extend(reversed(node.named_children))
    return found
