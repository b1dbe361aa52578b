"""``bench index PATH``: the whole pipeline on a real folder, stage by stage,
for the seed's encoder path (torch) and the default one, in one run.

Each path runs in a fresh interpreter (imports, model load and peak memory
are its own) on a copy of the folder, into a fresh database; then one
function of the copy is edited and the folder indexed again in the same
(warm) process, as an editor's save would be.
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

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


def index_once(root: Path, backend: str, scratch: Path) -> dict[str, Any]:
    """Index a copy of ``root`` with ``backend``, then again after a one-function edit."""
    from hsc.api import Index
    from hsc.params import Settings

    started = time.perf_counter()
    copy = scratch / root.name
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__", ".hsc"))
    with Index.open(scratch / "bench.db", Settings(embedding_backend=backend)) as index:
        began = time.perf_counter()
        index.embedder_for(index.encoder_spec())
        load_seconds = time.perf_counter() - began
        clock = StageClock()
        report = index.index(copy, progress=clock)
        clock.charge("write")  # whatever follows the last event: writing the hierarchy
        stages = {k: round(v, 2) for k, v in clock.seconds.items()}
        edited = edit_one_function(copy)
        began = time.perf_counter()
        again = index.index(copy)
        edit_seconds = time.perf_counter() - began
    total = time.perf_counter() - started
    return {
        "backend": backend,
        "leaves": report.leaves,
        "files": report.files_seen,
        "model_load_seconds": round(load_seconds, 2),
        "stage_seconds": stages,
        "index_seconds": round(report.seconds, 1),
        "end_to_end_seconds": round(total, 1),
        "leaves_per_second": round(report.leaves / total, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "edited_file": edited,
        "edit_reindex_seconds": round(edit_seconds, 2),
        "edit_leaves_embedded": again.leaves_embedded,
    }


def _run_in_fresh_process(root: Path, backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        program = (
            "import json, sys\nfrom pathlib import Path\nfrom hsc.bench.indexing import index_once\n"
            f"print(json.dumps(index_once(Path({str(root)!r}), {backend!r}, Path({scratch!r}))))\n"
        )
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"bench index ({backend}) failed: {done.stderr[-1500:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def bench_index(path: Path | None = None, backends: tuple[str, ...] | None = None) -> dict[str, Any]:
    root = (path or Path(sysconfig.get_paths()["stdlib"]) / "email").resolve()
    # The default before and after the seed's path: load from other work that
    # comes or goes during the run falls on both sides alike.
    backends = backends or (DEFAULT_BACKEND, "torch", DEFAULT_BACKEND)
    runs = [_run_in_fresh_process(root, backend) for backend in backends]
    result: dict[str, Any] = {"suite": "index", "root": str(root), "runs": runs}
    seconds: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        seconds[run["backend"]].append(run["end_to_end_seconds"])
    if "torch" in seconds and DEFAULT_BACKEND in seconds and DEFAULT_BACKEND != "torch":
        mean = {backend: sum(values) / len(values) for backend, values in seconds.items()}
        result["speedup_end_to_end"] = round(mean["torch"] / mean[DEFAULT_BACKEND], 2)
    return result


def format_index(result: dict[str, Any]) -> str:
    lines = [f"index: {result['root']}"]
    for run in result["runs"]:
        lines.append(
            f"  {run['backend']:<10} {run['leaves']} leaves in {run['files']} files: end to end "
            f"{run['end_to_end_seconds']} s ({run['leaves_per_second']} leaves/s), model load "
            f"{run['model_load_seconds']} s, stages {run['stage_seconds']}, "
            f"peak RSS {run['peak_rss_mb']} MB; "
            f"one-function edit ({run['edited_file']}): {run['edit_reindex_seconds']} s, "
            f"{run['edit_leaves_embedded']} leaves embedded"
        )
    if "speedup_end_to_end" in result:
        lines.append(f"  speed-up end to end: {result['speedup_end_to_end']}x")
    return "\n".join(lines)
