"""``bench chunk``: cutting files into leaves, against a bare tree-sitter parse of the same files.

Both are timed in one run, file by file and interleaved (parse, then cut), so
the ratio holds on a machine shared with other work even when the absolute
seconds do not; the CPU seconds of this process (``time.process_time``) are
reported beside the wall-clock ones, as other work on the machine inflates
them less. The cut is :func:`~hsc.chunk.ingest.load_file` as indexing runs it: it
includes reading the file, its own parse, counting its tokens, cutting and
packing, and reading the facts of its syntax tree.

Where the cut's time goes is measured beside it, each part again on its own
in the same loop: the tokenizer encoding the whole file (``tokens``, once per
file: see ``hsc.chunk.linecount``), and the facts read from the parsed tree
(``facts``); ``rest`` is the cut less the parse, tokens and facts (reading,
cutting along the tree, packing, making the leaves). The ratio of each part
to the parse says what a change to it can win.

The *native floor* is what the cut cannot do without, all of it native code
with no Python per node or token: the parse, the tokenizer's encoding, and
tree-sitter's query for the identifiers and defining nodes as the facts run
it (``identifier_query``, the nodes captured and dropped). Whatever Python
the cut and the facts run comes on top, so a floor ratio above the target
says no change to hsc's own code can reach it with this tokenizer.

Then the same files are cut again in a pool of worker processes, one per
core, for the wall-clock time a pool takes (each worker sends back only its
leaf count; the pipeline decides what it sends).
"""

from __future__ import annotations

import os
import sysconfig
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from tree_sitter import QueryCursor

from hsc.chunk import linecount
from hsc.chunk.facts import FactReader, names_query
from hsc.chunk.ingest import detect_language, load_file, walk_repository
from hsc.chunk.parse import AST_LANGUAGES, module_name, parser_for
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings

PARTS = ("parse", "chunk", "tokens", "query", "facts")


class _Clock:
    """Wall and CPU seconds of named parts, summed over calls."""

    def __init__(self) -> None:
        self.wall = dict.fromkeys(PARTS, 0.0)
        self.cpu = dict.fromkeys(PARTS, 0.0)

    def time(self, part: str, work: Callable[[], Any]) -> Any:
        started, started_cpu = time.perf_counter(), time.process_time()
        result = work()
        self.wall[part] += time.perf_counter() - started
        self.cpu[part] += time.process_time() - started_cpu
        return result


def bench_chunk(root: Path | None = None, workers: int | None = None) -> dict[str, Any]:
    """Leaf chunking without embedding (default: the standard library's ``Lib/``)."""
    root = root or Path(sysconfig.get_paths()["stdlib"])
    params, settings, counter = Parameters(), Settings(), get_counter()
    paths = list(walk_repository(root))
    files = lines = leaves = 0
    clock, spent = _Clock(), _Clock()  # spent: the files that count towards the ratio
    statuses: dict[str, int] = {}
    counted: list[str] = []
    lookups, encoded = linecount.STATS.lookups, linecount.STATS.encoded
    for rel_path in paths:
        before = {part: (clock.wall[part], clock.cpu[part]) for part in PARTS}
        language = detect_language(rel_path)
        data = None
        if language in AST_LANGUAGES:
            try:
                data = (root / rel_path).read_bytes()
            except OSError:
                data = b""
            clock.time("parse", lambda: _parse_and_drop(language, data))  # noqa: B023
        parsed = clock.time("chunk", lambda: load_file(root, rel_path, params, settings, counter))  # noqa: B023
        statuses[parsed.report.status] = statuses.get(parsed.report.status, 0) + 1
        if data is None or not parsed.leaves:
            continue  # only files both sides parsed count towards the ratio
        text = data.decode("utf-8", "replace")
        clock.time("tokens", lambda: counter.token_ends(text))  # noqa: B023
        source = text.encode("utf-8")
        tree = parser_for(language).parse(source)  # parsed again, untimed, for the facts alone
        clock.time("query", lambda: _identifier_query(language, tree.root_node))  # noqa: B023
        reader = FactReader(source, language, module_name(str(rel_path)))
        clock.time("facts", lambda: reader.read(tree.root_node, parsed.leaves))  # noqa: B023
        for part in PARTS:
            spent.wall[part] += clock.wall[part] - before[part][0]
            spent.cpu[part] += clock.cpu[part] - before[part][1]
        files += 1
        leaves += len(parsed.leaves)
        lines += max(leaf.end_line for leaf in parsed.leaves)
        counted.append(str(rel_path))
    workers = workers or os.cpu_count() or 1
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pooled_leaves = sum(pool.map(_leaf_count, [root] * len(counted), counted, chunksize=16))
    pool_seconds = time.perf_counter() - started
    parse_seconds, chunk_seconds = spent.wall["parse"], spent.wall["chunk"]
    rest = chunk_seconds - parse_seconds - spent.wall["tokens"] - spent.wall["facts"]
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
        "parse_cpu_seconds": round(spent.cpu["parse"], 2),
        "chunk_cpu_seconds": round(spent.cpu["chunk"], 2),
        "cpu_ratio": _ratio(spent.cpu["chunk"], spent.cpu["parse"]),
        "parts_of_parse": {
            "parse": 1.0,
            "tokens": _ratio(spent.wall["tokens"], parse_seconds),
            "facts": _ratio(spent.wall["facts"], parse_seconds),
            "rest": _ratio(rest, parse_seconds),
        },
        "native_floor": {
            "tokens": _ratio(spent.wall["tokens"], parse_seconds),
            "identifier_query": _ratio(spent.wall["query"], parse_seconds),
            "ratio": _ratio(parse_seconds + spent.wall["tokens"] + spent.wall["query"], parse_seconds),
        },
        "leaves_per_second": round(leaves / chunk_seconds) if chunk_seconds else None,
        "lines_per_second": round(lines / chunk_seconds) if chunk_seconds else None,
        "edge_texts": _edge_texts(linecount.STATS.lookups - lookups, linecount.STATS.encoded - encoded),
        "pool_workers": workers,
        "pool_seconds": round(pool_seconds, 2),
        "pool_ratio": _ratio(pool_seconds, parse_seconds),
        "pool_leaves_per_second": round(pooled_leaves / pool_seconds) if pool_seconds else None,
        "target": "ratio at most 2 (chunk seconds include reading, parsing, counting, facts)",
    }


def _parse_and_drop(language: str, data: bytes) -> None:
    """A bare parse, its tree freed before the clock stops, as the cut frees its own."""
    parser_for(language).parse(data)


def _identifier_query(language: str, root: Any) -> None:
    """The facts' one query over a parsed tree, its captures dropped (see FactReader.read)."""
    query = names_query(language)
    if query is not None:
        QueryCursor(query).captures(root)


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
