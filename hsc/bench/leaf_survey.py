"""``python -m hsc bench leaves --path DIR [--out QUALITY_OUT]``: what the leaves of a folder look
like, language by language, and (given a ``bench quality`` run's folder) where its targets rank.

Per language: how many leaves, their sizes in tokens, how many carry only their file's scope
(statements between definitions, or definitions the grammar tables miss), how many continue a
split definition, the node types that start them, the kinds of definitions the facts read and a
few scope lines as the encoder reads them. With ``--out``, the run's corpus (docs blanked) is cut
the same way and each target is put beside its leaves: Recall@10 of the default system by how many
leaves the target spans and by its length, and the targets it missed with the scope of their first
leaf (docs/languages.md).
"""

from __future__ import annotations

import collections
import json
import statistics
from pathlib import Path
from typing import Any

from hsc.chunk.ingest import detect_language, walk_repository
from hsc.chunk.parse import AST_LANGUAGES, cut_file
from hsc.chunk.tokens import get_counter
from hsc.params import CHUNK_FIELDS, Parameters, with_values
from hsc.quality.sweep import DEFAULT_SYSTEMS

SHOWN_SCOPES = 4  # scope lines shown per kind of definition
SHOWN_MISSES = 12


def _cut_folder(root: Path, params: Parameters) -> dict[str, dict[str, Any]]:
    """Path -> (language, leaves, definitions) of every file with a syntax tree."""
    counter, out = get_counter(), {}
    for rel_path in walk_repository(root):
        language = detect_language(rel_path)
        if language not in AST_LANGUAGES:
            continue
        source = (root / rel_path).read_text(encoding="utf-8", errors="replace")
        cut = cut_file(source, rel_path, language, params, counter)
        out[rel_path] = {"language": language, "leaves": cut.leaves, "definitions": cut.definitions}
    return out


