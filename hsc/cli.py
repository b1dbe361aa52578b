"""``python -m hsc``: index, build, query, context, stats, export, bench, watch, mcp.

Progress goes to stderr; ``--json`` output goes to stdout, one object (or
one object per line for ``--queries`` and ``export``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hsc import cli_arguments
from hsc.api import Index, check_query, default_database
from hsc.params import (
    Parameters,
    Settings,
    configure,
    describe,
    given_values,
    query_overrides,
    with_values,
)
from hsc.search.regions import level_overrides
from hsc.store.dbfile import explain

if TYPE_CHECKING:
    from hsc.index.estimate import TimeLeft
    from hsc.index.pipeline import Progress


def _progress_printer(enabled: bool, clock: TimeLeft | None = None) -> Any:
    """Progress lines on stderr; with ``clock``, the files' lines say about how long is left."""

    def show(event: Progress) -> None:
        if clock is not None:
            clock(event)
        if not enabled:
            return
        # The first, every tenth and the last event of a stage: readable in a log.
        step = max(1, event.total // 10) if event.total else 1
        if event.done == event.total or event.done % step == 0 or event.done == 1:
            total = f"/{event.total}" if event.total else ""
            left = clock.seconds_left() if clock is not None and event.stage == "files" else None
            later = f" (about {_duration(left)} left)" if left and event.done < event.total else ""
            # One write with its newline: an interrupt between print's two writes (text, then end)
            # would leave the line open and glue the "interrupted" line to it.
            sys.stderr.write(f"[{event.stage}] {event.done}{total} {event.message}{later}\n")
            sys.stderr.flush()

    return show


def _duration(seconds: float) -> str:
    from hsc.index.estimate import duration

    return duration(seconds)


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
    """``--repo`` (a name as ``stats`` prints it, or a root folder), else the only repository."""
    if getattr(args, "repo", None):
        try:
            return index.find_repository(args.repo)
        except ValueError as error:
            raise SystemExit(f"hsc: {index.store.path}: {error}") from None
    if len(index.repositories()) > 1:
        raise SystemExit(
            f"hsc: {index.store.path} holds several repositories; say which with --repo NAME or --repo "
            f"PATH ({index.repository_listing()})"
        )
    return None


def command_index(args: argparse.Namespace) -> int:
    params, settings = _configure(args)
    settings = _with_executor(args, settings)
    paths = _index_paths(args)
    # All checked before opening: the default database would otherwise create the folder.
    for root in paths:
        if not root.exists():
            raise FileNotFoundError(f"no such folder: {root}")
        if not root.is_dir():
            raise NotADirectoryError(f"not a folder: {root} (give the repository's top folder)")
    # One repository: its own .hsc/index.db by default; several: the current folder's.
    with _open(args, settings, repository=str(paths[0]) if len(paths) == 1 else ".") as index:
        for root in paths:
            done = _index_one(args, index, root, params, settings)
            if done:
                return done
    return 0


def _index_paths(args: argparse.Namespace) -> list[Path]:
    """The folders given, then those of ``--manifest`` (one a line; blank lines and # comments skipped)."""
    paths = [Path(path) for path in args.path]
    if args.manifest:
        listed = Path(args.manifest).read_text(encoding="utf-8").splitlines()
        paths += [Path(line.strip()) for line in listed if line.strip() and not line.strip().startswith("#")]
    if not paths:
        raise SystemExit("hsc: give a repository's folder (or several, or --manifest FILE)")
    return list(dict.fromkeys(paths))


def _index_one(
    args: argparse.Namespace, index: Index, root: Path, params: Parameters, settings: Settings
) -> int:
    """Index one repository of the database; 0, or 130 when interrupted."""
    from hsc.index.estimate import TimeLeft  # parsing is imported by `index` only (a cold query is timed)

    excludes = args.exclude
    clock = None
    try:
        if not args.quiet:
            survey = index.survey(root, excludes)
            print(f"[estimate] {survey.describe()}", file=sys.stderr, flush=True)
            clock = TimeLeft(survey.estimated_seconds)
        # Ray prints the cluster's notes (a node lost) on stdout: they go with the progress, on
        # stderr, and stdout keeps the one summary.
        on_ray = contextlib.redirect_stdout(sys.stderr) if settings.executor == "ray" else None
        with on_ray or contextlib.nullcontext():
            report = index.index(root, params, _progress_printer(not args.quiet, clock), excludes)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (main turns it into one)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not break the clean-up
        repository_id = index.repository_id(root)
        kept = sum(f["status"] == "indexed" for f in index.store.files(repository_id)) if repository_id else 0
        print(f"interrupted: {kept} files kept; run again to continue", file=sys.stderr, flush=True)
        return 130
    summary = {**report.to_json(), "database": str(index.store.path)}
    _say_once(report.summariser_note)
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        definitions = f" (+{report.definitions_embedded} definitions)" if report.definitions_embedded else ""
        print(
            f"indexed {report.root}: {report.files_seen} files ({report.files_parsed} parsed, "
            f"{report.files_unchanged} unchanged, {report.files_skipped} skipped, {report.files_failed} "
            f"failed, {report.files_removed} removed), {report.leaves} leaves, {report.leaves_embedded} "
            f"embedded{definitions}, {report.leaves_from_cache} from cache, in {report.seconds:.1f}s "
            f"-> {index.store.path}",
            flush=True,
        )
        for problem in report.problems:
            print(f"  {problem.status}: {problem.path}: {problem.reason}")
    return 0


def _with_executor(args: argparse.Namespace, settings: Settings) -> Settings:
    """``--executor`` and ``--ray-address`` over the settings; Ray checked before anything runs."""
    given = {"executor": args.executor, "ray_address": args.ray_address}
    settings = with_values(settings, {name: value for name, value in given.items() if value is not None})
    if settings.executor == "ray":
        from hsc.index.ray_executor import import_ray

        import_ray()  # without the extra: one line naming what to install, exit 2
    return settings


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
    rows = index.hierarchies(repository_id)
    for row in rows:
        if row["name"] == args.hierarchy:
            return int(row["id"])
    names = ", ".join(repr(row["name"]) for row in rows) or "none yet (python -m hsc build --name NAME)"
    raise SystemExit(f"hsc: no hierarchy named {args.hierarchy!r}; this repository has {names}")


def _print_response(response: Any, as_json: bool, regions: bool = False, files: bool = False) -> None:
    if as_json:
        shown = response.to_json()
        if regions:
            shown["regions"] = [region.to_json() for region in response.regions]
        if files:
            shown["files"] = [found.to_json() for found in response.files]
        print(json.dumps(shown), flush=True)
        return
    print(
        f"query: {response.query}  ({response.mode}, {response.leaves_compared} leaves compared of "
        f"{response.flat_leaves_compared}, {response.elapsed_ms:.2f} ms)"
    )
    for r in response.results:
        parent = f"  parent {r.parent_id} {r.parent_score:.3f}" if r.parent_score is not None else ""
        lines = ",".join(f"{start}-{end}" for _, start, end in r.pieces) or f"{r.start_line}-{r.end_line}"
        where = (
            f"{Path(r.repository).name}/{r.path}" if r.repository and not response.hierarchy_id else r.path
        )
        print(f"{r.rank:>3}  {r.score:.3f}  {where}:{lines}  {r.scope}{parent}")
    for title, shown, wanted in (("regions", response.regions, regions), ("files", response.files, files)):
        if wanted:
            print(f"{title}:")
            for rank, region in enumerate(shown, start=1):
                lines = "" if region.start_line is None else f":{region.start_line}-{region.end_line}"
                print(
                    f"{rank:>3}  {region.score:.3f}  {region.level:<10}  {region.path}{lines}  {region.name}"
                )


def command_query(args: argparse.Namespace) -> int:
    _, settings = _configure(args)
    # Every query-stage parameter given applies; any other parameter is refused, naming where it is set.
    overrides = query_overrides(given_values(args.config, args.set), with_settings=True)
    overrides |= level_overrides(args.level)
    if args.text is not None and not args.queries:
        check_query(args.text)  # before anything is opened or loaded
    with _open(args, settings) as index:
        if not args.repo and not args.hierarchy and len(index.repositories()) > 1:
            return _query_across(index, args, overrides)
        repository_id = _repository_id(index, args)
        hierarchy_id = _hierarchy_id(index, args)
        if hierarchy_id is None:
            hierarchy_id = index.default_hierarchy(repository_id)
        query_params = index.hierarchy_parameters(hierarchy_id, **overrides)
        for text in _query_texts(args):
            response = index.query(
                text,
                hierarchy_id=hierarchy_id,
                params=query_params,
                mode="flat" if args.flat else args.mode,
                compare=False,
                join_pieces=not args.apart,
                regions=args.regions or args.files,
                roles=args.role,
            )
            _print_response(response, args.json, args.regions, args.files)
    return 0


def _query_across(index: Index, args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """Every repository of the database answers; results ranked together, each naming its repository."""
    from hsc.search.across import query_repositories

    for text in _query_texts(args):
        response = query_repositories(
            index,
            text,
            overrides=overrides,
            mode="flat" if args.flat else args.mode,
            join_pieces=not args.apart,
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
    _, settings = _configure(args)
    if args.budget < 1:
        raise ValueError(f"--budget must be a whole number of tokens >= 1, got {args.budget}")
    # As for query: every query-stage parameter given applies (the rest come from the hierarchy).
    overrides = query_overrides(given_values(args.config, args.set), with_settings=True)
    if args.text is not None and not args.queries:
        check_query(args.text)
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
                roles=args.role,
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
            files = ", ".join(f"{count} {status}" for status, count in sorted(repository["files"].items()))
            print(
                f"repository {repository['name']} ({repository['root']}): {repository['leaves']} leaves; "
                f"files: {files or 'none'}; model {repository['embedding_model']}"
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
    try:
        from hsc.explore.report import build_report
    except ImportError as error:
        raise SystemExit(f"hsc: the report draws with plotly: pip install 'hsc[report]' ({error})") from None

    _, settings = _configure(args)
    with _open(args, settings) as index:
        hierarchy_id = _hierarchy_id(index, args) or index.default_hierarchy(_repository_id(index, args))
        page = build_report(index, hierarchy_id, args.query or None)
    Path(args.out).write_text(page, encoding="utf-8")
    print(f"wrote {args.out} ({len(page) / 1e6:.1f} MB, opens offline)")
    return 0


def command_app(args: argparse.Namespace) -> int:
    from hsc.app.launch import run_app

    return run_app(args.repo, args.db, args.port, args.host)


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


COMMANDS: dict[str, cli_arguments.Command] = {
    "index": command_index,
    "build": command_build,
    "query": command_query,
    "context": command_context,
    "stats": command_stats,
    "export": command_export,
    "watch": command_watch,
    "mcp": command_mcp,
    "report": command_report,
    "app": command_app,
    "params": command_params,
    "bench": command_bench,
}


def build_parser() -> argparse.ArgumentParser:
    return cli_arguments.build_parser(COMMANDS, __doc__ or "")


def _interrupt(signal_number: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signal_number}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("index", "watch"):
        # SIGTERM (a service manager, `kill`) stops a run as Ctrl-C does: what is finished is kept.
        signal.signal(signal.SIGTERM, _interrupt)
    if args.command in ("query", "context") and args.queries:
        args.json = True  # a batch always answers in JSON lines
    try:
        return int(args.run(args))
    # TimeoutError is an OSError, but no database's: said as it is, not as the database's fault.
    except (ValueError, FileNotFoundError, NotADirectoryError, KeyError, RuntimeError, TimeoutError) as error:
        print(f"hsc: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before or after a run's own handling (loading, opening)
        print("hsc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `head`) has gone; stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (sqlite3.Error, OSError) as error:  # a database error outside Store's own translation
        where = getattr(args, "database", None) or "the database"
        print(f"hsc: {where}: {explain(error, path=getattr(args, 'database', None))}", file=sys.stderr)
        return 2
