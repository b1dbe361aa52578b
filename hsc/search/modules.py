"""Where names live in a repository: its files and their stored facts, and per language where an
import's module is (:data:`MODULE_FINDERS`) and which files share one top level
(:data:`SCOPE_PEERS`), for :mod:`hsc.search.resolve`.

The tabled languages are found by convention, honestly and simply:

- C#: ``using A.B;`` is the files declaring namespace ``A.B`` (stored namespace definitions); a
  file also sees the names of its own namespace and of those around it, in any file.
- PHP: ``use A\\B\\C;`` is a file whose path ends ``A/B/C.php`` or ``B/C.php`` (PSR-4 maps a
  prefix to a folder), else a file declaring namespace ``A\\B``; a file sees its namespace's names.
- Kotlin, Scala: ``import a.b.C`` is a file ``a/b/C.*``, else the files of a folder ending ``a/b``,
  the nearest first (a package is its folder, the JVM's convention; Java files count too); the
  files of one folder share their names.
- Swift: ``import X`` is the files below a folder named ``X``; all files of a target share their
  top-level names (a target is the folder below ``Sources/`` or ``Tests/``, else a file's own
  folder, with the folders below it).

Limits: a Kotlin or Scala file whose package is not its folder is not found by its package;
``using static``, an import of an object's member (Scala), a companion object's members through
its class and module-qualified names (Swift ``X.f``) are not followed. These languages' imports
re-export nothing, so a name is looked up only among what the imported files define.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from hsc.model import Definition, ImportBinding


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
    def file_type(self) -> str:
        """The name of a top-level type its file is named after (``Bridge`` of ``Bridge.java``)."""
        return self.module.rsplit(".", 1)[-1]

    def named_by_file(self, definition: Definition) -> bool:
        """A top-level type scoped by its file's name alone (Java, java_class_scopes 'once':
        ``pkg.Bridge`` for class ``Bridge`` of ``pkg/Bridge.java``; an index made with 'seed' has
        ``pkg.Bridge.Bridge``, which the top level's rule finds)."""
        return (
            definition.kind not in ("file", "namespace")
            and definition.scope == self.module
            and definition.name == self.file_type
        )

    @cached_property
    def top(self) -> dict[str, Definition]:
        """Definitions made at the file's top level, or directly in a namespace it declares (C#
        ``namespace A { class C {} }``), by name (the first of a name wins); not the namespaces."""
        prefix = f"{self.module}." if self.module else ""
        opened = {f"{d.scope}." for d in self.definitions if d.kind == "namespace"}
        # The members of a type scoped by its file's name share the top level's scope: its lines
        # tell them apart.
        named = [d for d in self.definitions if self.named_by_file(d)]
        out: dict[str, Definition] = {}
        for definition in self.definitions:
            if definition.kind in ("file", "namespace"):
                continue
            line = definition.start_line
            if any(d is not definition and d.start_line <= line <= d.end_line for d in named):
                continue  # a member of the type named by the file
            if (
                definition.scope == prefix + definition.name
                or self.named_by_file(definition)
                or (opened and definition.scope[: -len(definition.name)] in opened)
            ):
                out.setdefault(definition.name, definition)
        return out

    @cached_property
    def namespaces(self) -> list[str]:
        """The namespaces the file declares, dotted (``Acme\\Billing`` -> ``Acme.Billing``)."""
        prefix = f"{self.module}." if self.module else ""
        return [d.scope.removeprefix(prefix) for d in self.definitions if d.kind == "namespace"]

    @cached_property
    def by_scope(self) -> dict[str, list[Definition]]:
        out: dict[str, list[Definition]] = {}
        for definition in self.definitions:
            out.setdefault(definition.scope, []).append(definition)
        return out

    def members(self, owner: Definition) -> list[Definition]:
        """The definitions directly inside ``owner`` (and, in Rust, in its ``impl`` blocks)."""
        prefix = owner.scope + "."
        # A type named by its file shares its scope with the file: the file's other top-level
        # types are not its members, so its own lines bound them.
        inside = self.named_by_file(owner)
        return [
            d
            for d in self.definitions
            if d.scope.startswith(prefix)
            and "." not in d.scope[len(prefix) :]
            and d is not owner
            and (not inside or owner.start_line <= d.start_line <= owner.end_line)
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
    # Reads the facts of many files at once into ``cache`` (else one by one, through ``load``).
    preload: Callable[[list[str]], None] | None = None
    # (path, scope) of every namespace definition (else read from every file's facts).
    namespace_scopes: Callable[[], list[tuple[str, str]]] | None = None
    _tops: dict[tuple[str, ...], dict[str, str]] = field(default_factory=dict)
    _below: dict[tuple[str, frozenset[str], bool], tuple[str, ...]] = field(default_factory=dict)

    def facts(self, path: str) -> FileFacts:
        found = self.cache.get(path)
        if found is None:
            found = self.cache[path] = self.load(path)
        return found

    def top_of(self, paths: tuple[str, ...]) -> dict[str, str]:
        """Name -> the first of ``paths`` defining it at its top level: the names a group of files
        shares (a namespace, a package folder, a target), read once."""
        found = self._tops.get(paths)
        if found is None:
            if self.preload is not None:
                self.preload([path for path in paths if path not in self.cache])
            found = {}
            for path in paths:
                for name in self.facts(path).top:
                    found.setdefault(name, path)
            while len(self._tops) >= MAX_GROUPS:
                self._tops.pop(next(iter(self._tops)))
            self._tops[paths] = found
        return found

    @cached_property
    def namespaces(self) -> dict[str, tuple[str, ...]]:
        """Namespace (dotted) -> the files declaring it."""
        if self.namespace_scopes is not None:
            rows = self.namespace_scopes()
        else:
            rows = [
                (path, definition.scope)
                for path, language in self.languages.items()
                if language in NAMESPACE_LANGUAGES
                for definition in self.facts(path).definitions
                if definition.kind == "namespace"
            ]
        out: dict[str, dict[str, None]] = {}
        for path, scope in rows:
            module = module_of(path)
            out.setdefault(scope.removeprefix(f"{module}." if module else ""), {})[path] = None
        return {namespace: tuple(paths) for namespace, paths in out.items()}

    @cached_property
    def folder_tails(self) -> dict[str, list[str]]:
        """Every tail of every folder (``src/com/shop`` -> ``com/shop``, ``shop``, ...) -> the folders."""
        out: dict[str, list[str]] = {}
        for folder in self.folders:
            parts = folder.split("/")
            for start in range(len(parts)):
                out.setdefault("/".join(parts[start:]), []).append(folder)
        return out

    def below(self, folder: str, languages: frozenset[str], deep: bool = True) -> tuple[str, ...]:
        """The files of ``languages`` in ``folder`` and (``deep``) the folders below it."""
        key = (folder, languages, deep)
        found = self._below.get(key)
        if found is None:
            prefix = f"{folder}/" if folder else ""
            found = self._below[key] = tuple(
                path
                for path, language in self.languages.items()
                if language in languages
                and path.startswith(prefix)
                and (deep or "/" not in path[len(prefix) :])
            )
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


JVM_LANGUAGES = frozenset({"java", "kotlin", "scala"})
NAMESPACE_LANGUAGES = frozenset({"csharp", "php"})
SWIFT = frozenset({"swift"})
MAX_GROUPS = 256  # groups of files whose shared names FileIndex keeps


def dotted(module: str) -> str:
    """A namespace as the stored scopes write it: ``Acme\\Billing`` -> ``Acme.Billing``."""
    return module.replace("\\", ".").replace("::", ".").removeprefix("global.").strip(".")


def csharp_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    """``using A.B;`` and ``using X = A.B.C;``: the files declaring namespace ``A.B``."""
    return list(files.namespaces.get(dotted(binding.module), ()))


def php_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    """``use A\\B\\C;``: ``A/B/C.php`` or ``B/C.php`` (PSR-4), then the files of namespace ``A\\B``."""
    parts = [*dotted(binding.module).split("."), binding.name]
    by_path = [
        path
        for start in range(len(parts) - 1)
        for path in files.modules(".".join(parts[start:]), importer)
        if files.languages.get(path) == "php"
    ]
    return list(dict.fromkeys([*by_path[:1], *files.namespaces.get(dotted(binding.module), ())]))


def jvm_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    """Kotlin and Scala ``import a.b.C``: a file ``a/b/C.*``, then the files of folders ending ``a/b``."""
    named = binding.name not in ("", "*")
    by_name = files.modules(f"{binding.module}.{binding.name}", importer) if named else []
    folders = files.folder_tails.get(binding.module.replace(".", "/"), [])
    found = [*by_name, *(path for folder in folders for path in files.folders[folder])]
    found = [path for path in dict.fromkeys(found) if files.languages.get(path) in JVM_LANGUAGES]
    return sorted(found, key=lambda path: -len(_shared_prefix(path, importer)))  # nearest first


def swift_modules(files: FileIndex, importer: str, binding: ImportBinding) -> list[str]:
    """``import X``: the Swift files below a folder named ``X`` (SwiftPM's ``Sources/X``)."""
    folders = files.folder_tails.get(binding.module.split(".")[0], [])
    return list(dict.fromkeys(path for folder in folders for path in files.below(folder, SWIFT)))


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
    "csharp": csharp_modules,
    "php": php_modules,
    "kotlin": jvm_modules,
    "scala": jvm_modules,
    "swift": swift_modules,
}
SAME_FOLDER_SCOPE = frozenset({"go"})
# Languages whose import of a name may import a module of that name, and how they join the two.
SUBMODULE_SEPARATORS = {"python": ".", "rust": "::", "csharp": "."}  # C#: using IO = Acme.IO;