def leaf_figures(files: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per language: leaf count and sizes, module-scope leaves, continuation pieces, node types,
    definition kinds and a few scope lines."""
    by_language: dict[str, dict[str, Any]] = {}
    for cut in files.values():
        figures = by_language.setdefault(
            cut["language"],
            {"files": 0, "sizes": [], "module_scope": 0, "continuations": 0, "types": collections.Counter()}
            | {"kinds": collections.Counter(), "scopes": collections.defaultdict(list)},
        )
        figures["files"] += 1
        leaves = cut["leaves"]
        if not leaves:
            continue
        shortest = min(len(leaf.scope) for leaf in leaves)
        for index, leaf in enumerate(leaves):
            figures["sizes"].append(leaf.token_count)
            figures["types"][leaf.node_type] += 1
            figures["module_scope"] += len(leaf.scope) == shortest
            figures["continuations"] += bool(
                index and len(leaf.scope) > shortest and leaves[index - 1].scope == leaf.scope
            )
        for definition in cut["definitions"]:
            figures["kinds"][definition.kind] += 1
            shown = figures["scopes"][definition.kind]
            if len(shown) < SHOWN_SCOPES and definition.kind != "file":
                shown.append(f"{definition.scope}  <-  {definition.signature[:70]}")
    out = {}
    for language, figures in sorted(by_language.items()):
        sizes = sorted(figures["sizes"])
        count = len(sizes)
        out[language] = {
            "files": figures["files"],
            "leaves": count,
            "tokens_median": statistics.median(sizes) if sizes else 0,
            "tokens_p90": sizes[int(0.9 * (count - 1))] if sizes else 0,
            "module_scope_share": round(figures["module_scope"] / max(count, 1), 3),
            "continuation_share": round(figures["continuations"] / max(count, 1), 3),
            "node_types": dict(figures["types"].most_common(8)),
            "definition_kinds": dict(figures["kinds"].most_common()),
            "scope_lines": dict(figures["scopes"]),
        }
    return out


def target_figures(files: dict[str, dict[str, Any]], result: dict[str, Any]) -> dict[str, Any]:
    """Where a quality run's default system ranked its targets, by the leaves each target spans."""
    ranks = {row["system"]: row["ranks"] for row in result["systems"]}
    system = next((name for name in DEFAULT_SYSTEMS if name in ranks), next(iter(ranks)))
    buckets: dict[str, list[bool]] = collections.defaultdict(list)
    misses = []
    for target, rank in zip(result["targets"], ranks[system]):
        leaves = [
            leaf
            for leaf in files.get(target["path"], {}).get("leaves", [])
            if leaf.start_line <= target["end_line"] and leaf.end_line >= target["start_line"]
        ]
        found = rank is not None and rank <= 10
        lines = target["end_line"] - target["start_line"] + 1
        span = "1 leaf" if len(leaves) <= 1 else ("2 leaves" if len(leaves) == 2 else "3+ leaves")
        buckets[f"spans {span}"].append(found)
        length = "5-14 lines" if lines < 15 else ("15-39 lines" if lines < 40 else "40+ lines")
        buckets[length].append(found)
        shared = len(leaves) == 1 and not (
            leaves[0].start_line >= target["start_line"] - 3 and leaves[0].end_line <= target["end_line"]
        )
        buckets["shares its leaf" if shared else "has leaves of its own"].append(found)
        if not found and len(misses) < SHOWN_MISSES:
            first = leaves[0].scope if leaves else "-"
            misses.append(f"{target['query'][:80]} | {target['path']}:{target['start_line']} | {first}")
    table = {
        name: {"targets": len(hits), "recall_at_10": round(sum(hits) / len(hits), 3)}
        for name, hits in sorted(buckets.items())
    }
    return {"system": system, "by_target": table, "misses": misses}


def bench_leaves(path: Path, quality_out: Path | None, params: Parameters | None = None) -> dict[str, Any]:
    params = params or Parameters()
    if not path.is_dir():
        raise NotADirectoryError(f"not a folder: {path}")
    result: dict[str, Any] = {"suite": "leaves", "path": str(path)}
    result["languages"] = leaf_figures(_cut_folder(path, params))
    if quality_out is not None:
        run = quality_out / "run" / "quality.json"
        if not run.is_file():
            raise FileNotFoundError(f"no bench quality run in {quality_out} (looked for {run})")
        quality = json.loads(run.read_text())
        corpus = Path(quality["corpus"]["root"])
        # Cut as the run cut it (its chunk-stage parameters, e.g. scope_names).
        chunking = {
            name: quality["parameters"][name] for name in CHUNK_FIELDS if name in quality["parameters"]
        }
        result["targets"] = target_figures(_cut_folder(corpus, with_values(params, chunking)), quality)
    return result


def format_leaves(result: dict[str, Any]) -> str:
    lines = [f"leaves of {result['path']}"]
    for language, figures in result["languages"].items():
        lines.append(
            f"{language}: {figures['files']} files, {figures['leaves']} leaves, tokens median "
            f"{figures['tokens_median']} p90 {figures['tokens_p90']}, module scope only "
            f"{figures['module_scope_share']:.0%}, continuing a split definition "
            f"{figures['continuation_share']:.0%}"
        )
        lines.append(f"  node types: {figures['node_types']}")
        lines.append(f"  definitions: {figures['definition_kinds']}")
        for kind, shown in figures["scope_lines"].items():
            lines.extend(f"  {kind}: {line}" for line in shown)
    targets = result.get("targets")
    if targets:
        lines.append(f"targets, {targets['system']} Recall@10:")
        lines.extend(
            f"  {name}: {row['recall_at_10']:.3f} of {row['targets']}"
            for name, row in targets["by_target"].items()
        )
        lines.append("  missed (query | target | scope of its first leaf):")
        lines.extend(f"    {miss}" for miss in targets["misses"])
    return "\n".join(lines)
