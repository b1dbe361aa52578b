"""``bench index PATH``: the whole pipeline on a real folder, stage by stage,
for the seed's path (torch, one process), the default encoder run the same
serial way, and today's default (files cut by worker processes, the encoder
in several processes), in one run.

Each path runs in a fresh interpreter (imports, model load and peak memory
are its own) on a copy of the folder, into a fresh database; then one
function of the copy is edited and the folder indexed again in the same
(warm) process, as an editor's save would be.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from hsc.bench.memory import children_peak_rss_mb, peak_rss_mb
from hsc.embed import DEFAULT_BACKEND


class StageClock:
    """Progress callback that charges the time since the last event to the
    stage of this one (``files`` is parsing and chunking, with the writes)."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.seconds: dict[str, float] = defaultdict(float)

    def __call__(self, event: Any) -> None:
        self.charge(event.stage)

    def charge(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] += now - self.last
        self.last = now


def edit_one_function(root: Path) -> str | None:
    """Add a statement to the first one-line ``def`` of the largest Python
    file; return the file's path (None when there is none)."""
    for path in sorted(root.rglob("*.py"), key=lambda p: -p.stat().st_size):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        for number, line in enumerate(lines):
            found = re.match(r"^(\s*)def \w+\(.*\).*:\s*$", line)
            if found:
                lines.insert(number + 1, f"{found.group(1)}    edited_for_bench = True\n")
                path.write_text("".join(lines), encoding="utf-8")
                return str(path.relative_to(root))
    return None


# What each run is: its encoder backend and the settings that decide how the work is spread.
RUNS: dict[str, dict[str, str]] = {
    "default": {"embedding_backend": DEFAULT_BACKEND},
    "seed": {"embedding_backend": "torch", "index_workers": "0", "encode_processes": "1"},
    "serial": {"embedding_backend": DEFAULT_BACKEND, "index_workers": "0", "encode_processes": "1"},
    "one-vector": {"embedding_backend": DEFAULT_BACKEND},
    "no-outlines": {"embedding_backend": DEFAULT_BACKEND},
}
# Parameters of a run other than the defaults: ``one-vector`` is the default without definition vectors,
# ``no-outlines`` without outline vectors (hsc.index.outlines).
RUN_PARAMETERS: dict[str, dict[str, str]] = {
    "one-vector": {"definition_vectors": "off"},
    "no-outlines": {"region_outlines": "off"},
}


def index_once(root: Path, run: str, scratch: Path) -> dict[str, Any]:
    """Index a copy of ``root`` the ``run`` way, then again after a one-function edit."""
    from hsc.api import Index
    from hsc.embed.pool import resolve_processes
    from hsc.index.file_pool import resolve_workers
    from hsc.params import Parameters, Settings

    started = time.perf_counter()
    copy = scratch / root.name
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__", ".hsc"))
    settings = Settings(**RUNS[run])
    with Index.open(scratch / "bench.db", settings) as index:
        began = time.perf_counter()
        embedder = index.embedder_for(index.encoder_spec())
        load_seconds = time.perf_counter() - began
        clock = StageClock()
        params = Parameters(**RUN_PARAMETERS.get(run, {}))
        report = index.index(copy, params, progress=clock)
        clock.charge("write")  # whatever follows the last event: writing the hierarchy
        stages = {k: round(v, 2) for k, v in clock.seconds.items()}
        edited = edit_one_function(copy)
        began = time.perf_counter()
        again = index.index(copy, params)
        edit_seconds = time.perf_counter() - began
        children = children_peak_rss_mb()  # the encoder processes, still running
        getattr(embedder, "close", lambda: None)()
    total = time.perf_counter() - started
    return {
        "run": run,
        "backend": settings.embedding_backend,
        "index_workers": resolve_workers(settings.index_workers),
        "encode_processes": resolve_processes(settings.encode_processes) if run != "seed" else 1,
        "leaves": report.leaves,
        "definitions_embedded": report.definitions_embedded,
        "outlines": report.outlines,
        "files": report.files_seen,
        "leaves_truncated": report.leaves_truncated,
        "embedding_window": report.embedding_window,
        "model_load_seconds": round(load_seconds, 2),
        "stage_seconds": stages,
        "index_seconds": round(report.seconds, 1),
        "end_to_end_seconds": round(total, 1),
        "leaves_per_second": round(report.leaves / total, 1),
        "peak_rss_mb": round(peak_rss_mb()),
        # The largest child still running at the end (an encoder process), from its own VmHWM.
        "peak_worker_rss_mb": round(max(children.values())) if children else None,
        "edited_file": edited,
        "edit_reindex_seconds": round(edit_seconds, 2),
        "edit_leaves_embedded": again.leaves_embedded,
    }


