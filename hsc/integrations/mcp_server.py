"""hsc as a Model Context Protocol server (``python -m hsc mcp``), on the
official ``mcp`` SDK: stdio by default, streamable HTTP on 127.0.0.1 with
``--http PORT``.

The tools are thin: :class:`hsc.integrations.tools.CodeSearch` does the work.
A bad argument comes back as a tool error whose message says what to do; the
server keeps running.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from hsc.api import Index
from hsc.index.pipeline import Progress
from hsc.integrations.tools import (
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MAX_LIMIT,
    CodeSearch,
    ToolInputError,
)
from hsc.params import RETRIEVAL_MODES, Parameters
from hsc.search.regions import ANSWER_LEVELS

INSTRUCTIONS = """\
hsc searches code by meaning. It cuts each file into leaves (functions, methods,
classes, blocks) along its syntax tree, groups neighbouring leaves by topic, and
keeps one node per file. Call index_repository once per repository (later calls
and sync only re-read changed files). To read or change code, call get_context:
the code that answers the query plus the definitions it uses, within a token
budget, ready for a prompt. To survey candidates, call search_code with a
description of the code you need; each hit carries its enclosing group's summary.
To find which files and definitions to open first, call locate (level "type" when
you look for a class or another type).
get_node walks up (parent) and down (children) from any id. index_status tells
what is indexed and what has changed on disk since."""

ModeName = Literal[RETRIEVAL_MODES]  # type: ignore[valid-type]  # read from hsc.search.two_stage, not listed here
LocateLevel = Literal[ANSWER_LEVELS]  # type: ignore[valid-type]  # read from hsc.search.regions
DEFAULT_MODE = Parameters().retrieval_mode
MODE_HELP = (
    f"Retrieval mode, one of {', '.join(RETRIEVAL_MODES)} (default {DEFAULT_MODE}): two-stage ranks topic "
    "groups, then their leaves; hybrid does the same and adds the leaves that share the query's words "
    "(BM25), fusing both scores; flat and hybrid-flat rank every leaf exactly"
)
PROGRESS_INTERVAL = 0.25  # seconds between progress notifications within one stage


def _run(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return call()
    except ToolInputError as error:
        raise ToolError(str(error)) from None
    except (FileNotFoundError, NotADirectoryError, ValueError) as error:
        raise ToolError(str(error)) from None


async def _with_progress(
    context: Context, work: Callable[[Callable[[Progress], None]], dict[str, Any]]
) -> dict[str, Any]:
    """Run ``work`` in a worker thread, relaying its :class:`Progress` events as
    MCP progress notifications (a monotonic count; the message says the stage)."""
    sent = {"count": 0, "at": 0.0, "stage": ""}

    def relay(event: Progress) -> None:
        now = time.monotonic()
        last_of_stage = event.total and event.done == event.total
        if event.stage == sent["stage"] and not last_of_stage and now - sent["at"] < PROGRESS_INTERVAL:
            return
        sent.update(count=sent["count"] + 1, at=now, stage=event.stage)
        total = f"/{event.total}" if event.total else ""
        message = f"{event.stage} {event.done}{total} {event.message}".strip()
        anyio.from_thread.run(context.report_progress, float(sent["count"]), None, message)

    return await anyio.to_thread.run_sync(lambda: _run(partial(work, relay)))


ROLES_HELP = (
    "Only files of these roles, comma-separated: code, test, docs, changelog, example, config, "
    "generated; 'all' for every file. Default: code (every file when the repository has no code)"
)


def build_server(search: CodeSearch) -> MCPServer:
    server = MCPServer("hsc", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool()
    async def index_repository(
        path: Annotated[
            str, Field(description="The repository's top folder (absolute, or relative to the server)")
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        """Index a code repository, or bring its index up to date. Incremental:
        only new or changed files are parsed and embedded, so calling it again is
        cheap. Reports file and leaf counts, how many leaves were embedded, and the
        seconds taken; skipped files are listed with their reasons. Progress is sent
        as MCP progress notifications. The first run on a large repository takes
        minutes (about 50 leaves a second on two cores)."""
        return await _with_progress(ctx, lambda relay: search.index_repository(path, progress=relay))

    @server.tool()
    def search_code(
        query: Annotated[
            str,
            Field(
                description="What the code does, in words or code, e.g. 'retry an HTTP request with backoff'"
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="How many code chunks to return")] = 10,
        mode: Annotated[ModeName, Field(description=MODE_HELP)] = DEFAULT_MODE,
        path_prefix: Annotated[
            str | None,
            Field(description="Only files under this path, relative to the repository, e.g. 'src/api/'"),
        ] = None,
        language: Annotated[
            str | None,
            Field(description="Only this language, e.g. 'python', 'go', 'typescript' (see index_status)"),
        ] = None,
        repository: Annotated[
            str | None, Field(description="Only this indexed repository (its folder); default: all of them")
        ] = None,
        roles: Annotated[str | None, Field(description=ROLES_HELP)] = None,
    ) -> dict[str, Any]:
        """Find code by meaning across the indexed repositories. Each result is one
        chunk (a function, method, class or block) with its repository, path, 1-based
        inclusive start_line/end_line, scope (e.g. 'pkg.module.Class.method'),
        language, similarity score (higher is closer), its code, and its parent
        group (the neighbouring chunks on the same topic) with the group's lines and
        summary, so the surrounding context comes without a second call. Pass a
        result's id or its parent's id to get_node to walk the hierarchy."""
        return _run(lambda: search.search(query, limit, mode, path_prefix, language, repository, roles))

    @server.tool()
    def locate(
        query: Annotated[
            str,
            Field(description="What you are looking for, in words, e.g. 'sign the session cookie'"),
        ],
        limit: Annotated[
            int, Field(ge=1, le=MAX_LIMIT, description="How many files and regions to return")
        ] = 10,
        repository: Annotated[
            str | None, Field(description="Only this indexed repository (its folder); default: all of them")
        ] = None,
        level: Annotated[
            LocateLevel,
            Field(
                description="'type' when you look for a class, struct, interface or other type: 'regions' "
                "then lists types only, a nested one too; 'definition' for a definition as a whole "
                "(a class or a function): definitions only, not the files around them"
            ),
        ] = "any",
    ) -> dict[str, Any]:
        """The files and definitions to open first for a query, best first. 'files': every
        file ranked as a whole (its best-matching code and its own pooled vector); for a
        question about a module, the file to open. 'regions': files and top-level definitions
        (a class with its methods, a function) with their level, path, 1-based inclusive
        start_line/end_line, qualified name and score; with level 'definition', definitions
        only; with level 'type', types only. Use it to decide where to read before calling
        get_context or search_code."""
        return _run(lambda: search.locate(query, limit, repository, level))

    @server.tool()
    def get_context(
        query: Annotated[
            str,
            Field(description="The code you need to understand or change, in words or code"),
        ],
        budget_tokens: Annotated[
            int,
            Field(ge=1, le=MAX_BUDGET, description="At most this many tokens of code (cl100k) in the answer"),
        ] = DEFAULT_BUDGET,
        path_prefix: Annotated[
            str | None,
            Field(description="Only hits under this path, relative to the repository, e.g. 'src/api/'"),
        ] = None,
        language: Annotated[
            str | None,
            Field(description="Only hits in this language, e.g. 'python', 'go' (see index_status)"),
        ] = None,
        repository: Annotated[
            str | None,
            Field(description="The indexed repository (its folder); needed only when several are indexed"),
        ] = None,
        roles: Annotated[str | None, Field(description=ROLES_HELP)] = None,
    ) -> dict[str, Any]:
        """The code a model needs to understand or change what the query describes,
        within budget_tokens: the best-matching code (role 'hit'), the rest of a
        definition a hit is one piece of ('definition'), the functions, classes
        (header, fields, constructor) and methods a hit uses, resolved through its
        imports ('uses'), and a signature with its doc's first sentence where the whole
        does not fit ('outline'). Each span has its path, 1-based inclusive start_line and
        end_line, role, token count and the reason it is there (which span pulled it
        in, through which name); 'text' is the whole pack for a prompt, a header per
        file, line numbers, gaps marked. Prefer get_context when you will read or
        edit the code: one call, the dependencies included, a known size. Prefer
        search_code to survey candidates with their scores or to walk the hierarchy."""
        return _run(lambda: search.context(query, budget_tokens, path_prefix, language, repository, roles))

    @server.tool()
    def get_node(
        id: Annotated[
            str, Field(description="A node id from search_code or get_node: 'leaf:N', 'mid:N' or 'top:N'")
        ],
    ) -> dict[str, Any]:
        """One node of the hierarchy with its parent and children. Levels: 'leaf'
        (a chunk of code; its code is included), 'mid' (a group of neighbouring
        leaves on one topic: its summary, or its code when short), 'top' (a whole
        file: its summary; children are its groups). Walk up with parent.id and
        down with children[].id."""
        return _run(lambda: search.node(id))

    @server.tool()
    def index_status() -> dict[str, Any]:
        """What the index holds: each repository's folder, when it was last indexed
        (UTC), file and leaf counts, languages, and the files added, modified or
        removed on disk since (call sync to take them in)."""
        return _run(search.status)

    @server.tool()
    async def sync(
        path: Annotated[str, Field(description="The folder of a repository that is already indexed")],
        ctx: Context,
    ) -> dict[str, Any]:
        """Re-index only what changed on disk since the last index of this
        repository: lists the added, modified and removed files, then re-reads just
        those. Errors if the repository has not been indexed yet (use
        index_repository for that)."""
        return await _with_progress(ctx, lambda relay: search.sync(path, progress=relay))

    return server


def _free_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    # Listening before the address is printed: a client that connects at once waits in the backlog
    # until the server accepts, instead of being refused while the app is still being built.
    sock.listen(128)
    return sock


async def _serve_http(server: MCPServer, port: int) -> None:
    import uvicorn

    sock = _free_socket(port)  # port 0: the system picks a free one, printed below
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    address = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    print(f"hsc mcp: streamable HTTP at {address}", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def serve(database: Path, http_port: int | None = None) -> None:
    """Serve the index at ``database`` until the client hangs up (stdio) or the
    process is stopped (HTTP)."""
    with Index.open(database) as index:
        server = build_server(CodeSearch(index))
        if http_port is None:
            server.run("stdio")
        else:
            anyio.run(_serve_http, server, http_port)
