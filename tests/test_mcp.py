"""The MCP server as an agent meets it: the official SDK's client talking to a
real ``python -m hsc mcp`` process, over stdio and over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from extras import require

require("mcp", "mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from hsc.params import RETRIEVAL_MODES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERVER_ENV = {"HF_HUB_OFFLINE": "1"}
TIMEOUT = 300.0

NEW_FUNCTION = '''

def parcel_shipping_weight(items, packaging_grams=250):
    """Total shipping weight of a parcel in grams: the items plus the box and padding."""
    return sum(item.weight_grams * item.quantity for item in items) + packaging_grams
'''


def _stdio(database: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hsc", "mcp", "--db", str(database)],
        cwd=str(ROOT),
        env=SERVER_ENV,
    )


async def _call(client: Client, tool: str, arguments: dict | None = None, **kwargs) -> dict:
    result = await client.call_tool(tool, arguments or {}, **kwargs)
    assert not result.is_error, result.content
    return result.structured_content


async def _error(client: Client, tool: str, arguments: dict) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


async def _agent_over_stdio(database: Path, repo: Path, elsewhere: Path) -> None:
    async with Client(_stdio(database), read_timeout_seconds=TIMEOUT) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {
            "index_repository",
            "search_code",
            "get_context",
            "get_node",
            "index_status",
            "sync",
            "locate",
        }
        assert all(len(tool.description or "") > 80 for tool in tools.values())
        assert tuple(tools["search_code"].input_schema["properties"]["mode"]["enum"]) == RETRIEVAL_MODES

        # Errors before anything is indexed: tool errors that say what to do.
        assert "index_repository" in await _error(client, "search_code", {"query": "discount"})
        assert "no such folder" in await _error(client, "index_repository", {"path": str(repo / "nope")})
        assert "not indexed yet" in await _error(client, "sync", {"path": str(elsewhere)})

        progress: list[tuple[float, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, message))

        report = await _call(client, "index_repository", {"path": str(repo)}, progress_callback=on_progress)
        assert report["files_parsed"] == report["files_seen"] > 0 and report["leaves_embedded"] > 0
        assert len(progress) >= 3 and [p for p, _ in progress] == sorted(p for p, _ in progress)
        assert any("files" in (m or "") for _, m in progress)

        status = await _call(client, "index_status")
        [entry] = status["repositories"]
        assert entry["root"] == str(repo.resolve()) and entry["changed_on_disk"]["count"] == 0
        assert "python" in entry["languages"]

        found = await _call(
            client, "search_code", {"query": "apply a percentage discount to a price", "limit": 3}
        )
        top = found["results"][0]
        assert top["scope"] == "inventory.pricing.apply_discount" and top["path"] == "inventory/pricing.py"
        assert "def apply_discount" in top["code"] and top["start_line"] < top["end_line"]
        # A group within maximum_merged_chunk_token_length has no summary (None); the key is always there.
        assert top["parent"]["id"].startswith("mid:") and "summary" in top["parent"]
        assert len(found["results"]) == 3
        same_group = [r for r in found["results"][1:] if r["parent"]["id"] == top["parent"]["id"]]
        assert all(r["parent"]["summary"] == "(the same group as rank 1)" for r in same_group)

        flat = await _call(client, "search_code", {"query": "parse a CSV row", "mode": "flat", "limit": 4})
        assert flat["mode"] == "flat" and len(flat["results"]) == 4
        assert all(
            r["parent"]["id"].startswith("mid:") and r["parent"]["score"] is None for r in flat["results"]
        )
        filtered = await _call(
            client,
            "search_code",
            {"query": "apply a discount", "path_prefix": "inventory/models", "limit": 2},
        )
        assert filtered["results"] and all(r["path"] == "inventory/models.py" for r in filtered["results"])
        assert "two-stage" in await _error(client, "search_code", {"query": "x", "mode": "bogus"})

        # The files and definitions to open first: the pricing module and its discount function.
        located = await _call(
            client, "locate", {"query": "apply a percentage discount to a price", "limit": 4}
        )
        assert located["files"][0]["path"] == "inventory/pricing.py" and len(located["files"]) == 4
        assert all(f["level"] == "file" and f["repository"] == str(repo.resolve()) for f in located["files"])
        assert len(located["regions"]) == 4 and {r["level"] for r in located["regions"]} <= {
            "file",
            "definition",
        }
        assert any(r["name"] == "inventory.pricing.apply_discount" for r in located["regions"])
        assert [r["rank"] for r in located["regions"]] == [1, 2, 3, 4]
        assert "empty" in await _error(client, "locate", {"query": " "})
        # Asked at the definition level: the same query's regions are definitions only, the
        # discount function among them, the file ranking unchanged.
        defined = await _call(
            client,
            "locate",
            {"query": "apply a percentage discount to a price", "limit": 4, "level": "definition"},
        )
        assert "file" in {r["level"] for r in located["regions"]}
        assert defined["regions"] and {r["level"] for r in defined["regions"]} == {"definition"}
        assert any(r["name"] == "inventory.pricing.apply_discount" for r in defined["regions"])
        assert defined["files"] == located["files"]
        # At the type level: the sample's classes alone (its decorated dataclasses too).
        typed = await _call(
            client, "locate", {"query": "apply a percentage discount to a price", "limit": 4, "level": "type"}
        )
        classes = {
            f"{c}"
            for c in re.findall(r"^class (\w+)", "".join(p.read_text() for p in repo.rglob("*.py")), re.M)
        }
        assert typed["regions"] and all(r["name"].rsplit(".", 1)[-1] in classes for r in typed["regions"])
        assert "level" in await _error(client, "locate", {"query": "x", "level": "folder"})

        # The context at a budget: the hit and what it needs, never over the budget.
        asked = {"query": "apply a percentage discount", "budget_tokens": 512}
        pack = await _call(client, "get_context", asked)
        assert pack["repository"] == str(repo.resolve()) and 0 < pack["tokens"] <= 512
        assert any(s["role"] == "hit" and s["path"] == "inventory/pricing.py" for s in pack["spans"])
        assert "### inventory/pricing.py" in pack["text"]
        assert "budget_tokens" in await _error(client, "get_context", {"query": "x", "budget_tokens": 0})

        # Walk: leaf -> its group -> its file, and back down.
        leaf = await _call(client, "get_node", {"id": top["id"]})
        assert leaf["level"] == "leaf" and leaf["parent"]["id"] == top["parent"]["id"]
        group = await _call(client, "get_node", {"id": leaf["parent"]["id"]})
        assert top["id"] in [child["id"] for child in group["children"]]
        document = await _call(client, "get_node", {"id": group["parent"]["id"]})
        assert document["level"] == "top" and group["id"] in [c["id"] for c in document["children"]]
        assert "leaf:N" in await _error(client, "get_node", {"id": "function apply_discount"})
        assert "no node" in await _error(client, "get_node", {"id": "leaf:987654"})

        # Change a file on disk: status sees it, sync re-reads only it, search finds it.
        models = repo / "inventory" / "models.py"
        models.write_text(models.read_text(encoding="utf-8") + NEW_FUNCTION, encoding="utf-8")
        status = await _call(client, "index_status")
        assert status["repositories"][0]["changed_on_disk"]["modified"] == ["inventory/models.py"]
        synced = await _call(client, "sync", {"path": str(repo)})
        assert synced["reindexed"] and synced["changes"]["modified"] == ["inventory/models.py"]
        assert synced["files_parsed"] == 1 and synced["files_unchanged"] == synced["files_seen"] - 1
        found = await _call(
            client, "search_code", {"query": "shipping weight of a parcel in grams", "limit": 1}
        )
        assert found["results"][0]["scope"] == "inventory.models.parcel_shipping_weight"
        again = await _call(client, "sync", {"path": str(repo)})
        assert not again["reindexed"] and again["changes"]["count"] == 0


def test_mcp_over_stdio(tmp_path: Path) -> None:
    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    elsewhere = tmp_path / "not_indexed"
    elsewhere.mkdir()
    asyncio.run(_agent_over_stdio(tmp_path / "db" / "index.db", repo, elsewhere))


def test_mcp_over_http(tmp_path: Path) -> None:
    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    for path in repo.rglob("*.py"):  # a small repository: this test is about the transport
        if path.name not in ("pricing.py", "__init__.py"):
            path.unlink()
    database = tmp_path / "index.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "hsc", "mcp", "--http", "0", "--db", str(database)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stderr.readline()
        address = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        assert address, line

        async def agent_over_http() -> None:
            async with Client(address.group(0), read_timeout_seconds=TIMEOUT) as client:
                report = await _call(client, "index_repository", {"path": str(repo)})
                assert report["files_seen"] == 3  # README.md, __init__.py, pricing.py
                found = await _call(
                    client, "search_code", {"query": "take a percentage off a price", "limit": 1}
                )
                assert found["results"][0]["scope"] == "inventory.pricing.apply_discount"
                status = await _call(client, "index_status")
                assert json.dumps(status).count(str(repo.resolve())) == 1

        asyncio.run(agent_over_http())
    finally:
        process.terminate()
        process.wait(timeout=30)
