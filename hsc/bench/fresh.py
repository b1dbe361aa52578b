"""``bench fresh``: what a coding agent waits for on a real repository, through
the same functions the MCP tools call: index it, ask what changed (nothing,
then one edited file), sync that edit, and search."""

from __future__ import annotations

import shutil
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from hsc.api import Index
from hsc.integrations.tools import CodeSearch

QUERIES = (
    "parse a date from a string",
    "retry a call after a failure",
    "read a configuration file",
    "encode text as base64",
    "compare two version numbers",
)


def _timed(call: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def bench_fresh(path: Path | None = None) -> dict[str, Any]:
    source = path or Path(sysconfig.get_paths()["stdlib"]) / "email"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / source.name
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", ".git", ".hsc"))
        with Index.open(Path(folder) / "bench.db") as index:
            tools = CodeSearch(index)
            first, index_seconds = _timed(lambda: tools.index_repository(str(root)))
            _, status_seconds = _timed(tools.status)
            edited = max(root.rglob("*.py"), key=lambda p: p.stat().st_size)
            edited.write_text(
                edited.read_text(encoding="utf-8") + "\n\ndef added_by_bench():\n    return 1\n"
            )
            status, changed_status_seconds = _timed(tools.status)
            synced, sync_seconds = _timed(lambda: tools.sync(str(root)))
            tools.search(QUERIES[0])  # the model is loaded already; warm the HNSW and leaf table
            latencies = [_timed(lambda q=q: tools.search(q))[1] for q in QUERIES]
    return {
        "suite": "fresh",
        "root": str(source),
        "files": first["files_seen"],
        "leaves": first["leaves"],
        "index_seconds_with_model_load": round(index_seconds, 1),
        "status_seconds": round(status_seconds, 2),
        "status_after_edit_seconds": round(changed_status_seconds, 2),
        "status_saw": status["repositories"][0]["changed_on_disk"]["modified_count"],
        "sync_one_file_seconds": round(sync_seconds, 2),
        "sync_files_parsed": synced["files_parsed"],
        "sync_leaves_embedded": synced["leaves_embedded"],
        "search_code_ms_median": round(statistics.median(latencies) * 1000, 1),
    }
