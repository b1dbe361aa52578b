"""The gold context of a benchmark target: the function and the definitions it depends on inside
its package, found with Python's own ``ast`` on the original sources.

Written apart from hsc's facts (hsc.chunk.facts, hsc.search.resolve), sharing no code with them,
so that a mistake in one cannot hide in the other. One hop: what the target's body names
directly. A name counts when it is bound at the module's top level (a function or class of the
same file, or a name an import brings in from a module of the package, following re-exports);
``self.x`` and ``cls.x`` inside a class are its method ``x`` or a base class's, ``super().x`` a
base class's, ``m.x`` is ``x`` of a package module ``m`` was bound to. A function counts whole;
a class by its header, fields and constructor (its other methods are left out).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

Lines = frozenset[int]
CONSTRUCTORS = ("__init__", "__new__", "__post_init__")


@dataclass
class _Module:
    """One parsed file of the package."""

    path: str  # relative, as the corpus names it
    dotted: str
    is_package: bool
    tree: ast.Module
    top: dict[str, ast.AST] = field(default_factory=dict)  # function and class definitions
    imported: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, name)
    starred: list[str] = field(default_factory=list)  # modules of ``from m import *``


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]


def _absolute(module: _Module, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    parts = module.dotted.split(".")
    keep = len(parts) - level + (1 if module.is_package else 0)
    base = parts[: max(keep, 0)]
    return ".".join([*base, name] if name else base)


class Package:
    """The Python files of a corpus, parsed with ``ast``, for gold contexts."""

    def __init__(self, files: dict[str, str]) -> None:
        """``files``: corpus path -> original source, for every Python file."""
        self.modules: dict[str, _Module] = {}
        for path, source in files.items():
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                continue
            stem = path[: -len(".py")]
            is_package = stem.endswith("/__init__")
            dotted = (stem[: -len("/__init__")] if is_package else stem).replace("/", ".")
            module = _Module(path, dotted, is_package, tree)
            self._read_top(module)
            self.modules[dotted] = module

    def _read_top(self, module: _Module) -> None:
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                module.top[node.name] = node
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.imported[alias.asname] = (alias.name, None)
                    else:
                        module.imported[alias.name.split(".")[0]] = (alias.name.split(".")[0], None)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(module, node.level, node.module)
                for alias in node.names:
                    if alias.name == "*":
                        module.starred.append(source)
                    else:
                        module.imported[alias.asname or alias.name] = (source, alias.name)

    # -- what a name means ------------------------------------------------------------------

    def lookup(self, dotted: str, name: str, depth: int = 0) -> tuple[_Module, ast.AST] | _Module | None:
        """A definition (module, node), a module, or None: ``name`` at the top of module ``dotted``."""
        module = self.modules.get(dotted)
        if module is None or depth > 5:
            return None
        if name in module.top:
            return module, module.top[name]
        if name in module.imported:
            source, imported = module.imported[name]
            if imported is None:
                return self.modules.get(source)
            found = self.lookup(source, imported, depth + 1)
            return found if found is not None else self.modules.get(f"{source}.{imported}")
        for source in module.starred:
            found = self.lookup(source, name, depth + 1)
            if found is not None:
                return found
        return None

    def class_member(self, module: _Module, cls: ast.ClassDef, name: str, depth: int = 0) -> tuple | None:
        for node in cls.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                return module, node
        return self.base_member(module, cls, name, depth)

    def base_member(self, module: _Module, cls: ast.ClassDef, name: str, depth: int = 0) -> tuple | None:
        if depth > 5:
            return None
        for base in cls.bases:
            found = self.expression(module, base)
            if isinstance(found, tuple) and isinstance(found[1], ast.ClassDef):
                hit = self.class_member(found[0], found[1], name, depth + 1)
                if hit is not None:
                    return hit
        return None

    def expression(self, module: _Module, node: ast.AST) -> tuple[_Module, ast.AST] | _Module | None:
        """What a ``Name`` or ``a.b`` expression at the top of ``module`` refers to."""
        if isinstance(node, ast.Name):
            return self.lookup(module.dotted, node.id)
        if isinstance(node, ast.Attribute):
            owner = self.expression(module, node.value)
            if isinstance(owner, _Module):
                return self.lookup(owner.dotted, node.attr) or self.modules.get(f"{owner.dotted}.{node.attr}")
            if isinstance(owner, tuple) and isinstance(owner[1], ast.ClassDef):
                return self.class_member(owner[0], owner[1], node.attr)
        return None

    # -- the gold context -------------------------------------------------------------------

    def target(self, path: str, start_line: int) -> tuple[_Module, ast.AST, ast.ClassDef | None] | None:
        """The function defined at ``start_line`` of ``path`` and the class it is a method of."""
        module = next((m for m in self.modules.values() if m.path == path), None)
        if module is None:
            return None
        for parent in ast.walk(module.tree):
            for child in ast.iter_child_nodes(parent):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and child.lineno == start_line:
                    return module, child, parent if isinstance(parent, ast.ClassDef) else None
        return None

    def dependencies(self, path: str, start_line: int) -> dict[tuple[str, int], Lines]:
        """(path, first line) -> the lines of each definition the target at ``start_line`` uses."""
        found = self.target(path, start_line)
        if found is None:
            return {}
        module, function, owner = found
        out: dict[tuple[str, int], Lines] = {}
        for node in ast.walk(function):
            hit = None
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                hit = self.lookup(module.dotted, node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in ("self", "cls") and owner is not None:
                    hit = self.class_member(module, owner, node.attr)
                else:
                    hit = self.expression(module, node)
            elif isinstance(node, ast.Attribute) and _is_super(node.value) and owner is not None:
                hit = self.base_member(module, owner, node.attr)
            if isinstance(hit, tuple) and hit[1] is not function:
                key = (hit[0].path, _first_line(hit[1]))
                out[key] = shown_lines(hit[1])
        return out


def _is_super(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def shown_lines(node: ast.AST) -> Lines:
    """A function's lines; a class's header, fields and constructor (not its other methods)."""
    first, last = _first_line(node), node.end_lineno or node.lineno  # type: ignore[attr-defined]
    if not isinstance(node, ast.ClassDef):
        return frozenset(range(first, last + 1))
    methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not methods:
        return frozenset(range(first, last + 1))
    lines = set(range(first, _first_line(methods[0])))
    for method in methods:
        if method.name in CONSTRUCTORS:
            lines.update(range(_first_line(method), (method.end_lineno or method.lineno) + 1))
    return frozenset(lines)


def package_of(sources: list[tuple[Path, str]]) -> Package:
    """The Python files of the corpus's sources (``(folder, name)`` as hsc.quality.corpus copies them),
    read from the originals."""
    files = {}
    for folder, name in sources:
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder).as_posix()
            files[f"{name}/{relative}" if name else relative] = path.read_text(
                encoding="utf-8", errors="replace"
            )
    return Package(files)
