"""How much of a tree's code a context pack can resolve: per language, the import bindings that
point into the tree and the leaves whose uses reach a definition in another file.

Reads the tree as indexing does (no model, no database) and resolves with the facts it read::

    python -m hsc.bench.resolve_check ROOT

An import of a package from outside the tree cannot resolve, so the shares are a floor for what
the resolver finds, not a rate of its mistakes.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from hsc.chunk.ingest import load_file, walk_repository
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings
from hsc.search.modules import FileFacts, FileIndex
from hsc.search.resolve import Resolver


def check(root: Path) -> dict[str, Counter[str]]:
    """language -> counts: files, bindings (named imports), resolved (of them, found in the tree),
    leaves (with uses), reaching (of them, using a definition of another file), seconds."""
    params, settings, counter = Parameters(), Settings(), get_counter()
    parsed = {path: load_file(root, path, params, settings, counter) for path in walk_repository(root)}
    languages = {path: p.report.language or "text" for path, p in parsed.items()}

    def facts(path: str) -> FileFacts:
        return FileFacts(path, languages[path], parsed[path].definitions, parsed[path].bindings)

    files = FileIndex(languages, facts)
    resolver = Resolver(files)
    out: dict[str, Counter[str]] = {}
    for path, p in parsed.items():
        counts = out.setdefault(languages[path], Counter())
        counts["files"] += 1
        started = time.perf_counter()
        for binding in p.bindings:
            if binding.local != "*":
                counts["bindings"] += 1
                counts["resolved"] += bool(resolver.binding(path, binding, 0))
        for leaf, facts in zip(p.leaves, p.facts, strict=True):
            if not facts.uses and not facts.references:
                continue
            counts["leaves"] += 1
            found = resolver.dependencies(
                path, leaf.start_line, leaf.end_line, set(facts.uses), set(facts.references)
            )
            counts["reaching"] += any(dependency.path != path for dependency in found)
        counts["microseconds"] += round((time.perf_counter() - started) * 1e6)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print("| language | files | named imports resolved | leaves using another file's definition | ms |")
    print("| --- | --- | --- | --- | --- |")
    for language, c in sorted(check(Path(argv[0])).items(), key=lambda item: -item[1]["files"]):
        if not c["leaves"]:
            continue
        imports = f"{c['resolved']} of {c['bindings']}" if c["bindings"] else "-"
        print(
            f"| {language} | {c['files']} | {imports} | {c['reaching']} of {c['leaves']} "
            f"({c['reaching'] / c['leaves']:.0%}) | {c['microseconds'] / 1000:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
