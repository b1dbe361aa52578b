"""The integration examples of the docs (docs/integrations.md) and the README's quickstarts run as
written, from a copy of this folder."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from extras import require

for module, extra in (("mcp", "mcp"), ("langchain_core", "langchain"), ("llama_index.core", "llamaindex")):
    require(module, extra)

from hsc.cli import build_parser  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _blocks(language: str, page: str = "docs/integrations.md") -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The snippets run from the top folder: hsc importable, the samples beside it."""
    # The package's parts linked, its sample copied: the samples now live inside the package, and a
    # link to the whole package would index (and write .hsc/ into) the checkout's own sample.
    for part in (ROOT / "hsc").iterdir():
        if part.name != "samples":
            (tmp_path / "hsc" / part.name).parent.mkdir(exist_ok=True)
            (tmp_path / "hsc" / part.name).symlink_to(part)
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", tmp_path / "hsc" / "samples" / "inventory_py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_python_snippets_run_as_written(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snippets = _blocks("python")
    assert len(snippets) == 3  # MCP client, LangChain, LlamaIndex
    outputs = []
    for snippet in snippets:
        exec(compile(snippet, "integrations.md", "exec"), {"__name__": "__main__"})
        outputs.append(capsys.readouterr().out)
    mcp_out, langchain_out, llamaindex_out = outputs
    assert mcp_out.startswith("inventory/pricing.py ") and "apply_discount mid:" in mcp_out
    assert "inventory.pricing.apply_discount" in langchain_out.splitlines()[0]
    assert "inventory/pricing.py:" in langchain_out and "documents: files, groups and leaves" in langchain_out
    assert any(line.startswith("hit inventory/pricing.py:") for line in langchain_out.splitlines())
    header, *hits = llamaindex_out.splitlines()
    assert all(f"'{level}'" in header for level in ("leaf", "mid", "top"))
    # The discount functions' group, and then their file, are merged in place of the leaves found.
    assert hits and hits[0].startswith(("mid:", "top:")) and "inventory/pricing.py" in hits[0]


def test_agent_configurations_start_this_server() -> None:
    configurations = [json.loads(block) for block in _blocks("json")]
    assert len(configurations) == 2  # Claude Code, Cursor
    for configuration in configurations:
        server = configuration["mcpServers"]["hsc"]
        assert server["command"].endswith("/bin/hsc")
        args = build_parser().parse_args(server["args"])
        assert args.command == "mcp" and args.db == ".hsc/index.db" and args.http is None


def test_the_readme_quickstarts_run_as_written(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snippets = _blocks("python", "README.md")
    assert len(snippets) == 3  # Python, LangChain, LlamaIndex
    outputs = []
    for snippet in snippets:
        exec(compile(snippet, "README.md", "exec"), {"__name__": "__main__"})
        outputs.append(capsys.readouterr().out.splitlines())
    python, langchain, llamaindex = outputs
    assert (
        python[0].startswith("inventory/pricing.py ") and "inventory.pricing.apply_discount mid:" in python[0]
    )
    tokens, _, spans = python[1].partition(" tokens in ")
    assert 0 < int(tokens) <= 1024 and int(spans.split()[0]) > 0
    assert langchain[0].startswith("inventory/pricing.py 73 inventory.pricing.apply_discount")
    assert llamaindex[0].startswith("inventory/pricing.py inventory.pricing.apply_discount")


def test_the_readme_agent_configuration_starts_this_server() -> None:
    (configuration,) = [json.loads(block) for block in _blocks("json", "README.md")]
    server = configuration["mcpServers"]["hsc"]
    assert server["command"].endswith("/bin/hsc")
    args = build_parser().parse_args(server["args"])
    assert args.command == "mcp" and args.db == ".hsc/index.db" and args.http is None
