"""A summariser that falls back says so once, with the reason, on the
command line and in what the library returns to the app; a hung Ollama
costs one timeout per run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from hsc.api import Index
from hsc.params import Settings

try:
    from fake_ollama import FakeOllama, free_port
except ImportError:  # pragma: no cover
    from tests.fake_ollama import FakeOllama, free_port


def tiny_repository(root: Path) -> Path:
    root.mkdir()
    (root / "money.py").write_text("def add_tax(price, rate):\n    return round(price * (1 + rate), 2)\n")
    (root / "text.py").write_text("def shout(words):\n    return words.upper() + '!'\n")
    (root / "files.py").write_text("def read_lines(path):\n    return open(path).read().splitlines()\n")
    return root


def test_a_hung_ollama_costs_one_timeout_and_the_cli_says_so_once(tmp_path: Path) -> None:
    repo = tiny_repository(tmp_path / "repo")
    with FakeOllama(delay=20.0) as hung:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        args = ["index", str(repo), "--db", str(tmp_path / "index.db"), "--quiet", "--json"]
        args += [
            "--set",
            "summariser=ollama",
            "--set",
            f"ollama_host={hung.url}",
            "--set",
            "ollama_timeout=0.5",
        ]
        done = subprocess.run(
            [sys.executable, "-m", "hsc", *args], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        assert len(hung.generation_requests()) == 1  # three documents to summarise, one attempt
        url = hung.url
    notes = [line for line in done.stderr.splitlines() if line.startswith("hsc: note:")]
    expected = (
        f"hsc: note: summaries: 3 summaries by the fallback: Ollama at {url} did not answer within "
        "0.5 s; used the embedded digest and will not ask it again in this run"
    )
    assert notes == [expected]
    assert json.loads(done.stdout)["summariser_note"] == expected.removeprefix("hsc: note: ")


def test_the_library_reports_the_fallback_for_the_app(tmp_path: Path, embedder) -> None:
    repo = tiny_repository(tmp_path / "repo")
    dead = f"http://127.0.0.1:{free_port()}"
    settings = Settings(summariser="auto", ollama_host=dead)
    with Index.open(tmp_path / "index.db", settings=settings, embedder=embedder) as index:
        report = index.index(repo)
        assert report.summariser_note == (
            f"summaries by the embedded digest: Ollama at {dead} did not answer (connection refused)"
        )
        rebuilt = index.build(None, name="again")
        assert rebuilt["summariser_note"] == report.summariser_note
    with Index.open(
        tmp_path / "quiet.db", settings=Settings(summariser="digest"), embedder=embedder
    ) as index:
        assert index.index(repo).summariser_note == ""  # the digest was asked for: nothing to say
