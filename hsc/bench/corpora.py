"""``python -m hsc bench corpus --language LANG --out DIR``: a benchmark corpus per language, built
at run time from registry packages at pinned versions (never vendored).

npm tarballs come from ``npm pack NAME@VERSION`` (JavaScript, TypeScript, and Java from packages that
ship Android sources); Go and Rust sources from Debian's
``golang-*-dev`` and ``librust-*-dev`` packages (``apt-get download NAME=VERSION``, then
``dpkg-deb -x``); Python from PyPI sdists (``pip download --no-deps --no-binary :all:``). Each
package's sources of the language, tests and examples left out, are copied to
``DIR/LANG/PACKAGE/`` and the pins written to ``DIR/LANG/packages.json``; then
``python -m hsc bench quality --path DIR/LANG`` scores doc-comment queries over it
(docs/languages.md). Downloads are kept under ``DIR/.downloads`` so a rerun fetches nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hsc.quality.corpus import survey_corpus


@dataclass(frozen=True)
class Package:
    registry: str  # "npm", "debian" or "pypi"
    name: str
    version: str
    folder: str  # where the sources are inside the unpacked package ("" = all of it)
    corpus_name: str  # the package's folder in the corpus: its name as a user's checkout would have it


# The packages of each language's benchmark: none was used to choose hsc's defaults or to train its
# encoder (the standard library's Python); each ships doc comments on functions of five lines or more
# (rxjs is also the README's TypeScript row). About 230-370 usable queries a language.
LANGUAGE_PACKAGES: dict[str, tuple[Package, ...]] = {
    "go": (
        Package(
            "debian",
            "golang-github-gorilla-mux-dev",
            "1.8.0-1",
            "usr/share/gocode/src/github.com/gorilla/mux",
            "mux",
        ),
        Package(
            "debian",
            "golang-github-spf13-cobra-dev",
            "1.6.1-1",
            "usr/share/gocode/src/github.com/spf13/cobra",
            "cobra",
        ),
        Package(
            "debian",
            "golang-github-sirupsen-logrus-dev",
            "1.9.0-1",
            "usr/share/gocode/src/github.com/sirupsen/logrus",
            "logrus",
        ),
        Package(
            "debian",
            "golang-github-google-go-cmp-dev",
            "0.5.9-1",
            "usr/share/gocode/src/github.com/google/go-cmp",
            "go-cmp",
        ),
    ),
    "rust": (
        Package(
            "debian",
            "librust-itertools-dev",
            "0.10.3-1",
            "usr/share/cargo/registry/itertools-0.10.3",
            "itertools",
        ),
        Package("debian", "librust-bytes-dev", "1.2.1-1", "usr/share/cargo/registry/bytes-1.2.1", "bytes"),
        Package(
            "debian", "librust-indexmap-dev", "1.9.2-1", "usr/share/cargo/registry/indexmap-1.9.2", "indexmap"
        ),
    ),
    "js": (
        Package("npm", "matter-js", "0.19.0", "package/src", "matter-js"),
        Package("npm", "commander", "12.1.0", "package/lib", "commander"),
        Package("npm", "yjs", "13.6.20", "package/src", "yjs"),
    ),
    "ts": (
        Package("npm", "rxjs", "7.8.1", "package/src", "rxjs"),
        Package("npm", "@grpc/grpc-js", "1.12.2", "package/src", "grpc-js"),
        Package("npm", "@tiptap/core", "2.9.1", "package/src", "tiptap-core"),
    ),
    "python": (
        Package("pypi", "boltons", "24.0.0", "boltons-24.0.0/boltons", "boltons"),
        Package("pypi", "toolz", "0.12.1", "toolz-0.12.1/toolz", "toolz"),
    ),
    # Maven Central is out of reach here; npm packages that ship Android Java sources are not.
    "java": (
        Package("npm", "cordova-android", "15.1.0", "package/framework/src", "cordova-android"),
        Package("npm", "@capacitor/android", "8.6.0", "package/capacitor/src/main/java", "capacitor-android"),
        Package(
            "npm",
            "react-native",
            "0.76.5",
            "package/ReactAndroid/src/main/java/com/facebook/react/uimanager",
            "uimanager",
        ),
    ),
}
EXTENSIONS = {
    "go": (".go",),
    "rust": (".rs",),
    "js": (".js", ".mjs", ".cjs"),
    "ts": (".ts", ".tsx"),
    "python": (".py",),
    "java": (".java",),
}
# Tests, examples, benchmarks and generated declarations are not what the queries ask about.
SKIPPED_FOLDERS = frozenset(
    {"test", "tests", "__tests__", "testdata", "testing", "bench", "benches", "examples", "example", "docs"}
)
SKIPPED_SUFFIXES = ("_test.go", ".test.ts", ".spec.ts", ".test.tsx", ".test.js", ".spec.js", ".d.ts")


def _run(command: list[str], cwd: Path) -> None:
    """Run a registry client; a failure becomes one line naming the command and its last words."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RuntimeError(f"{' '.join(command)} failed: {error}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"{' '.join(command)} failed: {said[-1] if said else done.returncode}")