def export_encoder() -> None:
    """Make the default encoder's one-off ONNX export (if it is not there yet), so no run counts it."""
    from hsc.embed import encoder_cache_dir, make_embedder, spec_for
    from hsc.params import Settings

    make_embedder(spec_for(Settings()), encoder_cache_dir(Path(".")), "cpu")


def _run_in_fresh_process(root: Path, call: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        program = (
            "import json, sys\nfrom pathlib import Path\nimport hsc.bench.indexing as bench\n"
            f"root, scratch = Path({str(root)!r}), Path({scratch!r})\n"
            f"print(json.dumps({call}))\n"
        )
        # Every run reads the one export (made once, like a user's first run ever).
        shared = os.environ.get("HSC_ENCODER_DIR") or str(Path(tempfile.gettempdir()) / "hsc-bench-encoders")
        env = {**os.environ, "HSC_ENCODER_DIR": shared}
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"bench index ({call}) failed: {done.stderr[-1500:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def bench_index(path: Path | None = None, runs: tuple[str, ...] | None = None) -> dict[str, Any]:
    root = (path or Path(sysconfig.get_paths()["stdlib"]) / "email").resolve()
    # The default on either side of the seed's path, and the serial default
    # last: load from other work that comes or goes falls on all of them alike.
    runs = runs or ("default", "seed", "default", "serial")
    unknown = [run for run in runs if run not in RUNS]
    if unknown:
        raise ValueError(f"unknown index run {unknown[0]!r}; choose from {', '.join(RUNS)}")
    _run_in_fresh_process(root, "bench.export_encoder()")
    results = []
    for run in runs:  # each run takes minutes on a real folder: say each as it ends
        results.append(_run_in_fresh_process(root, f"bench.index_once(root, {run!r}, scratch)"))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    result: dict[str, Any] = {"suite": "index", "root": str(root), "runs": results}
    seconds: dict[str, list[float]] = defaultdict(list)
    for run in results:
        seconds[run["run"]].append(run["end_to_end_seconds"])
    mean = {run: sum(values) / len(values) for run, values in seconds.items()}
    for other in ("default", "serial"):
        if "seed" in mean and other in mean:
            result[f"speedup_{other}_vs_seed"] = round(mean["seed"] / mean[other], 2)
    if "serial" in mean and "default" in mean:
        result["speedup_default_vs_serial"] = round(mean["serial"] / mean["default"], 2)
    for other in ("one-vector", "no-outlines"):
        if other in mean and "default" in mean:
            result[f"speedup_default_vs_{other}"] = round(mean[other] / mean["default"], 2)
    return result


def _encoder_peak(megabytes: int | None) -> str:
    return f" (largest encoder process {megabytes} MB)" if megabytes is not None else ""


def format_index(result: dict[str, Any]) -> str:
    lines = [f"index: {result['root']}"]
    for run in result["runs"]:
        truncated = (
            f"{run['leaves_truncated']} leaves longer than the {run['embedding_window']}-piece window"
            if run["leaves_truncated"] is not None
            else "truncation not counted"
        )
        lines.append(
            f"  {run['run']:<8} {run['backend']:<10} {run['index_workers']} cutting workers, "
            f"{run['encode_processes']} encoder processes: {run['leaves']} leaves in {run['files']} files "
            f"(+{run.get('definitions_embedded', 0)} definition vectors), "
            f"end to end {run['end_to_end_seconds']} s ({run['leaves_per_second']} leaves/s), model load "
            f"{run['model_load_seconds']} s, stages {run['stage_seconds']}, {truncated}, "
            f"peak RSS {run['peak_rss_mb']} MB{_encoder_peak(run['peak_worker_rss_mb'])}; "
            f"one-function edit ({run['edited_file']}): {run['edit_reindex_seconds']} s, "
            f"{run['edit_leaves_embedded']} leaves embedded"
        )
    for key, value in result.items():
        if key.startswith("speedup_"):
            lines.append(f"  {key.removeprefix('speedup_').replace('_', ' ')}: {value}x end to end")
    return "\n".join(lines)
