"""``bench chunk``: cutting files into leaves, against a bare tree-sitter parse of the same files.

Both are timed in one run, file by file and interleaved (parse, then cut), so
the ratio holds on a machine shared with other work even when the absolute
seconds do not; the CPU seconds of this process (``time.process_time``, all
its threads) are reported beside the wall-clock ones, as other work on the
machine inflates them less. The cut includes reading the file, its own parse
and the facts it records. Each file is cut twice, in alternating order: as the
chunker does by default, on one thread, and with its tokens counted in a thread
while it is parsed (``*_thread``; ``linecount.ENCODE_IN_BACKGROUND``); the ranges' edge-text cache is
reported (``edge_texts``). Then the same files are cut again in a pool of
worker processes, one per core, for the wall-clock time a pool takes (each
worker sends back only its leaf count; the pipeline decides what it sends).
"""

from __future__ import annotations

import os
import sysconfig
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from hsc import linecount
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
    parse_seconds = parse_cpu = 0.0
    chunk_seconds, chunk_cpu = {True: 0.0, False: 0.0}, {True: 0.0, False: 0.0}  # by background
    statuses: dict[str, int] = {}
    counted: list[str] = []
    lookups, encoded = linecount.STATS.lookups, linecount.STATS.encoded
    chunker_default = linecount.ENCODE_IN_BACKGROUND
    for index, rel_path in enumerate(paths):
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
        elapsed: dict[bool, tuple[float, float]] = {}
        for background in (True, False) if index % 2 else (False, True):
            linecount.ENCODE_IN_BACKGROUND = background
            started, started_cpu = time.perf_counter(), time.process_time()
            parsed = load_file(root, rel_path, params, settings, counter)
            elapsed[background] = (time.perf_counter() - started, time.process_time() - started_cpu)
        linecount.ENCODE_IN_BACKGROUND = chunker_default
        statuses[parsed.report.status] = statuses.get(parsed.report.status, 0) + 1
        if language not in AST_LANGUAGES or not parsed.leaves:
            continue  # only files both sides parsed count towards the ratio
        for background, (wall, cpu) in elapsed.items():
            chunk_seconds[background] += wall
            chunk_cpu[background] += cpu
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
        "chunk_seconds": round(chunk_seconds[False], 2),
        "ratio": _ratio(chunk_seconds[False], parse_seconds),
        "parse_cpu_seconds": round(parse_cpu, 2),
        "chunk_cpu_seconds": round(chunk_cpu[False], 2),
        "cpu_ratio": _ratio(chunk_cpu[False], parse_cpu),
        "chunk_seconds_thread": round(chunk_seconds[True], 2),
        "ratio_thread": _ratio(chunk_seconds[True], parse_seconds),
        "cpu_ratio_thread": _ratio(chunk_cpu[True], parse_cpu),
        "leaves_per_second": round(leaves / chunk_seconds[False]) if chunk_seconds[False] else None,
        "lines_per_second": round(lines / chunk_seconds[False]) if chunk_seconds[False] else None,
        "edge_texts": _edge_texts(linecount.STATS.lookups - lookups, linecount.STATS.encoded - encoded),
        "pool_workers": workers,
        "pool_seconds": round(pool_seconds, 2),
        "pool_ratio": _ratio(pool_seconds, parse_seconds),
        "pool_leaves_per_second": round(pooled_leaves / pool_seconds) if pool_seconds else None,
        "target": "ratio at most 2 in one process (chunk seconds include reading, parsing, facts)",
    }


def _edge_texts(lookups: int, encoded: int) -> dict[str, Any]:
    """Lookups of a range's edge texts, how many were found counted already, and the cache's size."""
    kept = linecount.STATS.kept()
    return {
        "lookups": lookups,
        "hit_rate": round(1 - encoded / lookups, 3) if lookups else None,
        "kept": kept,
        "kept_bytes": linecount.STATS.kept_bytes(),
        "limit": linecount.TEXT_COUNTS_LIMIT,
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 2) if denominator else None


def _leaf_count(root: Path, rel_path: str) -> int:
    """Cut one file in a worker process (module level, so that a pool can pickle it)."""
    return len(load_file(root, rel_path, Parameters(), Settings(), get_counter()).leaves)
