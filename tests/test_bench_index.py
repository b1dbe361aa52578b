"""The indexing benchmark's runs (hsc.bench.indexing): each run is what it says, on a real index."""

from __future__ import annotations

from pathlib import Path

from hsc.bench.indexing import index_once
from hsc.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "hsc" / "samples" / "inventory_py"


def test_the_no_outlines_run_indexes_the_same_leaves_without_outline_vectors(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    default = index_once(SAMPLE, "default", tmp_path / "a")
    without = index_once(SAMPLE, "no-outlines", tmp_path / "b")
    assert default["outlines"] > 0 and without["outlines"] == 0
    assert without["leaves"] == default["leaves"] and without["files"] == default["files"]


def test_an_unknown_run_is_refused_in_one_line(capsys):
    assert main(["bench", "index", "--path", str(SAMPLE), "--runs", "default,fastest"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    choices = "default, seed, serial, one-vector, no-outlines"
    assert err[-1] == f"hsc: unknown index run 'fastest'; choose from {choices}"
