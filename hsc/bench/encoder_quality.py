"""``python -m hsc bench encoders``: the quality benchmark once per encoder and query kind.

Each encoder is named ``LABEL=MODEL@BACKEND[:WINDOW]`` (the vector cache's key
form, e.g. ``base=all-MiniLM-L6-v2@onnx-int8:128``), optionally with parameters of
its own after semicolons (``one=...;definition_vectors=off``); each gets its own corpus
and database under ``--out/LABEL-KIND`` (the corpus is the same for every
encoder of a kind, the vectors are not), and the same few systems are scored
on the same queries. Every encoder after the first is compared with the first
by a paired bootstrap over the queries.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hsc.embed.base import EncoderSpec
from hsc.embed.tuned import META_FILE, tuned_folder, tuned_meta
from hsc.quality.metrics import paired_bootstrap
from hsc.quality.sweep import Options, run_quality

SYSTEMS = ("flat", "two-stage", "hybrid", "hybrid-flat")
COLUMNS = ("recall_at_1", "recall_at_10", "mrr_at_10", "leaves_scored_share")


def parse_encoder(text: str) -> tuple[str, EncoderSpec, dict[str, str]]:
    """``LABEL=MODEL@BACKEND[:WINDOW[+mean]][;NAME=VALUE...]`` -> (label, spec, its own settings)."""
    label, sep, rest = text.partition("=")
    key, *own = rest.split(";")
    settings = dict(part.partition("=")[::2] for part in own)
    if any(not name or not value for name, value in settings.items()):
        raise ValueError(f"--encoder {text!r}: write each setting after ';' as NAME=VALUE")
    spec = EncoderSpec.from_key(key)
    if not sep or not label or "@" not in key or spec.backend not in key:
        raise ValueError(
            f"--encoder {text!r}: write LABEL=MODEL@BACKEND[:WINDOW], "
            "e.g. base=all-MiniLM-L6-v2@onnx-int8:128"
        )
    return label, spec, settings


def held_out_files(folder: Path) -> frozenset[str]:
    """The files a tuned encoder held out, as paths of a corpus built from the folder it
    was trained on (``--path``): its pair paths less their leading source name."""
    if tuned_folder(str(folder)) is None:
        raise ValueError(f"--held-out-of {folder}: not a tuned encoder's folder (no {META_FILE})")
    held = tuned_meta(folder)["data"]["held_out_files"]
    if not held:
        raise ValueError(f"--held-out-of {folder}: it was trained with nothing held out (--held-out 0)")
    return frozenset(path.partition("/")[2] for path in held)


def bench_encoder_quality(
    encoders: list[str],
    kinds: tuple[str, ...],
    out: Path,
    overrides: dict[str, str],
    queries: int | None = None,
    report: Callable[[str], None] = print,
    path: Path | None = None,
    held_out_of: Path | None = None,
) -> dict[str, Any]:
    """``path``: the folder to ask about (default: the standard-library packages);
    ``held_out_of``: a tuned encoder's folder, to ask only about the files it held out."""
    named = [parse_encoder(text) for text in encoders]
    query_files = held_out_files(held_out_of) if held_out_of else None
    if not named:
        raise ValueError("bench encoders needs at least one --encoder LABEL=MODEL@BACKEND[:WINDOW]")
    rows, comparisons, corpora = [], [], {}
    for kind in kinds:
        ranks: dict[tuple[str, str], list[int | None]] = {}
        for label, spec, own in named:
            settings = {
                "embedding_model": spec.model,
                "embedding_backend": spec.backend,
                "embedding_max_tokens": str(spec.window or 0),
                "embedding_long_leaves": spec.long_leaves,
                **own,
            }
            options = Options(
                path=path,
                query_files=query_files,
                queries=queries,
                out=out / f"{label}-{kind}",
                overrides={**overrides, **settings},
                sweep=False,
                systems=SYSTEMS,
                query_kind=kind,
            )
            report(f"{label} ({spec.describe()}), {kind} queries")
            result = run_quality(options, report=report)
            corpora[f"{label}-{kind}"] = {
                k: result["corpus"][k] for k in ("queries", "leaves", "leaves_truncated", "model")
            } | {"index_s": result["index_s"]}
            for row in result["systems"]:
                ranks[(label, row["system"])] = row["ranks"]
                rows.append(
                    {"encoder": label, "kind": kind, "system": row["system"]} | {c: row[c] for c in COLUMNS}
                )
        first = named[0][0]
        for label, _, _ in named[1:]:
            for system in SYSTEMS:
                compared = paired_bootstrap(ranks[(first, system)], ranks[(label, system)])
                comparisons.append(
                    {"kind": kind, "system": system, "against": first, "encoder": label} | compared
                )
    return {
        "suite": "encoders",
        "encoders": {
            label: ";".join([spec.key, *(f"{k}={v}" for k, v in own.items())]) for label, spec, own in named
        },
        "corpora": corpora,
        "rows": rows,
        "comparisons": comparisons,
    }


def format_encoder_quality(result: dict[str, Any]) -> str:
    lines = [
        "| encoder | queries | system | R@1 | R@10 | MRR@10 | share scored |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['encoder']} | {row['kind']} | `{row['system']}` | {row['recall_at_1']:.3f} | "
            f"{row['recall_at_10']:.3f} | {row['mrr_at_10']:.3f} | {row['leaves_scored_share']:.1%} |"
        )
    lines += [
        "",
        "| queries | system | encoder - first | ΔR@10 (95% CI) | ΔMRR@10 (95% CI) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in result["comparisons"]:
        lines.append(
            f"| {c['kind']} | `{c['system']}` | {c['encoder']} - {c['against']} | "
            f"{c['recall_at_10']:+.3f} ({c['recall_at_10_ci'][0]:+.3f}, {c['recall_at_10_ci'][1]:+.3f}) | "
            f"{c['mrr_at_10']:+.3f} ({c['mrr_at_10_ci'][0]:+.3f}, {c['mrr_at_10_ci'][1]:+.3f}) |"
        )
    lines += ["", "corpora: " + "; ".join(f"{k}: {v}" for k, v in result["corpora"].items())]
    return "\n".join(lines)
