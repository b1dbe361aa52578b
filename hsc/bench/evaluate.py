"""``bench evaluate``: how long the app's Evaluate page waits for its default run.

The same library call the page makes (:func:`hsc.quality.sweep.run_quality` with
:func:`quick_options`), with the model loaded first as the app has it: a first run
into an empty folder (the corpus embedded), then reruns with every vector cached,
without and with the sweep, interleaved.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path
from typing import Any

from hsc.api import Index
from hsc.quality.sweep import quick_options, run_quality


def bench_evaluate(rounds: int = 2) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, Index.open(Path(folder) / "app.db") as app:
        embedder = app.embedder  # loaded once, as the app does at start
        options = quick_options(Path(folder))
        started = time.perf_counter()
        result = run_quality(options, report=lambda _: None, embedder=embedder)
        first = time.perf_counter() - started
        reruns: dict[str, list[float]] = {"no_sweep": [], "sweep": []}
        for _ in range(rounds):
            for name, swept in (("no_sweep", False), ("sweep", True)):
                started = time.perf_counter()
                run_quality(
                    dataclasses.replace(options, sweep=swept), report=lambda _: None, embedder=embedder
                )
                reruns[name].append(round(time.perf_counter() - started, 1))
    return {
        "suite": "evaluate",
        "corpus": result["corpus"]["source"],
        "queries": result["corpus"]["queries"],
        "leaves": result["corpus"]["leaves"],
        "systems": list(options.systems),
        "first_run_s": round(first, 1),
        "rerun_s": reruns,
    }
