"""``bench chunk``: cutting files into leaves, against a bare tree-sitter parse of the same files.

Both are timed in one run, file by file and interleaved (parse, then cut), so
the ratio holds on a machine shared with other work even when the absolute
seconds do not; the CPU seconds of this process (``time.process_time``) are
reported beside the wall-clock ones, as other work on the machine inflates
them less. The cut includes reading the file, its own parse and the facts it
records. Then the same files are cut again in a pool of worker processes, one
per core, for the wall-clock time a pool takes (each worker sends back only
its leaf count; the pipeline decides what it sends).
"""

from __future__ import annotations

import os
import sysconfig
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from hsc.ingest import detect_language, load_file, walk_repository
from hsc.params import Parameters, Settings
from hsc.parse import AST_LANGUAGES, parser_for
from hsc.tokens import get_counter


def bench_chunk(root: Path | None = None, workers: int | None = None) -> dict[str, Any]:
    """Leaf chunking without embedding (default: the standard library's ``Lib/``)."""
    root = root or Path(sysconfig.get_paths()["stdlib"])
    params, settings, counter = Parameters(), Settings(), get_counter()
    paths = list(walk_repository(root))
    files = lines = leaves = 0
    parse_seconds = chunk_seconds = parse_cpu = chunk_cpu = 0.0
    statuses: dict[str, int] = {}
    counted: list[str] = []
    for rel_path in paths:
        language = detect_language(rel_path)
        if language in AST_LANGUAGES:
            try:
                data = (root / rel_path).read_bytes()
            except OSError:
                data = b""
            started, started_cpu = time.perf_counter(), time.process_time()
            parser_for(language).parse(data)
            parse_seconds += time.perf_counter() - started
            parse_cpu += time.process_time() - started_cpu
        started, started_cpu = time.perf_counter(), time.process_time()
        parsed = load_file(root, rel_path, params, settings, counter)
        elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
        statuses[parsed.report.status] = statuses.get(parsed.report.status, 0) + 1
        if language not in AST_LANGUAGES or not parsed.leaves:
            continue  # only files both sides parsed count towards the ratio
        chunk_seconds += elapsed
        chunk_cpu += elapsed_cpu
        files += 1
        leaves += len(parsed.leaves)
        lines += max(leaf.end_line for leaf in parsed.leaves)
        counted.append(str(rel_path))
    workers = workers or os.cpu_count() or 1
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pooled_leaves = sum(pool.map(_leaf_count, [root] * len(counted), counted, chunksize=16))
    pool_seconds = time.perf_counter() - started
    return {
        "suite": "chunk",
        "root": str(root),
        "files_seen": len(paths),
        "statuses": statuses,
        "files_parsed": files,
        "lines": lines,
        "leaves": leaves,
        "parse_seconds": round(parse_seconds, 2),
        "chunk_seconds": round(chunk_seconds, 2),
        "ratio": _ratio(chunk_seconds, parse_seconds),
        "parse_cpu_seconds": round(parse_cpu, 2),
        "chunk_cpu_seconds": round(chunk_cpu, 2),
        "cpu_ratio": _ratio(chunk_cpu, parse_cpu),
        "leaves_per_second": round(leaves / chunk_seconds) if chunk_seconds else None,
        "lines_per_second": round(lines / chunk_seconds) if chunk_seconds else None,
        "pool_workers": workers,
        "pool_seconds": round(pool_seconds, 2),
        "pool_ratio": _ratio(pool_seconds, parse_seconds),
        "pool_leaves_per_second": round(pooled_leaves / pool_seconds) if pool_seconds else None,
        "target": "ratio at most 2 in one process (chunk seconds include reading, parsing, facts)",
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 2) if denominator else None


def _leaf_count(root: Path, rel_path: str) -> int:
    """Cut one file in a worker process (module level, so that a pool can pickle it)."""
    return len(load_file(root, rel_path, Parameters(), Settings(), get_counter()).leaves)
