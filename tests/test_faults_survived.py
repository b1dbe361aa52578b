"""kill -9 at any point, then a rerun, ends exactly where an uninterrupted
run ends; readers during indexing never see "database is locked"."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT
from test_database_faults import canonical_dump, integrity

from hsc.api import Index
from hsc.params import Parameters, Settings

SOURCES = {
    "billing/tax.py": "def add_tax(price, rate):\n    # Price with tax.\n"
    "    return round(price * (1 + rate), 2)\n",
    "billing/discount.py": "def discount(price, percent):\n    return price * (100 - percent) / 100\n",
    "text/shout.py": "def shout(words):\n    return words.upper() + '!'\n\n\ndef whisper(words):\n"
    "    return words.lower() + '...'\n",
    "io/lines.py": "def read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n",
    "net/ping.go": 'package net\n\nfunc Ping(host string) bool {\n\treturn host != ""\n}\n',
    "ui/button.ts": "export function button(label: string): string {\n"
    "  return `<button>${label}</button>`;\n}\n",
    "README.md": "# Tools\n\nSmall helpers for billing, text and files.\n\n"
    "## Billing\n\nTax and discounts.\n",
}
PARAMS = Parameters(embedding_batch_size=4)
SETTINGS = Settings(summariser="digest")


def make_repository(root: Path) -> Path:
    for rel_path, text in SOURCES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text * 3)  # enough leaves for several embedding batches
    return root


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory, embedder) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("faults")
    repo = make_repository(root / "repo")
    with Index.open(root / "clean.db", SETTINGS, embedder=embedder) as index:
        index.index(repo, PARAMS)
    return repo, root / "clean.db"


def kill_at(database: Path, repo: Path, stage: str, count: int, workers: str = "auto") -> list[int]:
    """Run the real pipeline in another process and SIGKILL it at that progress event;
    the ids of the processes it had started then (Linux; empty elsewhere)."""
    script = str(ROOT / "tests" / "index_until.py")
    batch = str(PARAMS.embedding_batch_size)
    process = subprocess.Popen(
        [sys.executable, script, str(database), str(repo), stage, str(count), batch, workers],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    children: list[int] = []
    try:
        line = process.stdout.readline().strip()
        assert line == "paused", f"the run did not reach {stage} {count}: {line!r}"
        listing = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        children = [int(pid) for pid in listing.read_text().split()] if listing.exists() else []
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    return children


@pytest.mark.parametrize(
    "stage,count",
    [("scan", 0), ("files", 3), ("embed", 2), ("hierarchy", 1), ("summaries", 2)],
    ids=["early", "reading-files", "embedding", "planning", "summaries"],
)
def test_a_rerun_after_kill_9_ends_as_an_uninterrupted_run(clean_run, tmp_path, embedder, stage, count):
    repo, clean_db = clean_run
    database = tmp_path / "killed.db"
    kill_at(database, repo, stage, count)
    assert integrity(database) == "ok"
    with Index.open(database, SETTINGS, embedder=embedder) as index:
        index.index(repo, PARAMS)
    assert integrity(database) == "ok"
    assert canonical_dump(database) == canonical_dump(clean_db)


def test_readers_during_indexing_never_see_a_lock(tmp_path, embedder):
    repo = make_repository(tmp_path / "repo")
    database = tmp_path / "index.db"
    with Index.open(database, SETTINGS, embedder=embedder) as first:
        first.index(repo, Parameters(embedding_batch_size=4, minimum_chunk_token_length=16))
    for path in repo.rglob("*.py"):  # every file changes: the next run rewrites them all
        path.write_text(path.read_text() + "\n\ndef added_later():\n    return 'new'\n")
    errors: list[BaseException] = []
    reads = 0
    done = threading.Event()

    def read_while_indexing() -> None:
        nonlocal reads
        while not done.is_set():
            try:
                with Index.open(database, create=False, embedder=embedder) as reader:
                    reader.stats()
                    reader.query("add tax to a price", record=True)
                    reads += 1
            except BaseException as error:  # noqa: BLE001 - any failure is the finding
                errors.append(error)
                return

    with Index.open(database, SETTINGS, embedder=embedder) as writer:
        thread = threading.Thread(target=read_while_indexing)
        thread.start()
        try:
            writer.index(repo, Parameters(embedding_batch_size=1, minimum_chunk_token_length=16))
        finally:
            done.set()
            thread.join()
    assert not errors, errors
    assert reads > 0
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT COUNT(*) FROM queries").fetchone()[0] == reads
