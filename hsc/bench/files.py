"""``bench files``: what the data rule and the fragment rule do on real code.

Data files: every file of the folder (default: the standard library) classified by
:func:`hsc.chunk.datafiles.data_reason`, and the rule's precision and recall on a sample
labelled by hand (``data_labels.json``: 140 Python files of the standard library and of a
site-packages, labelled data when the body is tables of literals or machine-generated
declarations rather than logic written to be read; 50 drawn from the files the rule called
data, 50 from the rest, 40 from the rest whose names suggest data). Files of the sample that
this machine does not have are left out and counted.

Fragments: the Python files cut with ``fragment_merging`` "seed" and "balance", counting the
leaves under ``minimum_chunk_token_length`` that sit beside a leaf of the same definition.
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path
from typing import Any

from hsc.chunk.datafiles import data_reason
from hsc.chunk.ingest import detect_language, load_file, walk_repository
from hsc.chunk.reading import read_file_bytes
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings

LABELS = Path(__file__).with_name("data_labels.json")


def _text(root: Path, rel_path: str) -> str | None:
    raw = read_file_bytes(root, rel_path, Settings().max_file_bytes)
    if raw.data is None or b"\0" in raw.data[:8192]:
        return None
    return raw.data.decode("utf-8", errors="replace")


def labelled_sample() -> dict[str, Any]:
    """Precision and recall of the data rule on the hand-labelled files found here."""
    paths = sysconfig.get_paths()
    roots = {"stdlib": Path(paths["stdlib"]), "site-packages": Path(paths["purelib"])}
    counts = {"true_positive": 0, "false_positive": 0, "false_negative": 0, "true_negative": 0, "missing": 0}
    for where, rel_path, is_data in json.loads(LABELS.read_text(encoding="utf-8")):
        text = _text(roots[where], rel_path) if (roots[where] / rel_path).is_file() else None
        if text is None:
            counts["missing"] += 1
            continue
        called = bool(data_reason(text, "python"))
        key = ("true_" if called == is_data else "false_") + ("positive" if called else "negative")
        counts[key] += 1
    found = counts["true_positive"]
    return {
        **counts,
        "precision": round(found / max(1, found + counts["false_positive"]), 3),
        "recall": round(found / max(1, found + counts["false_negative"]), 3),
    }


def _fragments(leaves: list[Any], minimum: int) -> int:
    return sum(
        1
        for i, leaf in enumerate(leaves)
        if leaf.token_count < minimum
        and any(leaves[j].scope == leaf.scope for j in (i - 1, i + 1) if 0 <= j < len(leaves))
    )


def bench_files(path: Path | None = None) -> dict[str, Any]:
    root = path or Path(sysconfig.get_paths()["stdlib"])
    counter = get_counter(Settings().tokenizer)
    kinds: dict[str, int] = {}
    leaves = {"seed": 0, "balance": 0}
    fragments = {"seed": 0, "balance": 0}
    files = 0
    for rel_path in walk_repository(root):
        text = _text(root, rel_path)
        if text is None:
            continue
        files += 1
        reason = data_reason(text, detect_language(rel_path))
        kind = reason.split(" (")[0].split(":")[0] if reason else "code or prose"
        kinds[kind] = kinds.get(kind, 0) + 1
        if rel_path.endswith(".py") and not reason:
            for rule in leaves:
                params = Parameters(fragment_merging=rule)
                cut = load_file(root, rel_path, params, Settings(), counter).leaves
                leaves[rule] += len(cut)
                fragments[rule] += _fragments(cut, params.minimum_chunk_token_length)
    return {
        "suite": "files",
        "root": str(root),
        "files": files,
        "data_rule": kinds,
        "labelled_sample": labelled_sample(),
        "python_leaves": leaves,
        "fragments": fragments,
    }
