"""Same leaves, same facts: fingerprints of the chunker's whole output over a tree of files.

A speed change to the chunker must not change what it produces. Run once
with the code before the change (``save``), then with the change
(``compare``)::

    python -m hsc.bench.chunk_check save before.json [ROOT]
    python -m hsc.bench.chunk_check compare before.json [ROOT]

ROOT defaults to the standard library. Each file's fingerprint covers its
report, every field of every leaf (byte and line ranges, text, scope, node
type, token count), its definitions, the per-leaf facts and the syntax error
lines; ``compare`` names each file whose output differs and its first
differing leaf, and exits 1 when any does.
"""

from __future__ import annotations

import hashlib
import json
import sys
import sysconfig
from pathlib import Path

from hsc.chunk.ingest import load_file, walk_repository
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:20]


def fingerprints(root: Path) -> dict[str, dict[str, object]]:
    """Per file: a digest of its report, definitions and facts, and one per leaf."""
    params, settings, counter = Parameters(), Settings(), get_counter()
    result: dict[str, dict[str, object]] = {}
    for rel_path in walk_repository(root):
        parsed = load_file(root, rel_path, params, settings, counter)
        result[str(rel_path)] = {
            "report": _digest(parsed.report),
            "definitions": _digest(parsed.definitions),
            "facts": _digest(parsed.facts),
            "leaves": [_digest(leaf) for leaf in parsed.leaves],
        }
    return result


def compare(before: dict[str, dict[str, object]], after: dict[str, dict[str, object]]) -> list[str]:
    """One line per file whose output differs (or that only one side has)."""
    problems = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old is None or new is None:
            problems.append(f"{path}: only {'after' if old is None else 'before'}")
            continue
        if old == new:
            continue
        fields = [key for key in ("report", "definitions", "facts") if old[key] != new[key]]
        old_leaves, new_leaves = list(old["leaves"]), list(new["leaves"])  # type: ignore[call-overload]
        if old_leaves != new_leaves:
            first = next(
                (i for i, pair in enumerate(zip(old_leaves, new_leaves, strict=False)) if pair[0] != pair[1]),
                min(len(old_leaves), len(new_leaves)),
            )
            fields.append(f"leaves ({len(old_leaves)} -> {len(new_leaves)}, first differs at {first})")
        problems.append(f"{path}: {', '.join(fields)}")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[0] not in ("save", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[2]) if len(argv) == 3 else Path(sysconfig.get_paths()["stdlib"])
    prints = fingerprints(root)
    target = Path(argv[1])
    if argv[0] == "save":
        target.write_text(json.dumps(prints))
        print(f"saved fingerprints of {len(prints)} files under {root} to {target}")
        return 0
    problems = compare(json.loads(target.read_text()), prints)
    for line in problems:
        print(line)
    leaves = sum(len(entry["leaves"]) for entry in prints.values())  # type: ignore[arg-type]
    print(f"{len(prints)} files, {leaves} leaves: {len(problems)} differ")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
