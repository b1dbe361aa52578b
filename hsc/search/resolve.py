"""From a span's uses to the definitions they name, across the repository, read from stored facts.

A bare name is looked up where the language puts it: the file's own top-level definitions
(for Go the whole package folder's), then the names its imports bind (``from m import x as y``,
``import m as n``, relative imports, re-exports through a package's ``__init__``, JavaScript's
named and default imports, Rust's ``use``, Java's imports). A member reference ``a.b`` is
``b`` of what ``a`` is: the enclosing class for ``self``/``cls``/``this`` (then its bases),
the bases for ``super()``, a module an import bound, or a class. Nothing is found by name alone
across the repository: a name nothing binds stays unresolved.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from hsc.model import Definition, ImportBinding
from hsc.search.assemble import CLASS_KINDS, FUNCTION_KINDS, Dependency

SELF_NAMES = frozenset({"self", "cls", "this"})
CONSTRUCTOR_NAMES = frozenset({"__init__", "__new__", "__post_init__", "constructor", "new"})
MAX_HOPS = 4  # re-exports and base classes followed at most this deep


def module_of(path: str) -> str:
    """Dotted module name of a file (``pkg/mod.py`` -> ``pkg.mod``; ``__init__`` names its package),
    as hsc.chunk.parse.module_name scopes a file's definitions."""
    from hsc.chunk.parse import module_name

    return module_name(path)


@dataclass
class FileFacts:
    """One file's stored definitions and import bindings, with lookups made from them."""

    path: str
    language: str
    definitions: list[Definition]
    bindings: list[ImportBinding]

    @cached_property
    def module(self) -> str:
        return module_of(self.path)

    @cached_property
    def top(self) -> dict[str, Definition]:
        """Definitions made at the file's top level, by name (the first of a name wins)."""
        prefix = f"{self.module}." if self.module else ""
        out: dict[str, Definition] = {}
        for definition in self.definitions:
            if definition.kind != "file" and definition.scope == prefix + definition.name:
                out.setdefault(definition.name, definition)
        return out

    @cached_property
    def by_scope(self) -> dict[str, list[Definition]]:
        out: dict[str, list[Definition]] = {}
        for definition in self.definitions:
            out.setdefault(definition.scope, []).append(definition)
        return out

    def members(self, owner: Definition) -> list[Definition]:
        """The definitions directly inside ``owner`` (and, in Rust, in its ``impl`` blocks)."""
        prefix = owner.scope + "."
        return [
            d
            for d in self.definitions
            if d.scope.startswith(prefix) and "." not in d.scope[len(prefix) :] and d is not owner
        ]

    def bound(self, local: str) -> list[ImportBinding]:
        return [binding for binding in self.bindings if binding.local == local]

    def holder(self, start: int, end: int, kinds: frozenset[str]) -> Definition | None:
        """The innermost definition of ``kinds`` holding lines ``start..end``."""
        best = None
        for definition in self.definitions:
            holds = definition.kind in kinds and definition.start_line <= start and definition.end_line >= end
            if holds and (best is None or definition.start_line >= best.start_line):
                best = definition
        return best


@dataclass
class FileIndex:
    """The repository's files by path and by module name, and their facts read on demand."""

    languages: dict[str, str]  # path -> language
    load: Callable[[str], FileFacts]  # reads a file's facts (and may put more into ``cache``)
    cache: dict[str, FileFacts] = field(default_factory=dict)  # its owner bounds it

    def facts(self, path: str) -> FileFacts:
        found = self.cache.get(path)
        if found is None:
            found = self.cache[path] = self.load(path)
        return found

    @cached_property
    def by_suffix(self) -> dict[str, list[str]]:
        """Every dotted tail of every file's module name -> the files: a module imported as
        ``a.b`` is found under ``src/a/b.py`` too."""
        out: dict[str, list[str]] = {}
        for path in self.languages:
            parts = module_of(path).split(".")
            for start in range(len(parts)):
                out.setdefault(".".join(parts[start:]), []).append(path)
        return out

    @cached_property
    def folders(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path in self.languages:
            out.setdefault(posixpath.dirname(path), []).append(path)
        return out

    def modules(self, dotted: str, near: str) -> list[str]:
        """Files whose module name is ``dotted`` or ends with it, the one closest to ``near`` first."""
        found = self.by_suffix.get(dotted, [])
        if len(found) <= 1:
            return found
        exact = [path for path in found if module_of(path) == dotted]
        return exact or sorted(found, key=lambda path: -len(_shared_prefix(path, near)))[:1]


def _shared_prefix(a: str, b: str) -> str:
    return posixpath.commonprefix([a, b])


# -- where an import's module lives, per language ------------------------------------------------


def python_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    module = binding.module
    if binding.level:
        package = module_of(importer).split(".")
        is_package = importer.endswith("__init__.py")
        drop = binding.level - (1 if is_package else 0)
        base = package[: len(package) - drop] if drop else package
        module = ".".join([*base, module] if module else base)
    return files.modules(module, importer) if module else []


SCRIPT_SUFFIXES = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".d.ts", "/index.ts", "/index.js", "/index.tsx")


