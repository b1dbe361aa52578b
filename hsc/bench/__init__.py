"""``python -m hsc bench SUITE``: the figures the README and the notes quote.

One module per family of suites; this one only names them and runs them.
Every suite returns one JSON-able dict with a ``suite`` key, printed as a
line of text or (``--json``) as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# suite name -> (help, runner); a runner takes the parsed arguments.
Runner = Callable[[argparse.Namespace], dict[str, Any]]


def _chunk(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_chunk

    return bench_chunk(Path(args.path) if args.path else None)


def _embed(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_embed

    return bench_embed()


def _index(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_index

    return bench_index(Path(args.path) if args.path else None)


def _hierarchy(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_hierarchy

    return bench_hierarchy(args.leaves or 20_000)


def _query(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_query

    return bench_query(args.leaves or 100_000)


def _samples(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.samples import bench_samples

    return bench_samples()


def _teaching(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.teaching import bench_teaching

    if not args.db:
        raise ValueError("bench teaching measures an existing index: pass --db FILE")
    return bench_teaching(Path(args.db))


SUITES: dict[str, tuple[str, Runner]] = {
    "chunk": ("leaf chunking without embedding (default: the standard library)", _chunk),
    "embed": ("embedding throughput of the default model", _embed),
    "index": ("the whole pipeline on a real folder (--path)", _index),
    "hierarchy": ("hierarchy rebuild from cached vectors (synthetic, --leaves)", _hierarchy),
    "query": ("two-stage and flat query latency (synthetic, --leaves)", _query),
    "samples": ("parameter grid on the bundled samples' labelled queries", _samples),
    "teaching": ("the walkthrough's and the report's library calls on an index (--db)", _teaching),
}
# ``perf`` runs these in turn.
PERF_SUITES = ("chunk", "embed", "hierarchy", "query")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", choices=["perf", *SUITES], nargs="?", default="perf")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--leaves", type=int, default=None, help="synthetic leaf count (hierarchy/query)")
    parser.add_argument("--db", help="an existing index (teaching)")
    parser.add_argument("--path", help="folder to measure (index: default the stdlib's email package)")


def _format(result: dict[str, Any]) -> str:
    if result["suite"] == "samples":
        from hsc.bench.samples import format_samples

        return format_samples(result)
    return f"{result['suite']}: " + ", ".join(f"{k}={v}" for k, v in result.items() if k != "suite")


def run_bench(args: argparse.Namespace) -> int:
    names = PERF_SUITES if args.suite == "perf" else (args.suite,)
    for name in names:
        print(f"bench {name} ...", file=sys.stderr, flush=True)
        result = SUITES[name][1](args)
        print(json.dumps(result) if args.json else _format(result), flush=True)
    return 0
