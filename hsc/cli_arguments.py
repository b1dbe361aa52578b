"""The command line's arguments: every command, its options and their help.

The handlers are hsc.cli's ``command_*`` functions, passed in by name: what a command accepts is
read here, what it does there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from hsc import __version__
from hsc.bench import add_arguments as add_bench_arguments
from hsc.encoder.cli import add_encoder_arguments
from hsc.params import EXECUTORS, RETRIEVAL_MODES, Parameters
from hsc.search.regions import ANSWER_LEVELS

Command = Callable[[argparse.Namespace], int]

ROLE_HELP = (
    "only files of these roles: code, test, docs, changelog, example, config, generated "
    "(comma-separated; default every file)"
)


def _roles(text: str) -> tuple[str, ...] | None:
    from hsc.chunk.roles import parse_roles

    try:
        return parse_roles(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


EXCLUDE_HELP = (
    "leave out paths matching this gitignore-style pattern (repeatable; besides the repository's "
    ".hscignore); kept with the repository for later runs, which --exclude replaces ('' clears them)"
)
REPO_HELP = "repository name (as `stats` prints it) or root folder, when the database holds several"


def _add_mode(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument(
        "--mode",
        choices=RETRIEVAL_MODES,
        default=None,
        help=f"{what} (default: the retrieval_mode parameter, {Parameters().retrieval_mode})",
    )


def build_parser(commands: Mapping[str, Command], description: str) -> argparse.ArgumentParser:
    """The command line's parser; each command runs ``commands[name]`` (the handlers live in hsc.cli)."""
    # `hsc ...` when run as the installed command, `python -m hsc ...` otherwise.
    prog = "hsc" if Path(sys.argv[0]).name == "hsc" else "python -m hsc"
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"hsc {__version__}")
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

    index = add("index", "parse, chunk and embed a repository, or several into one database (incremental)")
    index.add_argument(
        "path",
        nargs="*",
        help="repository folders, each a repository of its own in the database (several: the default "
        "database is the current folder's .hsc/index.db)",
    )
    index.add_argument("--manifest", metavar="FILE", help="more repository folders, one a line")
    index.add_argument("--json", action="store_true")
    index.add_argument("--quiet", action="store_true", help="no progress on stderr")
    index.add_argument("--exclude", action="append", metavar="GLOB", help=EXCLUDE_HELP)
    index.add_argument(
        "--executor",
        choices=EXECUTORS,
        help="where files are cut and embedded: this machine's processes (local, the default) or a Ray "
        "cluster's nodes (ray: pip install 'hsc[ray]'; docs/ray.md); the executor setting",
    )
    index.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster to use (as `ray start` prints it); without it a local Ray is started",
    )
    index.set_defaults(run=commands["index"])

    build = add("build", "build a named hierarchy from cached vectors (no parsing, no embedding)")
    build.add_argument("--name", default="default")
    build.add_argument("--repo", help=REPO_HELP)
    build.add_argument("--json", action="store_true")
    build.add_argument("--quiet", action="store_true")
    build.set_defaults(run=commands["build"])

    query = add("query", f"retrieval ({Parameters().retrieval_mode} unless --mode or --flat says otherwise)")
    query.add_argument("text", nargs="?")
    query.add_argument("--queries", metavar="FILE", help="one query a line ('-' for stdin); JSON lines out")
    _add_mode(query, "retrieval mode")
    query.add_argument(
        "--flat", action="store_true", help="exact search over all leaves (short for --mode flat)"
    )
    query.add_argument(
        "--apart", action="store_true", help="pieces of one split definition as separate results"
    )
    query.add_argument("--role", type=_roles, metavar="ROLE,...", help=ROLE_HELP)
    query.add_argument("--hierarchy", help="name of the hierarchy (default: 'default')")
    query.add_argument("--repo", help=REPO_HELP)
    query.add_argument("--json", action="store_true")
    query.add_argument(
        "--regions", action="store_true", help="also the ranked regions: files and definitions (best first)"
    )
    query.add_argument("--files", action="store_true", help="also the files ranked as files (best first)")
    query.add_argument(
        "--level",
        choices=ANSWER_LEVELS,
        default="any",
        help="with --regions: 'definition' draws them from definitions alone, 'type' from types alone, "
        "nested ones too (a question about a class)",
    )
    query.set_defaults(run=commands["query"])

    context = add("context", "at most --budget tokens of code for a query: hits and what they depend on")
    context.add_argument("text", nargs="?")
    context.add_argument("--budget", type=int, required=True, metavar="N", help="cl100k tokens at most")
    context.add_argument("--queries", metavar="FILE", help="one query a line ('-' for stdin); JSON lines out")
    _add_mode(context, "how hits are ranked")
    context.add_argument("--role", type=_roles, metavar="ROLE,...", help=ROLE_HELP)
    context.add_argument("--hierarchy", help="name of the hierarchy (default: 'default')")
    context.add_argument("--repo", help="repository path, when the database holds several")
    context.add_argument("--json", action="store_true", help="one JSON object: spans, tokens, text")
    context.set_defaults(run=commands["context"])

    stats = add("stats", "what the index holds")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(run=commands["stats"])

    export = add("export", "all nodes of a hierarchy as JSON lines")
    export.add_argument("--format", choices=["jsonl"], default="jsonl")
    export.add_argument("--hierarchy")
    export.add_argument("--repo", help=REPO_HELP)
    export.set_defaults(run=commands["export"])

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
    watch.set_defaults(run=commands["watch"])

    mcp = add("mcp", "serve the index to coding agents over the Model Context Protocol", settable=False)
    mcp.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="streamable HTTP on 127.0.0.1:PORT (0: any free port, printed) instead of stdio",
    )
    mcp.set_defaults(run=commands["mcp"])

    report = add("report", "a one-page HTML report of a parameter set, readable offline", settable=False)
    report.add_argument("--out", required=True, metavar="FILE.html")
    report.add_argument("--hierarchy", help="name of the parameter set (default: 'default')")
    report.add_argument("--repo", help=REPO_HELP)
    report.add_argument(
        "--query",
        action="append",
        metavar="TEXT",
        help="a sample query (repeatable; default: suggested ones)",
    )
    report.set_defaults(run=commands["report"])

    app = sub.add_parser(
        "app",
        help="the app in a browser: tune the parameters and see every stage (needs the app extra)",
        description="Start the Streamlit app on this machine. At its first start it indexes REPO (the "
        "bundled sample when none is given) into its database.",
    )
    app.add_argument("repo", nargs="?", metavar="REPO", help="folder to index at the first start")
    app.add_argument("--db", help="the app's database (default: .hsc/app.db here)")
    app.add_argument("--port", type=int, help="port to serve on (default: Streamlit's, 8501)")
    app.add_argument("--host", help="address to serve on (default: 127.0.0.1, this machine only)")
    app.set_defaults(run=commands["app"])

    params = sub.add_parser("params", help="list parameters and settings with defaults and help")
    params.set_defaults(run=commands["params"])

    encoder = sub.add_parser("encoder", help="tune the encoder on doc → code pairs (docs/encoders.md)")
    add_encoder_arguments(encoder)

    bench = sub.add_parser("bench", help="performance and quality figures (docs/performance.md)")
    add_bench_arguments(bench)
    bench.set_defaults(run=commands["bench"])
    return parser
