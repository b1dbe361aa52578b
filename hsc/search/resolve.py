"""From a span's uses to the definitions they name, across the repository, read from stored facts.

A bare name is looked up where the language puts it: the file's own top-level definitions
(for Go the whole package folder's), then the names its imports bind (``from m import x as y``,
``import m as n``, relative imports, re-exports through a package's ``__init__``, JavaScript's
named and default imports, Rust's ``use``, Java's imports; C#, PHP, Kotlin, Scala and Swift look
in the files of their namespace, package folder or target first, then in what their imports name:
:mod:`hsc.search.modules`). A member reference ``a.b`` is ``b`` of what ``a`` is: the enclosing
class for ``self``/``cls``/``this``/``$this`` (then its bases; a Swift extension's type too), the
bases for ``super()``, ``super``, ``base``, ``parent``, a module an import bound, or a class.
Nothing is found by name alone across the repository: a name nothing binds stays unresolved.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from hsc.model import Definition, ImportBinding
from hsc.search.assemble import CLASS_KINDS, FUNCTION_KINDS, Dependency
from hsc.search.modules import (
    DEFINED_ONLY,
    MODULE_FINDERS,
    SAME_FOLDER_SCOPE,
    SCOPE_PEERS,
    SUBMODULE_SEPARATORS,
    FileIndex,
)

SELF_NAMES = frozenset({"self", "cls", "this"})
# What else names the enclosing class, or its bases, in a member reference (``$this->m()`` is read
# as ``$this.m``, ``parent::m()`` as ``parent.m``); ``super()`` names the bases in every language.
LANGUAGE_SELF_NAMES = {"php": frozenset({"$this", "static"})}
LANGUAGE_SUPER_NAMES = {
    "csharp": frozenset({"base"}),
    "php": frozenset({"parent"}),
    "kotlin": frozenset({"super"}),
    "swift": frozenset({"super"}),
    "scala": frozenset({"super"}),
}
CONSTRUCTOR_NAMES = frozenset({"__init__", "__new__", "__post_init__", "constructor", "new"})
MAX_HOPS = 4  # re-exports and base classes followed at most this deep


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
        self._modules: dict[tuple[str, ImportBinding], list[str]] = {}

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
        peers = SCOPE_PEERS.get(facts.language)
        if peers is not None:
            found = self.defined_in(peers(self.files, path), local)
            if found:
                return found
        found = [hit for binding in facts.bound(local) for hit in self.binding(path, binding, hops)]
        if found:
            return found
        for binding in facts.bound("*"):
            modules = self.module_files(path, binding)
            if facts.language in DEFINED_ONLY:
                found = self.defined_in(tuple(modules), local)
                if found:
                    return found
                continue
            for module in modules:
                hit = self.name(module, local, hops + 1)
                if hit:
                    return hit
        return []

    def defined_in(self, paths: tuple[str, ...], local: str) -> list[Found]:
        """``local`` as the first of ``paths`` defining it at its top level has it."""
        owner = self.files.top_of(paths).get(local) if paths else None
        return [Found(owner, self.files.facts(owner).top[local])] if owner is not None else []

    def module_files(self, path: str, binding: ImportBinding) -> list[str]:
        key = (path, binding)
        found = self._modules.get(key)
        if found is None:
            finder = MODULE_FINDERS.get(self.files.facts(path).language)
            found = [p for p in finder(self.files, path, binding) if p != path] if finder else []
            if len(self._modules) >= 4096:
                self._modules.clear()
            self._modules[key] = found
        return found

    def binding(self, path: str, binding: ImportBinding, hops: int) -> list[Found]:
        modules = self.module_files(path, binding)
        if binding.name in ("", "*"):
            return [Found(module, None) for module in modules]
        if self.files.facts(path).language in DEFINED_ONLY:
            found = self.defined_in(tuple(modules), binding.name)
            if found:
                return found
            modules = []  # nothing re-exported there to follow
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
        for base in base_names(definition.signature, self.files.facts(path).language):
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
        supers = LANGUAGE_SUPER_NAMES.get(facts.language, frozenset())
        if (
            head in SELF_NAMES
            or head == "super()"
            or head in supers
            or head in LANGUAGE_SELF_NAMES.get(facts.language, ())
        ):
            owner = facts.holder(start, end, CLASS_KINDS)
            if owner is None:
                return []
            owners = [Found(path, owner)]
            if owner.kind == "extension":  # Swift: the type it extends
                owners += [hit for hit in self.name(path, owner.name) if hit.definition is not owner]
            if head == "super()" or head in supers:
                owners = [
                    base
                    for found_owner in owners
                    if found_owner.definition is not None
                    for base in self.bases(found_owner.path, found_owner.definition)
                ]
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


_NESTED = re.compile(r"\([^()]*\)|<[^<>]*>")
_COLON_BASES = frozenset({"csharp", "kotlin", "swift"})  # class C : B, I  (Kotlin: class C(x: T) : B(x))


def colon_bases(signature: str) -> list[str]:
    """What follows the colon of a header, without constructor arguments and type arguments."""
    previous = None
    while previous != signature:
        previous, signature = signature, _NESTED.sub("", signature)
    _head, colon, rest = signature.partition(":")
    rest = re.split(r"\bwhere\b|\{", rest)[0]
    return [part.strip() for part in rest.split(",")] if colon else []


def base_names(signature: str, language: str = "") -> list[str]:
    """The base classes a class header names: ``class C(A, m.B, metaclass=M):`` -> A, m.B;
    ``class C extends B implements I, J`` -> B, I, J; in C#, Kotlin and Swift ``class C : B, I`` ->
    B, I."""
    names: list[str] = colon_bases(signature) if language in _COLON_BASES else []
    if not names and signature.startswith("class ") and "(" in signature.split(":")[0]:
        match = _BASES.search(signature)
        if match:
            names = [
                part.strip() for part in match.group(1).split(",") if "=" not in part and "*" not in part
            ]
    for match in _EXTENDS.finditer(signature):
        names += [re.sub(r"<.*", "", part).strip() for part in match.group(1).split(",")]
    return [name for name in names if re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", name)]
