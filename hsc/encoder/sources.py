"""Training sources in other languages than Python: registry packages at pinned versions.

``python -m hsc encoder train --languages go,rust,js,ts`` mines doc-comment pairs from these
packages besides the standard library's Python. They are fetched at run time the way ``bench
corpus`` fetches its packages (:func:`hsc.bench.corpora.fetch`: Debian ``golang-*-dev`` and
``librust-*-dev`` packages, npm tarballs), never vendored, and none of them is a package a
benchmark scores (:data:`hsc.bench.corpora.LANGUAGE_PACKAGES`), so the language benchmarks ask
about code the encoder never saw. Each package's files are chosen as the corpus chooses them
(tests, examples and declarations left out).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path

from hsc.bench.corpora import EXTENSIONS, LANGUAGE_PACKAGES, Package, fetch, source_files
from hsc.encoder.pairs import Pair


def _go(name: str, version: str, module: str) -> Package:
    return Package("debian", name, version, f"usr/share/gocode/src/{module}", module.rsplit("/", 1)[-1])


def _rust(crate: str, version: str) -> Package:
    upstream = version.split("-")[0]
    return Package(
        "debian", f"librust-{crate}-dev", version, f"usr/share/cargo/registry/{crate}-{upstream}", crate
    )


# Five to eight packages a language, each with doc comments on its functions; chosen for their
# doc comments and size, not for any score.
TRAINING_PACKAGES: dict[str, tuple[Package, ...]] = {
    "go": (
        _go("golang-golang-x-tools-dev", "1:0.5.0+ds-1", "golang.org/x/tools"),
        _go("golang-golang-x-net-dev", "1:0.7.0+dfsg-1", "golang.org/x/net"),
        _go("golang-github-go-git-go-git-dev", "5.4.2-3", "github.com/go-git/go-git"),
        _go("golang-github-prometheus-client-golang-dev", "1.14.0-3", "github.com/prometheus/client_golang"),
        _go("golang-github-spf13-pflag-dev", "1.0.6~git20210604-d5e0c0615ace-1", "github.com/spf13/pflag"),
        _go("golang-github-gin-gonic-gin-dev", "1.8.1-1", "github.com/gin-gonic/gin"),
        _go("golang-github-spf13-afero-dev", "1.9.3-1", "github.com/spf13/afero"),
    ),
    "rust": (
        _rust("tokio", "1.24.2-1"),
        _rust("futures-util", "0.3.21-1"),
        _rust("chrono", "0.4.23-2"),
        _rust("nom", "7.1.1-1"),
        _rust("rayon", "1.6.1-1"),
        _rust("hashbrown", "0.12.3-1"),
        _rust("regex", "1.7.1-1"),
        _rust("smallvec", "1.9.0-1"),
    ),
    "js": (
        Package("npm", "eslint", "9.13.0", "package/lib", "eslint"),
        Package("npm", "webpack", "5.95.0", "package/lib", "webpack"),
        Package("npm", "lodash-es", "4.17.21", "package", "lodash-es"),
        Package("npm", "axios", "1.7.7", "package/lib", "axios"),
        Package("npm", "ramda", "0.30.1", "package/src", "ramda"),
    ),
    "ts": (
        Package("npm", "effect", "3.10.0", "package/src", "effect"),
        Package("npm", "@trpc/server", "10.45.2", "package/src", "trpc-server"),
        Package("npm", "mongodb", "6.10.0", "package/src", "mongodb"),
        Package("npm", "@apollo/server", "4.11.0", "package/src", "apollo-server"),
        Package("npm", "@microsoft/signalr", "8.0.7", "package/src", "signalr"),
        Package("npm", "mobx", "6.13.5", "package/src", "mobx"),
        Package("npm", "@reduxjs/toolkit", "2.3.0", "package/src", "redux-toolkit"),
        Package("npm", "@tanstack/query-core", "5.59.0", "package/src", "query-core"),
    ),
}
TRAINING_LANGUAGES = tuple(TRAINING_PACKAGES)


def benchmark_overlap() -> set[str]:
    """Registry names both trained on and scored by a language benchmark (must stay empty)."""
    scored = {p.name for packages in LANGUAGE_PACKAGES.values() for p in packages}
    return scored & {p.name for packages in TRAINING_PACKAGES.values() for p in packages}


def parse_languages(text: str) -> tuple[str, ...]:
    """``go,rust`` or ``all`` → the languages, in :data:`TRAINING_LANGUAGES` order."""
    asked = (
        set(TRAINING_LANGUAGES)
        if text.strip() == "all"
        else {t.strip() for t in text.split(",") if t.strip()}
    )
    unknown = sorted(asked - set(TRAINING_LANGUAGES))
    if unknown:
        raise ValueError(
            f"--languages: unknown {', '.join(unknown)}; choose from {', '.join(TRAINING_LANGUAGES)} or all"
        )
    return tuple(language for language in TRAINING_LANGUAGES if language in asked)


def language_sources(languages: Iterable[str], downloads: Path) -> list[tuple[Path, str]]:
    """Each source file of the languages' packages (fetched into ``downloads`` once), named
    ``LANGUAGE/PACKAGE/PATH`` as the recipe records it."""
    sources = []
    for language in languages:
        for package in TRAINING_PACKAGES[language]:
            unpacked = fetch(package, downloads)
            root = unpacked / package.folder
            if not root.is_dir():
                raise RuntimeError(f"{package.name}@{package.version} has no {package.folder}/")
            sources += [
                (path, f"{language}/{package.corpus_name}/{path.relative_to(root).as_posix()}")
                for path in source_files(root, EXTENSIONS[language])
            ]
    return sources


def package_names(languages: Iterable[str]) -> list[str]:
    """The pins of the languages' packages, as the recipe records them."""
    return [
        f"{package.registry}:{package.name}={package.version}"
        for language in languages
        for package in TRAINING_PACKAGES[language]
    ]


def cap_per_language(pairs: list[Pair], cap: int, seed: int) -> list[Pair]:
    """At most ``cap`` pairs of each language (the first part of a pair's path, as
    :func:`language_sources` names it), drawn with ``seed``, in their mined order (``cap`` 0:
    all), so no language's group outweighs the rest by its size alone."""
    if cap <= 0:
        return pairs
    by_language: dict[str, list[int]] = {}
    for index, pair in enumerate(pairs):
        by_language.setdefault(pair.path.split("/", 1)[0], []).append(index)
    kept: set[int] = set()
    for language in sorted(by_language):
        indices = by_language[language]
        kept.update(indices if len(indices) <= cap else random.Random(seed).sample(indices, cap))
    return [pair for index, pair in enumerate(pairs) if index in kept]
