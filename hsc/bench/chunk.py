"""``bench chunk``: cutting files into leaves, against a bare tree-sitter parse of the same files.

Both are timed in one run, file by file and interleaved (parse, then cut), so
the ratio holds on a machine shared with other work even when the absolute
seconds do not. The cut includes its own parse and the facts it records.
"""

from __future__ import annotations

import sysconfig
import time
from pathlib import Path
from typing import Any

from hsc.ingest import detect_language, load_file, walk_repository
from hsc.params import Parameters, Settings
from hsc.parse import AST_LANGUAGES, parser_for
from hsc.tokens import get_counter


def bench_chunk(root: Path | None = None) -> dict[str, Any]:
    """Leaf chunking without embedding (default: the standard library's ``Lib/``)."""
    root = root or Path(sysconfig.get_paths()["stdlib"])
    params, settings, counter = Parameters(), Settings(), get_counter()
    paths = list(walk_repository(root))
    files = lines = leaves = 0
    parse_seconds = chunk_seconds = 0.0
    statuses: dict[str, int] = {}
    for rel_path in paths:
        language = detect_language(rel_path)
        if language in AST_LANGUAGES:
            try:
                data = (root / rel_path).read_bytes()
            except OSError:
                data = b""
            started = time.perf_counter()
            parser_for(language).parse(data)
            parse_seconds += time.perf_counter() - started
        started = time.perf_counter()
        parsed = load_file(root, rel_path, params, settings, counter)
        elapsed = time.perf_counter() - started
        statuses[parsed.report.status] = statuses.get(parsed.report.status, 0) + 1
        if language not in AST_LANGUAGES or not parsed.leaves:
            continue  # only files both sides parsed count towards the ratio
        chunk_seconds += elapsed
        files += 1
        leaves += len(parsed.leaves)
        lines += max(leaf.end_line for leaf in parsed.leaves)
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
        "ratio": round(chunk_seconds / parse_seconds, 2) if parse_seconds else None,
        "lines_per_second": round(lines / chunk_seconds) if chunk_seconds else None,
        "target": "ratio at most 2 (chunk seconds include reading, parsing and recording facts)",
    }