def script_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    if not binding.module.startswith("."):
        return []  # a package from outside the repository
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), binding.module))
    return [base + suffix for suffix in SCRIPT_SUFFIXES if base + suffix in files.languages][:1]


def go_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    parts = binding.module.split("/")
    for start in range(len(parts)):
        folder = "/".join(parts[start:])
        if folder in files.folders:
            return [p for p in files.folders[folder] if p.endswith(".go")]
    return []


def rust_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    parts = [part for part in binding.module.split("::") if part]
    if parts and parts[0] in ("crate", "self", "super"):
        head, parts = parts[0], parts[1:]
        if head != "crate":
            here = module_of(importer).split(".")
            here = here[:-1] if head == "super" else here
            parts = [*here[1:], *parts] if here else parts
    dotted = ".".join(parts)
    return (files.modules(dotted, importer) or files.modules(f"{dotted}.mod", importer)) if dotted else []


def java_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    dotted = f"{binding.module}.{binding.name}" if binding.name and binding.name != "*" else binding.module
    return files.modules(dotted, importer) or files.modules(binding.module, importer)


# One function per language: where an import binding's module is in the repository. A language
# added to hsc adds its function here (its bindings are read in hsc.chunk.imports).
MODULE_FINDERS: dict[str, Callable[[FileIndex, str, ImportBinding], list[str]]] = {
    "python": python_modules,
    "javascript": script_modules,
    "typescript": script_modules,
    "tsx": script_modules,
    "go": go_modules,
    "rust": rust_modules,
    "java": java_modules,
}
SAME_FOLDER_SCOPE = frozenset({"go"})
# Languages whose import of a name may import a module of that name, and how they join the two.
SUBMODULE_SEPARATORS = {"python": ".", "rust": "::"}  # a package is its folder: its files share one top level


# -- resolution ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A name resolved: a definition in a file, or a whole module (``definition`` None)."""

    path: str
    definition: Definition | None


