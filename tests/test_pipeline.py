"""Indexing end to end: real files, real tree-sitter, the real model, a real SQLite file."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import ROOT, SAMPLE_REPOS

from hsc.api import Index
from hsc.params import Parameters


@pytest.fixture()
def inventory_copy(tmp_path):
    target = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", target)
    return target


def leaf_snapshot(index: Index) -> list[tuple]:
    return [
        (row["path"], row["ordinal"], row["scope"], row["start_line"], row["end_line"], row["content_hash"])
        for row in index.leaves()
    ]


def test_reindexing_an_unchanged_repository_embeds_nothing(inventory_copy, tmp_path, embedder):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        first = index.index(inventory_copy)
        assert first.leaves_embedded > 40 and first.files_parsed >= 6
        before = leaf_snapshot(index)
        second = index.index(inventory_copy)
        assert second.leaves_embedded == 0
        assert second.files_parsed == 0 and second.files_unchanged == second.files_seen
        assert leaf_snapshot(index) == before


def test_changing_one_function_reembeds_only_its_leaves(inventory_copy, tmp_path, embedder):
    pricing = inventory_copy / "inventory" / "pricing.py"
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(inventory_copy)
        source = pricing.read_text()
        marker = "def "
        at = source.index(marker)
        # Rename the first function: its leaf changes, nothing else in the file does.
        end_of_name = source.index("(", at)
        pricing.write_text(source[:end_of_name] + "_renamed" + source[end_of_name:])
        report = index.index(inventory_copy)
        assert report.files_parsed == 1
        assert 1 <= report.leaves_embedded <= 2
        assert report.leaves_from_cache > 0


def test_a_deleted_file_leaves_the_index(inventory_copy, tmp_path, embedder):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(inventory_copy)
        (inventory_copy / "inventory" / "cli.py").unlink()
        report = index.index(inventory_copy)
        assert report.files_removed == 1
        assert all(row["path"] != "inventory/cli.py" for row in index.leaves())
        assert all(row["path"] != "inventory/cli.py" for row in index.files())


def test_new_chunk_sizes_recut_files_but_reuse_cached_vectors(inventory_copy, tmp_path, embedder):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(inventory_copy)
        report = index.index(inventory_copy, Parameters(maximum_chunk_token_length=128))
        assert report.files_parsed >= 6
        assert report.leaves_from_cache > 0  # leaves the new size does not change keep their vectors


def test_bad_files_are_reported_and_nothing_else_is_lost(inventory_copy, tmp_path, embedder):
    (inventory_copy / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    (inventory_copy / "latin1.py").write_bytes("# caf\xe9\nx = 1\n".encode("latin-1"))
    (inventory_copy / "broken.py").write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        report = index.index(inventory_copy)
        reasons = {p.path: p.reason for p in report.problems}
        assert "binary" in reasons["logo.png"].lower()
        files = {row["path"]: row for row in index.files()}
        assert files["latin1.py"]["status"] == "indexed" and "cp1252" in files["latin1.py"]["reason"]
        assert files["broken.py"]["status"] == "indexed" and "syntax" in files["broken.py"]["reason"]
        assert any(row["path"] == "broken.py" for row in index.leaves())
        assert files["inventory/pricing.py"]["status"] == "indexed"


def test_index_rejects_a_missing_path_and_a_file(tmp_path, embedder):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        with pytest.raises(FileNotFoundError, match="no such folder"):
            index.index(tmp_path / "nowhere")
        (tmp_path / "a.py").write_text("x = 1\n")
        with pytest.raises(NotADirectoryError, match="not a folder"):
            index.index(tmp_path / "a.py")


def test_a_killed_index_run_resumes_to_the_same_result(tmp_path, embedder):
    # The encoder users get: on the CPU each row runs alone, so a leaf's vector is the same in
    # the killed run's batches of one and in the clean run's full ones, and so are the hierarchies.
    repo = tmp_path / "repos"
    for name in ("inventory_py", "shortlink_go", "ui_utils_ts"):
        shutil.copytree(SAMPLE_REPOS / name, repo / name)
    killed_db = tmp_path / "killed.db"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    # Tiny batches make the run long enough to be killed in the middle.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hsc",
            "index",
            str(repo),
            "--db",
            str(killed_db),
            "--quiet",
            "--set",
            "embedding_batch_size=1",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    files_when_killed = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if killed_db.exists():
            try:
                with sqlite3.connect(f"file:{killed_db}?mode=ro", uri=True, timeout=1) as probe:
                    files_when_killed = probe.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            except sqlite3.OperationalError:
                files_when_killed = 0
            if files_when_killed:
                break
        time.sleep(0.05)
    still_running = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert still_running, f"the run ended before it could be killed: {process.stderr.read().decode()[-2000:]}"
    assert files_when_killed > 0

    with sqlite3.connect(killed_db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        total_files = check.execute("SELECT COUNT(*) FROM files").fetchone()[0]
    with Index.open(killed_db, embedder=embedder) as resumed:
        report = resumed.index(repo)
        assert report.files_unchanged >= total_files > 0  # what was committed is not redone
        assert report.files_parsed > 0  # and the rest is done now
        resumed_leaves = leaf_snapshot(resumed)
        resumed_groups = resumed.hierarchies()[0]["group_count"]
        resumed_vectors = np.array(resumed.leaf_table().vectors)
    with Index.open(tmp_path / "clean.db", embedder=embedder) as clean:
        clean.index(repo)
        assert leaf_snapshot(clean) == resumed_leaves
        assert np.array_equal(clean.leaf_table().vectors, resumed_vectors)
        assert clean.hierarchies()[0]["group_count"] == resumed_groups


def test_embeddings_come_back_in_the_given_order(embedder):
    texts = ["def tiny(): pass", "class Big:\n" + "    value = compute(1, 2, 3)\n" * 40, "x = 1", "y = 2 + 3"]
    batched = embedder.embed(texts, batch_size=2)  # embedded longest first, handed back in order
    one_by_one = np.stack([embedder.embed([text], batch_size=1)[0] for text in texts])
    assert np.array_equal(batched, one_by_one)
    assert abs(float(np.linalg.norm(batched, axis=1).min()) - 1.0) < 1e-5