# Languages whose imports bring in what the imported files define, never what those import in turn:
# a name is looked up in the group of files an import points to, not followed further.
DEFINED_ONLY = frozenset({"csharp", "php", "kotlin", "scala", "swift"})


def swift_target(path: str) -> str:
    """The folder of a Swift file's target: the one below ``Sources/`` or ``Tests/``, else its own."""
    parts = posixpath.dirname(path).split("/")
    for index, part in enumerate(parts[:-1]):
        if part in ("Sources", "Tests"):
            return "/".join(parts[: index + 2])
    return posixpath.dirname(path)


def enclosing(namespace: str) -> list[str]:
    """``A.B.C`` and the namespaces around it: ``A.B.C``, ``A.B``, ``A`` (C# looks in each)."""
    parts = namespace.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


def csharp_peers(files: FileIndex, path: str) -> tuple[str, ...]:
    names = [outer for namespace in files.facts(path).namespaces for outer in enclosing(namespace)]
    return tuple(dict.fromkeys(p for name in names for p in files.namespaces.get(name, ())))


def php_peers(files: FileIndex, path: str) -> tuple[str, ...]:
    names = files.facts(path).namespaces
    return tuple(dict.fromkeys(p for name in names for p in files.namespaces.get(name, ())))


def package_peers(files: FileIndex, path: str) -> tuple[str, ...]:
    return files.below(posixpath.dirname(path), JVM_LANGUAGES, deep=False)


def swift_peers(files: FileIndex, path: str) -> tuple[str, ...]:
    return files.below(swift_target(path), SWIFT)


# Per language: the files whose top-level names a file sees without importing them.
SCOPE_PEERS: dict[str, Callable[[FileIndex, str], tuple[str, ...]]] = {
    "csharp": csharp_peers,
    "php": php_peers,
    "kotlin": package_peers,
    "scala": package_peers,
    "swift": swift_peers,
}
