"""The context pack wherever a user meets it: the CLI, the MCP tool (the SDK's
own client over stdio, a real ``python -m hsc mcp`` process), the LangChain and
LlamaIndex retrievers (run by langchain-core and llama-index-core) all give the
spans :meth:`hsc.Index.context` gives for the same query and budget."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLE_REPOS
from extras import require

require("mcp", "mcp")
require("langchain_core", "langchain")
require("llama_index.core", "llamaindex")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from llama_index.core.schema import MetadataMode  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from hsc import Index  # noqa: E402
from hsc.integrations import langchain, llamaindex  # noqa: E402
from hsc.integrations.tools import CodeSearch, ToolInputError  # noqa: E402
from hsc.search.context import ContextPack, ContextSpan  # noqa: E402

QUERY = "render the stock report as a table"
BUDGET = 1000  # room for hits and what they need, too little for everything: the budget binds
TIMEOUT = 300.0


def _span_key(span: ContextSpan) -> tuple:
    return (span.path, span.start_line, span.end_line, span.role, span.tokens, span.reason)


def _metadata_key(meta: dict) -> tuple:
    return tuple(meta[name] for name in ("path", "start_line", "end_line", "role", "tokens", "reason"))


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> tuple[Path, Path, ContextPack]:
    """inventory_py indexed into its own database with the encoder the CLI and the
    server load (none given), and the pack of QUERY from the library itself."""
    root = tmp_path_factory.mktemp("context-surfaces")
    repo = root / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", repo)
    database = root / "index.db"
    with Index.open(database) as index:
        index.index(repo)
        pack = index.context(QUERY, BUDGET)
    return database, repo, pack


def test_the_library_pack_is_a_real_one(packed) -> None:
    """What the other tests compare with: hits and what they need, within the budget."""
    _, _, pack = packed
    assert 0 < pack.tokens <= BUDGET and len(pack.spans) >= 3
    roles = {span.role for span in pack.spans}
    assert "hit" in roles and len(roles) >= 2
    assert any(s.path == "inventory/reporting.py" and "def render_stock_report" in s.text for s in pack.spans)
    # The best hit is one piece of a split function: the pack holds that piece and the rest of the
    # function as one span, never a row of touching fragments.
    spans = list(pack.spans)
    for before, after in zip(spans, spans[1:]):
        touching = before.path == after.path and before.end_line + 1 == after.start_line
        assert not (touching and (before.role, before.reason) == (after.role, after.reason)), (before, after)
    assert any(s.role == "definition" and "render_stock_report" in s.reason for s in spans)


def test_the_cli_gives_the_same_pack(packed) -> None:
    database, _, pack = packed
    command = ["context", QUERY, "--budget", str(BUDGET), "--json", "--db", str(database)]
    done = subprocess.run(
        [sys.executable, "-m", "hsc", *command],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == pack.to_json()


async def _get_context(database: Path, arguments: dict) -> tuple[list, dict]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hsc", "mcp", "--db", str(database)],
        cwd=str(ROOT),
        env={"HF_HUB_OFFLINE": "1"},
    )
    async with Client(server, read_timeout_seconds=TIMEOUT) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("get_context", arguments)
        assert not result.is_error, result.content
        return tools, result.structured_content


def test_the_mcp_tool_gives_the_same_pack(packed) -> None:
    database, repo, pack = packed
    tools, answer = asyncio.run(_get_context(database, {"query": QUERY, "budget_tokens": BUDGET}))
    tool = next(t for t in tools if t.name == "get_context")
    # An agent is told when to prefer it to search_code, and what it may pass.
    assert "search_code" in tool.description and "budget" in tool.description
    assert {"query", "budget_tokens", "path_prefix", "language"} <= set(tool.input_schema["properties"])
    assert answer.pop("repository") == str(repo.resolve())
    assert answer == pack.to_json()


def test_the_langchain_retriever_gives_the_same_spans(packed) -> None:
    database, _, pack = packed
    with Index.open(database) as index:
        retriever = langchain.HscRetriever(index=index, budget_tokens=BUDGET)
        documents = retriever.invoke(QUERY)

        def prompt(documents: list[Document]) -> str:
            return "\n".join(f"# {d.metadata['role']} {d.id}\n{d.page_content}" for d in documents)

        text = (retriever | RunnableLambda(prompt)).invoke(QUERY)
    assert [_metadata_key(d.metadata) for d in documents] == [_span_key(s) for s in pack.spans]
    assert [d.page_content for d in documents] == [s.text for s in pack.spans]
    assert all(d.metadata["budget"] == BUDGET and d.metadata["mode"] == pack.mode for d in documents)
    assert len({d.id for d in documents}) == len(documents)
    assert sum(d.metadata["tokens"] for d in documents) == pack.tokens <= BUDGET
    assert "# hit inventory/reporting.py:" in text


def test_the_llamaindex_retriever_gives_the_same_spans(packed) -> None:
    database, _, pack = packed
    with Index.open(database) as index:
        nodes = llamaindex.HscRetriever(index, budget_tokens=BUDGET).retrieve(QUERY)
    assert [_metadata_key(n.node.metadata) for n in nodes] == [_span_key(s) for s in pack.spans]
    assert [n.node.text for n in nodes] == [s.text for s in pack.spans]
    assert [n.score for n in nodes] == [s.score for s in pack.spans]
    hit = next(n.node for n in nodes if n.node.metadata["role"] == "hit")
    shown = hit.get_content(metadata_mode=MetadataMode.LLM)  # what the LLM reads: where and why, not ids
    assert "path: inventory/" in shown and "role: hit" in shown and "leaf_ids" not in shown
    with pytest.raises(ValueError, match="budget_tokens"):
        llamaindex.HscRetriever(index, budget_tokens=0)


def test_the_tool_asks_which_repository_and_filters(indexed_samples) -> None:
    """Several repositories in one database: a pack fills one budget from one of them."""
    index, root, _ = indexed_samples
    tools = CodeSearch(index)
    with pytest.raises(ToolInputError, match="3 repositories are indexed; say which with repository"):
        tools.context(QUERY)
    with pytest.raises(ToolInputError, match="between 1 and"):
        tools.context(QUERY, budget_tokens=0, repository=str(root / "inventory_py"))
    with pytest.raises(ToolInputError, match="the query is empty"):
        tools.context("  ", repository=str(root / "inventory_py"))
    with pytest.raises(ToolInputError, match="not indexed yet"):
        tools.context(QUERY, repository=str(root / "elsewhere"))

    inventory = tools.context(QUERY, 1024, repository=str(root / "inventory_py"))
    assert inventory["repository"] == str((root / "inventory_py").resolve())
    assert inventory["tokens"] <= 1024 and inventory["spans"][0]["path"].startswith("inventory/")
    hits = [s for s in inventory["spans"] if s["role"] == "hit"]
    assert any(s["path"] == "inventory/reporting.py" for s in hits)
    inventory_root = str(root / "inventory_py")
    only_models = tools.context(QUERY, 1024, path_prefix="./inventory/models", repository=inventory_root)
    assert {s["path"] for s in only_models["spans"] if s["role"] == "hit"} == {"inventory/models.py"}
