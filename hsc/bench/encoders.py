"""``bench embed``: every encoder backend, and the default encoder, on the same real leaves in one run.

Throughput is measured interleaved (each backend embeds the same slice of
leaves in turn, the order reversed every slice), so load from other work on
the machine falls on all of them alike. Agreement is each backend's cosine
with torch's vector for the same leaf; truncation is the share of leaves
longer than the backend's window (word pieces, special tokens included).
"""

from __future__ import annotations

import copy
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed import BACKENDS, DEFAULT_BACKEND, encoder_cache_dir, make_embedder, spec_for
from hsc.embed.tuned import tuned_folder
from hsc.params import DEFAULT_MODEL, Parameters, Settings

# What each backend imports before it can load a model, timed in a fresh interpreter.
_IMPORTS = {
    "torch": "import torch, sentence_transformers",
    "onnx": "import onnxruntime, tokenizers",
    "onnx-int8": "import onnxruntime, tokenizers",
}


def import_seconds(statement: str, repeats: int = 3) -> float:
    """Best of ``repeats`` fresh interpreters: the cost a cold command pays."""
    program = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True).stdout)
        for _ in range(repeats)
    ]
    return min(runs)


def real_leaves(root: Path, limit: int) -> list[str]:
    """Up to ``limit`` leaf texts of ``root``, spread evenly over its files."""
    from hsc.chunk.ingest import load_file, walk_repository
    from hsc.chunk.tokens import get_counter

    params, settings, counter = Parameters(), Settings(), get_counter()
    texts = [
        leaf.embedding_text
        for rel_path in walk_repository(root)
        for leaf in load_file(root, rel_path, params, settings, counter).leaves
    ]
    if len(texts) <= limit:
        return texts
    return [texts[int(i)] for i in np.linspace(0, len(texts) - 1, limit)]


def bench_embed(root: Path | None = None, limit: int = 480, slices: int = 4) -> dict[str, Any]:
    root = root or Path(sysconfig.get_paths()["stdlib"]) / "email"
    texts = real_leaves(root, limit)
    batch = Parameters().embedding_batch_size
    cache = encoder_cache_dir(Path(tempfile.gettempdir()) / "hsc-bench")
    embedders, rows = {}, {}
    # Each backend on the base model, truncating (so agreement with torch measures the backend
    # alone), then the default encoder as shipped (tuned weights, long leaves read whole).
    encoders = {
        b: spec_for(
            Settings(embedding_model=DEFAULT_MODEL, embedding_backend=b, embedding_long_leaves="truncate")
        )
        for b in BACKENDS
    }
    encoders["default"] = spec_for(Settings())
    # The default again as it ran before rows ran alone on the CPU: all the rows of a batch, every
    # window of its long leaves included, in one model run.
    encoders["before"] = encoders["default"]
    for backend, spec in encoders.items():
        started = time.perf_counter()
        if spec.backend != "torch" and tuned_folder(spec.model) is None:
            from hsc.embed.onnx_export import export, export_files

            if not export_files(spec, cache)[1].exists():
                export(spec, cache)
        export_seconds = time.perf_counter() - started
        started = time.perf_counter()
        if backend == "before":  # the default's own session (same threads), run the old way
            embedders[backend] = copy.copy(embedders["default"])
            embedders[backend].run_size = sys.maxsize
        else:
            embedders[backend] = make_embedder(spec, cache, "cpu")
        rows[backend] = {
            "key": spec.key,
            "window": embedders[backend].max_seq_length,
            "import_seconds": round(import_seconds(_IMPORTS[spec.backend]), 2),
            "load_seconds": round(time.perf_counter() - started, 2),
            "export_seconds_first_time": round(export_seconds, 1) if backend != "torch" else None,
        }
        embedders[backend].embed(texts[:4])  # warm-up
    labels = list(encoders)
    vectors = {b: np.zeros((len(texts), embedders[b].dimension), np.float32) for b in labels}
    seconds = dict.fromkeys(labels, 0.0)
    bounds = np.linspace(0, len(texts), slices + 1).astype(int)
    for number, (start, end) in enumerate(zip(bounds[:-1], bounds[1:])):
        for backend in labels if number % 2 == 0 else labels[::-1]:
            began = time.perf_counter()
            vectors[backend][start:end] = embedders[backend].embed(texts[start:end], batch_size=batch)
            seconds[backend] += time.perf_counter() - began
    pieces = embedders["onnx"].piece_counts(texts)
    for backend in labels:
        agreement = np.einsum("ij,ij->i", vectors[backend], vectors["torch"])
        rows[backend].update(
            leaves_per_second=round(len(texts) / seconds[backend], 1),
            speed_vs_torch=round(seconds["torch"] / seconds[backend], 2),
            cosine_with_torch_mean=round(float(agreement.mean()), 4),
            cosine_with_torch_min=round(float(agreement.min()), 4),
            truncated_share=round(
                float(np.mean(pieces > rows[backend]["window"]))
                if encoders[backend].long_leaves == "truncate"
                else 0.0,
                3,
            ),
        )
    return {
        "suite": "embed",
        "root": str(root),
        "leaves": len(texts),
        "mean_word_pieces": round(float(pieces.mean()), 1),
        "batch_size": batch,
        "default_backend": DEFAULT_BACKEND,
        "default_encoder": encoders["default"].key,
        "backends": rows,
    }


def format_embed(result: dict[str, Any]) -> str:
    lines = [
        f"embed: {result['leaves']} leaves of {result['root']} (mean {result['mean_word_pieces']} word "
        f"pieces), batch {result['batch_size']}, interleaved; default backend {result['default_backend']}"
    ]
    columns = [
        "leaves_per_second",
        "speed_vs_torch",
        "import_seconds",
        "load_seconds",
        "cosine_with_torch_mean",
        "cosine_with_torch_min",
        "window",
        "truncated_share",
    ]
    lines.append(
        f"default = {result['default_encoder']} (its agreement with torch is the tuning's, "
        "not the backend's); before = the default with a batch's rows and windows in one model run, "
        "as before rows ran alone"
    )
    lines.append(f"{'backend':<10} " + " ".join(f"{c:>22}" for c in columns))
    for backend, row in result["backends"].items():
        lines.append(f"{backend:<10} " + " ".join(f"{row[c]!s:>22}" for c in columns))
    return "\n".join(lines)