def _unpack(archive: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as opened:
            opened.extractall(into)
    else:
        with tarfile.open(archive) as opened:
            opened.extractall(into, filter="data")


def download_folder(package: Package, downloads: Path) -> Path:
    """Where :func:`fetch` unpacks ``package`` under ``downloads``."""
    return (
        downloads / f"{package.registry}-{package.name.replace('/', '+').replace('@', '')}-{package.version}"
    )


def fetch(package: Package, downloads: Path) -> Path:
    """The package unpacked under ``downloads`` (fetched once; a rerun reuses it)."""
    unpacked = download_folder(package, downloads)
    slug = unpacked.name
    if (unpacked / ".done").exists():
        return unpacked
    if unpacked.exists():
        shutil.rmtree(unpacked)
    work = downloads / f"{slug}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if package.registry == "npm":
        _run(["npm", "pack", f"{package.name}@{package.version}", "--silent"], work)
        [archive] = list(work.glob("*.tgz"))
        _unpack(archive, unpacked)
    elif package.registry == "debian":
        _run(["apt-get", "download", f"{package.name}={package.version}"], work)
        [archive] = list(work.glob("*.deb"))
        unpacked.mkdir(parents=True)
        _run(["dpkg-deb", "-x", str(archive), str(unpacked)], work)
    elif package.registry == "pypi":
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q"]
        _run([*pip, f"{package.name}=={package.version}", "-d", str(work)], work)
        [archive] = [p for p in work.iterdir() if p.name.endswith((".tar.gz", ".zip", ".tgz"))]
        _unpack(archive, unpacked)
    else:
        raise ValueError(f"unknown registry {package.registry!r}; choose npm, debian or pypi")
    shutil.rmtree(work)
    (unpacked / ".done").write_text("")
    return unpacked


def source_files(root: Path, extensions: tuple[str, ...]) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if not path.is_file() or any(part in SKIPPED_FOLDERS for part in parts[:-1]):
            continue
        if path.name.endswith(extensions) and not path.name.endswith(SKIPPED_SUFFIXES):
            found.append(path)
    return found


def build_language(language: str, out: Path) -> dict[str, Any]:
    """``out/LANGUAGE/``: each package's sources of the language, and ``packages.json`` with the
    pins; what the quality benchmark would ask of it (files, usable doc-comment queries)."""
    if language not in LANGUAGE_PACKAGES:
        raise ValueError(f"unknown language {language!r}; choose one of {', '.join(LANGUAGE_PACKAGES)}")
    downloads = out / ".downloads"
    folder = out / language
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    packages = []
    for package in LANGUAGE_PACKAGES[language]:
        unpacked = fetch(package, downloads)
        root = unpacked / package.folder if package.folder else unpacked
        if not root.is_dir():
            raise RuntimeError(f"{package.name}@{package.version} has no {package.folder}/")
        name = package.corpus_name
        files = source_files(root, EXTENSIONS[language])
        for path in files:
            destination = folder / name / path.relative_to(root)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
        survey = survey_corpus([(folder / name, name)])
        packages.append({**asdict(package), "files": len(files), "queries": survey.queries})
    (folder / "packages.json").write_text(json.dumps(packages, indent=1))
    total = survey_corpus([(folder, "")])
    return {
        "language": language,
        "folder": str(folder),
        "packages": packages,
        "files": total.files,
        "bytes": total.bytes,
        "queries": total.queries,
    }


def bench_corpus(languages: list[str], out: Path) -> dict[str, Any]:
    return {"suite": "corpus", "languages": [build_language(language, out) for language in languages]}


def format_corpus(result: dict[str, Any]) -> str:
    lines = []
    for built in result["languages"]:
        pins = ", ".join(f"{p['name']}@{p['version']} ({p['queries']} queries)" for p in built["packages"])
        lines.append(
            f"{built['language']}: {built['folder']}: {built['files']} files, {built['bytes']:,} bytes, "
            f"{built['queries']} usable queries: {pins}"
        )
    return "\n".join(lines)
