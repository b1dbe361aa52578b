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
    from hsc.bench.chunk import bench_chunk

    return bench_chunk(Path(args.path) if args.path else None)


def _files(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.files import bench_files

    return bench_files(Path(args.path) if args.path else None)


def _embed(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.encoders import bench_embed

    return bench_embed(Path(args.path) if args.path else None, limit=args.leaves or 480)


def _spread(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.spread import bench_spread

    return bench_spread(Path(args.path) if args.path else None, limit=args.leaves or 320)


def _index(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.indexing import bench_index

    runs = tuple(run.strip() for run in args.runs.split(",") if run.strip()) if args.runs else None
    return bench_index(Path(args.path) if args.path else None, runs)


def _ray(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.ray_bench import bench_ray

    return bench_ray(Path(args.path) if args.path else None, leaves=args.leaves or 10_000)


def _hierarchy(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_hierarchy

    return bench_hierarchy(args.leaves or 20_000)


def _query(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.perf import bench_query

    return bench_query(args.leaves or 100_000)


def _scale(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.scale import SIZES, bench_scale, bench_scale_one

    out = Path(args.out or ".hsc/scale")
    if args.leaves:
        return bench_scale_one(args.leaves, None if args.no_store else out)
    return bench_scale(list(SIZES), None if args.no_store else out)


def _samples(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.samples import bench_samples

    return bench_samples()


def _fresh(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.fresh import bench_fresh

    return bench_fresh(Path(args.path) if args.path else None)


def _context(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.context import bench_context
    from hsc.params import parse_assignments

    packages = tuple(args.packages.split(",")) if args.packages else None
    overrides = parse_assignments(args.set or [])
    # An earlier run's context-run.json, read before the work so a bad path costs nothing.
    before = json.loads(Path(args.against).read_text()) if args.against else None
    result = bench_context(
        packages,
        args.queries,
        args.seed,
        Path(args.out or ".hsc/context"),
        sweep=args.sweep,
        report=lambda line: print(line, file=sys.stderr, flush=True),
        overrides=overrides,
        query_kind=args.query_kind,
        enclosing=args.enclosing,
        against=before,
    )
    if args.db:
        from hsc import Index

        with Index.open(args.db) as index:  # the app's Evaluate page shows the runs kept there
            result["saved"] = {"db": str(args.db), "run": index.save_quality_run(result)}
    return result


def _corpus(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.corpora import LANGUAGE_PACKAGES, bench_corpus

    wanted = (args.language or "all").split(",")
    languages = list(LANGUAGE_PACKAGES) if wanted == ["all"] else wanted
    return bench_corpus(languages, Path(args.out or ".hsc/corpora"))


def _leaves(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.leaf_survey import bench_leaves
    from hsc.params import Parameters, Settings, parse_assignments, split_overrides

    params, _ = split_overrides(parse_assignments(args.set or []), Parameters(), Settings())
    return bench_leaves(Path(args.path or "."), Path(args.out) if args.out else None, params)


def _quality(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.params import parse_assignments
    from hsc.quality.catalog import SYSTEM_NAMES
    from hsc.quality.pairing import against_earlier, load_run
    from hsc.quality.report import write_run
    from hsc.quality.sweep import Options, run_quality

    # An earlier run to pair against is read before the work, so a bad path costs nothing.
    earlier = load_run(Path(args.against)) if args.against else None
    options = Options(
        path=Path(args.path) if args.path else None,
        queries=args.queries,
        seed=args.seed,
        out=Path(args.out or ".hsc/quality"),
        overrides=parse_assignments(args.set or []),
        sweep=not args.no_sweep,
        systems=tuple(args.systems.split(",")) if args.systems else SYSTEM_NAMES,
        query_kind=args.query_kind,
        regions=args.regions,
    )
    result = run_quality(options, report=lambda line: print(line, file=sys.stderr, flush=True))
    if earlier is not None:
        result["against"] = against_earlier(result, earlier)
    result["files"] = write_run(result, Path(args.out or ".hsc/quality") / "run", png=not args.no_png)
    return result


def _encoders(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.encoder_quality import bench_encoder_quality
    from hsc.params import parse_assignments

    return bench_encoder_quality(
        args.encoder or [],
        tuple(args.kinds.split(",")),
        Path(args.out or ".hsc/encoders-quality"),
        parse_assignments(args.set or []),
        args.queries,
        report=lambda line: print(line, file=sys.stderr, flush=True),
        path=Path(args.path) if args.path else None,
        held_out_of=Path(args.held_out_of) if args.held_out_of else None,
    )


def _app(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.app import bench_app

    return bench_app(
        args.leaves or 20_000,
        Path(args.path) if args.path else None,
        steps=args.steps,
        database=Path(args.db) if args.db else None,
        against=Path(args.against) if args.against else None,
        pages=not args.no_pages,
    )


def _evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.evaluate import bench_evaluate

    return bench_evaluate()


def _teaching(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.teaching import bench_teaching

    if not args.db:
        raise ValueError("bench teaching measures an existing index: pass --db FILE")
    return bench_teaching(Path(args.db))


def _localize(args: argparse.Namespace) -> dict[str, Any]:
    from hsc.bench.localize import SPAN, bench_localize, paired_runs, parse_variants
    from hsc.params import parse_assignments

    if not args.git:
        raise ValueError("bench localize asks a repository's history: pass --git PATH (once per repository)")
    before = None
    if args.against:  # an earlier run's localize.json, read before the work so a bad path costs nothing
        before = json.loads(Path(args.against).read_text())
    result = bench_localize(
        [Path(path) for path in args.git],
        args.commits,
        args.seed,
        Path(args.out or ".hsc/localize"),
        parse_assignments(args.set or []),
        report=lambda line: print(line, file=sys.stderr, flush=True),
        span=args.span or SPAN,
        variants=parse_variants(args.variant or []),
    )
    if before is not None:
        result["against"] = paired_runs(before, result)
    return result


SUITES: dict[str, tuple[str, Runner]] = {
    "chunk": ("leaf chunking against a bare tree-sitter parse (default: the standard library)", _chunk),
    "files": ("the data-file rule (with its labelled sample) and fragments on a folder (--path)", _files),
    "embed": ("every encoder backend on real leaves (--path, --leaves), interleaved", _embed),
    "spread": ("the default encoder: one thread, threads of one process, one process per core", _spread),
    "index": ("the whole pipeline on a real folder (--path), seed's torch path vs the default", _index),
    "hierarchy": ("hierarchy rebuild from cached vectors (synthetic, --leaves)", _hierarchy),
    "query": ("two-stage and flat query latency (synthetic, --leaves)", _query),
    "scale": (
        "rebuild, query, peak RSS, database bytes and open time at 10^4..10^6 synthetic leaves "
        "(one size: --leaves; the databases go to --out, default .hsc/scale; --no-store skips them)",
        _scale,
    ),
    "app": (
        "the Streamlit app in Chromium: page and slider-step times (synthetic --leaves, or --path)",
        _app,
    ),
    "samples": ("parameter grid on the bundled samples' labelled queries", _samples),
    "fresh": ("index, status, one-file sync and search_code as the MCP tools run them (--path)", _fresh),
    "corpus": (
        "a benchmark corpus per --language (go, rust, js, ts, python or all) from registry packages "
        "at pinned versions, under --out (default .hsc/corpora), for `bench quality --path`",
        _corpus,
    ),
    "leaves": (
        "what the leaves of --path look like per language (sizes, scopes, definitions; --set a chunk "
        "parameter); with --out, "
        "a bench quality run's folder: where its targets ranked, by the leaves they span",
        _leaves,
    ),
    "quality": ("retrieval quality on real code: docstring queries, systems side by side, sweep", _quality),
    "context": (
        "code at a token budget: context packs against leaves, groups, windows (gold from ast)",
        _context,
    ),
    "encoders": (
        "the quality benchmark per --encoder LABEL=MODEL@BACKEND[:WINDOW] and query kind (--kinds), "
        "flat, two-stage, hybrid and hybrid-flat, each encoder against the first (paired bootstrap)",
        _encoders,
    ),
    "evaluate": ("the app's Evaluate page run at its default size: first run, then cached reruns", _evaluate),
    "ray": (
        "--executor ray on two local Ray nodes against the local executor (about --leaves stdlib leaves)",
        _ray,
    ),
    "teaching": ("the walkthrough's and the report's library calls on an index (--db)", _teaching),
    "localize": (
        "find the code a commit changed from its subject, at its parent's tree (--git PATH, repeatable; "
        "--commits, --seed, --span): function and file hit@k, pack coverage, against flat and BM25",
        _localize,
    ),
}
# ``perf`` runs these in turn.
PERF_SUITES = ("chunk", "embed", "hierarchy", "query", "scale")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", choices=["perf", *SUITES], nargs="?", default="perf")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--leaves",
        type=int,
        default=None,
        help="synthetic leaf count (hierarchy/query/app), leaves sampled (embed)",
    )
    parser.add_argument(
        "--path",
        help="folder to measure (embed, index: the stdlib's email package; quality: stdlib packages)",
    )
    parser.add_argument(
        "--queries", type=int, default=None, help="quality: draw this many queries (default all)"
    )
    parser.add_argument("--seed", type=int, default=0, help="quality: seed of the query draw")
    parser.add_argument(
        "--out", default=None, help="quality: corpus, index and results (.hsc/quality); scale: databases"
    )
    parser.add_argument("--no-store", action="store_true", help="scale: skip the databases")
    parser.add_argument(
        "--set", action="append", metavar="NAME=VALUE", help="quality: a parameter or setting"
    )
    parser.add_argument("--no-sweep", action="store_true", help="quality: the systems' table only")
    parser.add_argument(
        "--regions",
        action="store_true",
        help="quality: also score region and file answers (always for --query-kind class and module)",
    )
    parser.add_argument("--sweep", action="store_true", help="context: also sweep the pack's policy at 2,048")
    parser.add_argument(
        "--packages", metavar="NAME,...", help="context: standard-library packages (default: all)"
    )
    parser.add_argument(
        "--runs",
        metavar="RUN,...",
        help="index: these runs in this order (default default,seed,default,serial; also one-vector, "
        "no-outlines)",
    )
    parser.add_argument(
        "--query-kind",
        choices=("docstring", "comment", "class", "module"),
        default="docstring",
        help="quality, context: a doc's first sentence (default), a prose comment inside a function body, "
        "a class docstring's or a type's doc comment (target: the class or type) or a module docstring's "
        "(target: the file)",
    )
    parser.add_argument("--language", help="corpus: go, rust, js, ts, python, java, a list of them, or all")
    parser.add_argument("--no-png", action="store_true", help="quality: skip rendering the frontier PNG")
    parser.add_argument(
        "--encoder",
        action="append",
        metavar="LABEL=MODEL@BACKEND[:WINDOW][;NAME=VALUE...]",
        help="encoders: one encoder, with parameters of its own after semicolons",
    )
    parser.add_argument(
        "--kinds", default="docstring,comment", help="encoders: query kinds (default docstring,comment)"
    )
    parser.add_argument(
        "--held-out-of", metavar="DIR", help="encoders: ask only about the files this tuned encoder held out"
    )
    parser.add_argument(
        "--systems", metavar="NAME,...", help="quality: only these systems of the table (default all)"
    )
    parser.add_argument(
        "--db",
        help="an existing index (teaching); app: the index to reuse, or build there; "
        "context: the database to save the run in (the app's Evaluate page shows it)",
    )
    parser.add_argument("--steps", type=int, default=10, help="app: slider steps per slider")
    parser.add_argument(
        "--against",
        help="app: a checkout of another version of the app, driven first; localize: an earlier run's "
        "localize.json to pair this run against (a run indexed with other --set values); quality: an "
        "earlier run's --out folder, its default paired against each of that run's systems (McNemar); "
        "context: an earlier run's context-run.json, paired query by query",
    )
    parser.add_argument("--no-pages", action="store_true", help="app: the slider steps only")
    parser.add_argument(
        "--git", action="append", metavar="PATH", help="localize: a repository with its history (repeatable)"
    )
    parser.add_argument("--commits", type=int, default=60, help="localize: commits drawn per repository")
    parser.add_argument(
        "--variant",
        action="append",
        metavar="LABEL:NAME=VALUE[;NAME=VALUE]",
        help="localize: one more hsc system at these query parameters, paired against hsc (repeatable)",
    )
    parser.add_argument(
        "--enclosing",
        action="store_true",
        help="context: also the packs that bring a hit's enclosing definition (always for class questions)",
    )
    parser.add_argument(
        "--span", type=int, default=None, help="localize: draw from this many newest usable commits (400)"
    )


def _format(result: dict[str, Any]) -> str:
    if result["suite"] == "quality":
        from hsc.quality.report import format_table

        text = format_table(result)
        if result.get("against"):
            from hsc.quality.pairing import format_against

            text += "\n" + format_against(result["against"])
        return text + "\nfiles: " + ", ".join(result["files"].values())
    if result["suite"] == "leaves":
        from hsc.bench.leaf_survey import format_leaves

        return format_leaves(result)
    if result["suite"] == "corpus":
        from hsc.bench.corpora import format_corpus

        return format_corpus(result)
    if result["suite"] == "context":
        from hsc.bench.context import format_context

        return format_context(result)
    if result["suite"] == "encoders":
        from hsc.bench.encoder_quality import format_encoder_quality

        return format_encoder_quality(result)
    if result["suite"] == "app":
        from hsc.bench.app import format_app

        return format_app(result)
    if result["suite"] == "samples":
        from hsc.bench.samples import format_samples

        return format_samples(result)
    if result["suite"] == "embed":
        from hsc.bench.encoders import format_embed

        return format_embed(result)
    if result["suite"] == "scale":
        from hsc.bench.scale import format_scale

        return format_scale(result)
    if result["suite"] == "spread":
        from hsc.bench.spread import format_spread

        return format_spread(result)
    if result["suite"] == "ray":
        from hsc.bench.ray_bench import format_ray

        return format_ray(result)
    if result["suite"] == "index":
        from hsc.bench.indexing import format_index

        return format_index(result)
    if result["suite"] == "localize":
        from hsc.bench.localize import format_localize

        return format_localize(result)
    return f"{result['suite']}: " + ", ".join(f"{k}={v}" for k, v in result.items() if k != "suite")


def run_bench(args: argparse.Namespace) -> int:
    names = PERF_SUITES if args.suite == "perf" else (args.suite,)
    for name in names:
        print(f"bench {name} ...", file=sys.stderr, flush=True)
        # Under ``perf``, --leaves sizes the scale suite; the others keep their own sizes.
        given = (
            args
            if args.suite != "perf" or name == "scale"
            else argparse.Namespace(**{**vars(args), "leaves": None})
        )
        result = SUITES[name][1](given)
        print(json.dumps(result) if args.json else _format(result), flush=True)
    return 0