class Resolver:
    """Resolves the uses of lines of a file to the definitions they name (see the module doc)."""

    def __init__(self, files: FileIndex) -> None:
        self.files = files

    def name(self, path: str, local: str, hops: int = 0) -> list[Found]:
        """What the bare name ``local`` means at the top level of ``path``."""
        if hops > MAX_HOPS:
            return []
        facts = self.files.facts(path)
        if local in facts.top:
            return [Found(path, facts.top[local])]
        if facts.language in SAME_FOLDER_SCOPE:
            for other in self.files.folders.get(posixpath.dirname(path), []):
                if other != path and local in self.files.facts(other).top:
                    return [Found(other, self.files.facts(other).top[local])]
        found = [hit for binding in facts.bound(local) for hit in self.binding(path, binding, hops)]
        if found:
            return found
        for binding in facts.bound("*"):
            for module in self.module_files(path, binding):
                hit = self.name(module, local, hops + 1)
                if hit:
                    return hit
        return []

    def module_files(self, path: str, binding: ImportBinding) -> list[str]:
        finder = MODULE_FINDERS.get(self.files.facts(path).language)
        return [p for p in finder(self.files, path, binding) if p != path] if finder else []

    def binding(self, path: str, binding: ImportBinding, hops: int) -> list[Found]:
        modules = self.module_files(path, binding)
        if binding.name in ("", "*"):
            return [Found(module, None) for module in modules]
        for module in modules:
            facts = self.files.facts(module)
            if binding.name in facts.top:
                return [Found(module, facts.top[binding.name])]
            again = self.name(module, binding.name, hops + 1)  # re-exported there
            if again:
                return again
        separator = SUBMODULE_SEPARATORS.get(self.files.facts(path).language)
        if separator is not None:  # ``from pkg import submodule``, ``use crate::{module}``
            dotted = f"{binding.module}{separator}{binding.name}" if binding.module else binding.name
            submodule = ImportBinding(binding.local, dotted, "", binding.level)
            return [Found(module, None) for module in self.module_files(path, submodule)]
        return []

    def member(self, path: str, owner: Found, member: str, hops: int = 0) -> list[Found]:
        """``member`` of a resolved module or class."""
        if hops > MAX_HOPS:
            return []
        facts = self.files.facts(owner.path)
        if owner.definition is None:
            return self.name(owner.path, member, hops + 1) if member else []
        if owner.definition.kind not in CLASS_KINDS:
            return []
        for definition in facts.by_scope.get(f"{owner.definition.scope}.{member}", []):
            return [Found(owner.path, definition)]
        for base in self.bases(owner.path, owner.definition, hops):
            found = self.member(owner.path, base, member, hops + 1)
            if found:
                return found
        return []

    def bases(self, path: str, definition: Definition, hops: int = 0) -> list[Found]:
        """The classes a class's header names as its bases, resolved in its own file."""
        found = []
        for base in base_names(definition.signature):
            head, *rest = base.split(".")
            current = self.name(path, head, hops + 1)
            for part in rest:
                current = self.member(path, current[0], part, hops + 1) if current else []
            found += [
                hit for hit in current if hit.definition is not None and hit.definition.kind in CLASS_KINDS
            ]
        return found

    def reference(self, path: str, start: int, end: int, reference: str) -> list[Found]:
        head, _, rest = reference.partition(".")
        parts = rest.split(".")
        facts = self.files.facts(path)
        if head in SELF_NAMES or head == "super()":
            owner = facts.holder(start, end, CLASS_KINDS)
            if owner is None:
                return []
            owners = self.bases(path, owner) if head == "super()" else [Found(path, owner)]
            for found_owner in owners:
                found = self.member(path, found_owner, parts[0])
                if found:
                    return found
            return []
        # ``import a.b`` binds ``a.b``: the longest bound prefix of the reference is its owner.
        names = reference.split(".")
        for size in range(len(names) - 1, 0, -1):
            prefix = ".".join(names[:size])
            if size > 1 and not facts.bound(prefix):
                continue
            current = self.name(path, prefix)
            for part in names[size:]:
                current = self.member(path, current[0], part) if current else []
            return current
        return []

    def dependencies(
        self, path: str, start: int, end: int, uses: set[str], references: set[str]
    ) -> list[Dependency]:
        """The definitions lines ``start..end`` of ``path`` use (not the ones they hold themselves)."""
        facts = self.files.facts(path)
        user = facts.holder(start, end, FUNCTION_KINDS | CLASS_KINDS)
        user_name = user.scope if user is not None else facts.module
        out: dict[tuple[str, int], Dependency] = {}

        def add(found: Found, name: str) -> None:
            definition = found.definition
            if definition is None or definition.kind == "file":
                return
            if found.path == path and definition.start_line <= end and definition.end_line >= start:
                return  # inside (or around) the lines themselves
            verb = "calls" if definition.kind in FUNCTION_KINDS else "uses"
            out.setdefault(
                (found.path, definition.start_line),
                Dependency(
                    found.path,
                    definition,
                    self.runs(found.path, definition),
                    f"{user_name} {verb} {definition.scope}"
                    + (f" (as {name})" if name != definition.name else ""),
                ),
            )

        for reference in sorted(references):
            for found in self.reference(path, start, end, reference):
                add(found, reference)
        for name in sorted(uses):
            if name in SELF_NAMES:
                continue
            for found in self.name(path, name):
                add(found, name)
        return list(out.values())

    def runs(self, path: str, definition: Definition) -> tuple[tuple[int, int], ...]:
        """The lines a definition is shown by: a function whole; a class by its skeleton (header,
        fields and constructor, without its other methods)."""
        if definition.kind not in CLASS_KINDS:
            return ((definition.start_line, definition.end_line),)
        members = sorted(
            (m for m in self.files.facts(path).members(definition) if m.kind in FUNCTION_KINDS),
            key=lambda m: m.start_line,
        )
        if not members:
            return ((definition.start_line, definition.end_line),)
        runs = [(definition.start_line, members[0].start_line - 1)]
        constructor = {definition.name} | CONSTRUCTOR_NAMES
        for method in members:
            if method.name in constructor:
                runs.append((method.start_line, method.end_line))
        return tuple((a, b) for a, b in runs if b >= a)


_BASES = re.compile(r"\(([^)]*)\)")
_EXTENDS = re.compile(r"\b(?:extends|implements)\s+([\w.$<>, ]+?)(?=\s*(?:\{|implements\b|$))")


def base_names(signature: str) -> list[str]:
    """The base classes a class header names: ``class C(A, m.B, metaclass=M):`` -> A, m.B;
    ``class C extends B implements I, J`` -> B, I, J."""
    names: list[str] = []
    if signature.startswith("class ") and "(" in signature.split(":")[0]:
        match = _BASES.search(signature)
        if match:
            names = [
                part.strip() for part in match.group(1).split(",") if "=" not in part and "*" not in part
            ]
    for match in _EXTENDS.finditer(signature):
        names += [re.sub(r"<.*", "", part).strip() for part in match.group(1).split(",")]
    return [name for name in names if re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", name)]
