"""``python -m hsc``: index, build, query, context, stats, export, bench, watch, mcp.

Progress goes to stderr; ``--json`` output goes to stdout, one object (or
one object per line for ``--queries`` and ``export``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hsc.api import Index, check_query, default_database
from hsc.bench import add_arguments as add_bench_arguments
from hsc.params import RETRIEVAL_MODES, Parameters, Settings, configure, describe
from hsc.store.dbfile import explain

if TYPE_CHECKING:
    from hsc.index.pipeline import Progress


def _progress_printer(enabled: bool) -> Any:
    def show(event: Progress) -> None:
        if not enabled:
            return
        # The first, every tenth and the last event of a stage: readable in a log.
        step = max(1, event.total // 10) if event.total else 1
        if event.done == event.total or event.done % step == 0 or event.done == 1:
            total = f"/{event.total}" if event.total else ""
            print(f"[{event.stage}] {event.done}{total} {event.message}", file=sys.stderr, flush=True)

    return show


def _say_once(note: str) -> None:
    """A fallback the user did not ask for, on stderr (also with --json and --quiet)."""
    if note:
        print(f"hsc: note: {note}", file=sys.stderr, flush=True)


def _configure(args: argparse.Namespace) -> tuple[Parameters, Settings]:
    return configure(getattr(args, "config", None), getattr(args, "set", None))


def _open(args: argparse.Namespace, settings: Settings, repository: str | None = None) -> Index:
    database = Path(args.db) if args.db else default_database(repository)
    args.database = database  # named by the message of any database error
    if repository is None and not database.exists():
        raise SystemExit(f"hsc: no index at {database}; run `python -m hsc index PATH` first or pass --db")
    # Only `index` creates a database; the other commands refuse a file that holds no index.
    return Index.open(database, settings, create=repository is not None)


def _repository_id(index: Index, args: argparse.Namespace) -> int | None:
    if getattr(args, "repo", None):
        found = index.repository_id(args.repo)
        if found is None:
            raise SystemExit(f"hsc: {args.repo} is not indexed in {index.store.path}")
        return found
    return None


def command_index(args: argparse.Namespace) -> int:
    params, settings = _configure(args)
    root = Path(args.path)
    # Check before opening: the default database would otherwise create the folder.
    if not root.exists():
        raise FileNotFoundError(f"no such folder: {root}")
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root} (give the repository's top folder)")
    with _open(args, settings, repository=args.path) as index:
        report = index.index(args.path, params, progress=_progress_printer(not args.quiet))
        summary = {**report.to_json(), "database": str(index.store.path)}
        _say_once(report.summariser_note)
        if args.json:
            print(json.dumps(summary))
        else:
            print(
                f"indexed {report.root}: {report.files_seen} files ({report.files_parsed} parsed, "
                f"{report.files_unchanged} unchanged, {report.files_skipped} skipped, {report.files_failed} "
                f"failed, {report.files_removed} removed), {report.leaves} leaves, {report.leaves_embedded} "
                f"embedded, {report.leaves_from_cache} from cache, in {report.seconds:.1f}s "
                f"-> {index.store.path}"
            )
            for problem in report.problems:
                print(f"  {problem.status}: {problem.path}: {problem.reason}")
    return 0


def command_build(args: argparse.Namespace) -> int:
    params, settings = _configure(args)
    with _open(args, settings) as index:
        info = index.build(
            _repository_id(index, args), params, name=args.name, progress=_progress_printer(not args.quiet)
        )
        _say_once(info["summariser_note"])
        if args.json:
            print(json.dumps(info))
        else:
            print(
                f"hierarchy {info['name']!r} (id {info['id']}): {info['leaf_count']} leaves, "
                f"{info['group_count']} groups ({info['topic_boundaries']} topic boundaries), "
                f"{info['document_count']} documents"
            )
    return 0


def _hierarchy_id(index: Index, args: argparse.Namespace) -> int | None:
    if not args.hierarchy:
        return None
    repository_id = _repository_id(index, args)
    for row in index.hierarchies(repository_id):
        if row["name"] == args.hierarchy:
            return int(row["id"])
    raise SystemExit(f"hsc: no hierarchy named {args.hierarchy!r}")


def _print_response(response: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(response.to_json()), flush=True)
        return
    print(
        f"query: {response.query}  ({response.mode}, {response.leaves_compared} leaves compared of "
        f"{response.flat_leaves_compared}, {response.elapsed_ms:.2f} ms)"
    )
    for r in response.results:
        parent = f"  parent {r.parent_id} {r.parent_score:.3f}" if r.parent_score is not None else ""
        print(f"{r.rank:>3}  {r.score:.3f}  {r.path}:{r.start_line}-{r.end_line}  {r.scope}{parent}")


def command_query(args: argparse.Namespace) -> int:
    params, settings = _configure(args)
    if args.text is not None and not args.queries:
        check_query(args.text)  # before anything is opened or loaded
    with _open(args, settings) as index:
        repository_id = _repository_id(index, args)
        hierarchy_id = _hierarchy_id(index, args)
        if hierarchy_id is None:
            hierarchy_id = index.default_hierarchy(repository_id)
        stored = index.hierarchy(hierarchy_id)["parameters"]
        query_values = {
            k: getattr(params, k) for k in ("mid_level_top_k", "leaf_level_top_k", "retrieval_mode")
        }
        query_params = Parameters(**{**stored, **query_values})
        for text in _query_texts(args):
            response = index.query(
                text,
                hierarchy_id=hierarchy_id,
                params=query_params,
                mode="flat" if args.flat else args.mode,
                compare=False,
            )
            _print_response(response, args.json)
    return 0


def _query_texts(args: argparse.Namespace) -> list[str]:
    """The query text, or the lines of ``--queries FILE`` ('-': stdin)."""
    if args.queries:
        if args.queries == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(args.queries).read_text(encoding="utf-8").splitlines()
        texts = [line.strip() for line in lines if line.strip()]
        if not texts:
            raise ValueError(f"{args.queries}: no queries in it (one query a line)")
        return texts
    if args.text is not None:
        return [args.text]
    raise SystemExit("hsc: give a query text or --queries FILE")


def command_context(args: argparse.Namespace) -> int:
    params, settings = _configure(args)
    if args.budget < 1:
        raise ValueError(f"--budget must be a whole number of tokens >= 1, got {args.budget}")
    if args.text is not None and not args.queries:
        check_query(args.text)
    # The query-stage values --set or --config changed; the rest come from the hierarchy.
    defaults = Parameters()
    overrides = {
        f.name: getattr(params, f.name)
        for f in dataclasses.fields(params)
        if f.metadata["stage"] == "query" and getattr(params, f.name) != getattr(defaults, f.name)
    }
    with _open(args, settings) as index:
        repository_id = _repository_id(index, args)
        hierarchy_id = _hierarchy_id(index, args)
        for text in _query_texts(args):
            pack = index.context(
                text,
                args.budget,
                args.mode,
                repository_id=repository_id,
                hierarchy_id=hierarchy_id,
                **overrides,
            )
            if args.json:
                print(json.dumps(pack.to_json()), flush=True)
            else:
                used = f"{pack.tokens} of {pack.budget} tokens"
                print(f"context: {used}, {len(pack.spans)} spans ({pack.mode})")
                print(pack.text, flush=True)
    return 0


def command_stats(args: argparse.Namespace) -> int:
    _, settings = _configure(args)
    with _open(args, settings) as index:
        stats = index.stats()
        if args.json:
            print(json.dumps(stats))
            return 0
        print(
            f"database {stats['database']} ({stats['database_bytes'] / 1e6:.1f} MB), tokenizer "
            f"{stats['tokenizer']}"
        )
        for name, count in stats["tables"].items():
            print(f"  {name:<13}{count:>8}")
        for repository in stats["repositories"]:
            print(
                f"repository {repository['name']} ({repository['root']}): {repository['leaves']} leaves, "
                f"files {repository['files']}, model {repository['embedding_model']}"
            )
            for language, entry in sorted(repository["languages"].items()):
                print(f"  {language:<12}{entry['files']:>5} files {entry['leaves']:>6} leaves")
            for h in repository["hierarchies"]:
                print(
                    f"  hierarchy {h['name']!r}: {h['group_count']} groups, {h['document_count']} documents"
                )
    return 0


def command_export(args: argparse.Namespace) -> int:
    _, settings = _configure(args)
    with _open(args, settings) as index:
        repository_id = _repository_id(index, args)
        for row in index.export(_hierarchy_id(index, args), repository_id):
            print(json.dumps(row))
    return 0


def command_report(args: argparse.Namespace) -> int:
    from hsc.explore.report import build_report

    _, settings = _configure(args)
    with _open(args, settings) as index:
        hierarchy_id = _hierarchy_id(index, args) or index.default_hierarchy(_repository_id(index, args))
        page = build_report(index, hierarchy_id, args.query or None)
    Path(args.out).write_text(page, encoding="utf-8")
    print(f"wrote {args.out} ({len(page) / 1e6:.1f} MB, opens offline)")
    return 0


def command_params(args: argparse.Namespace) -> int:
    for kind in (Parameters, Settings):
        print(f"[{kind.__name__.lower()}]")
        for entry in describe(kind):
            kind_and_stage = f"{entry['allowed']}, {entry['stage']}"
            print(f"  {entry['name']} = {entry['default']!r}  ({kind_and_stage}): {entry['help']}")
    return 0


def command_bench(args: argparse.Namespace) -> int:
    from hsc.bench import run_bench

    return run_bench(args)


def command_watch(args: argparse.Namespace) -> int:
    from hsc.index.watch import watch

    params, settings = _configure(args)
    root = Path(args.path)
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root} (give the repository's top folder)")
    with _open(args, settings, repository=args.path) as index:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a watch ends
            watch(index, root, params, debounce=args.debounce, max_wait=args.max_wait)
    return 0


def command_mcp(args: argparse.Namespace) -> int:
    try:
        from hsc.integrations.mcp_server import serve
    except ImportError as error:
        raise SystemExit(
            f"hsc: the MCP server needs the mcp package: pip install 'hsc[mcp]' ({error})"
        ) from None
    serve(Path(args.db) if args.db else default_database(), args.http)
    return 0


def _add_mode(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument(
        "--mode",
        choices=RETRIEVAL_MODES,
        default=None,
        help=f"{what} (default: the retrieval_mode parameter, {Parameters().retrieval_mode})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hsc", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help: str, settable: bool = True) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help, description=help)
        command.add_argument("--db", help="index database (default: .hsc/index.db in the repository or here)")
        if settable:
            command.add_argument(
                "--set",
                action="append",
                metavar="NAME=VALUE",
                help="a parameter or setting, e.g. --set similarity_drop_threshold=0.4",
            )
            command.add_argument("--config", metavar="TOML", help="parameters and settings from a TOML file")
        return command

    index = add("index", "parse, chunk and embed a repository (incremental)")
    index.add_argument("path")
    index.add_argument("--json", action="store_true")
    index.add_argument("--quiet", action="store_true", help="no progress on stderr")
    index.set_defaults(run=command_index)

    build = add("build", "build a named hierarchy from cached vectors (no parsing, no embedding)")
    build.add_argument("--name", default="default")
    build.add_argument("--repo", help="repository path, when the database holds several")
    build.add_argument("--json", action="store_true")
    build.add_argument("--quiet", action="store_true")
    build.set_defaults(run=command_build)

    query = add("query", f"retrieval ({Parameters().retrieval_mode} unless --mode or --flat says otherwise)")
    query.add_argument("text", nargs="?")
    query.add_argument("--queries", metavar="FILE", help="one query a line ('-' for stdin); JSON lines out")
    _add_mode(query, "retrieval mode")
    query.add_argument(
        "--flat", action="store_true", help="exact search over all leaves (short for --mode flat)"
    )
    query.add_argument("--hierarchy", help="name of the hierarchy (default: 'default')")
    query.add_argument("--repo", help="repository path, when the database holds several")
    query.add_argument("--json", action="store_true")
    query.set_defaults(run=command_query)

    context = add("context", "at most --budget tokens of code for a query: hits and what they depend on")
    context.add_argument("text", nargs="?")
    context.add_argument("--budget", type=int, required=True, metavar="N", help="cl100k tokens at most")
    context.add_argument("--queries", metavar="FILE", help="one query a line ('-' for stdin); JSON lines out")
    _add_mode(context, "how hits are ranked")
    context.add_argument("--hierarchy", help="name of the hierarchy (default: 'default')")
    context.add_argument("--repo", help="repository path, when the database holds several")
    context.add_argument("--json", action="store_true", help="one JSON object: spans, tokens, text")
    context.set_defaults(run=command_context)

    stats = add("stats", "what the index holds")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(run=command_stats)

    export = add("export", "all nodes of a hierarchy as JSON lines")
    export.add_argument("--format", choices=["jsonl"], default="jsonl")
    export.add_argument("--hierarchy")
    export.add_argument("--repo")
    export.set_defaults(run=command_export)

    watch = add("watch", "index a repository, then re-index it as its files change (Ctrl-C stops)")
    watch.add_argument("path")
    watch.add_argument(
        "--debounce", type=float, default=1.0, help="seconds without a change before re-indexing (default 1)"
    )
    watch.add_argument(
        "--max-wait",
        type=float,
        default=10.0,
        help="re-index at least this often, in seconds, while changes keep coming (default 10)",
    )
    watch.set_defaults(run=command_watch)

    mcp = add("mcp", "serve the index to coding agents over the Model Context Protocol", settable=False)
    mcp.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="streamable HTTP on 127.0.0.1:PORT (0: any free port, printed) instead of stdio",
    )
    mcp.set_defaults(run=command_mcp)

    report = add("report", "a one-page HTML report of a parameter set, readable offline", settable=False)
    report.add_argument("--out", required=True, metavar="FILE.html")
    report.add_argument("--hierarchy", help="name of the parameter set (default: 'default')")
    report.add_argument("--repo", help="repository path, when the database holds several")
    report.add_argument(
        "--query",
        action="append",
        metavar="TEXT",
        help="a sample query (repeatable; default: suggested ones)",
    )
    report.set_defaults(run=command_report)

    params = sub.add_parser("params", help="list parameters and settings with defaults and help")
    params.set_defaults(run=command_params)

    bench = sub.add_parser("bench", help="performance and quality figures (see the README's Performance)")
    add_bench_arguments(bench)
    bench.set_defaults(run=command_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("query", "context") and args.queries:
        args.json = True  # a batch always answers in JSON lines
    try:
        return int(args.run(args))
    except (ValueError, FileNotFoundError, NotADirectoryError, KeyError, RuntimeError) as error:
        print(f"hsc: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (e.g. `head`) has gone; stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (sqlite3.Error, OSError) as error:  # a database error outside Store's own translation
        where = getattr(args, "database", None) or "the database"
        print(f"hsc: {where}: {explain(error, path=getattr(args, 'database', None))}", file=sys.stderr)
        return 2
