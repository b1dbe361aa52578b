"""``bench quality --against``: one run's default paired against an earlier run's systems, on real runs."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from hsc.cli import main
from hsc.quality.pairing import against_earlier, load_run

SAMPLE = Path(__file__).parent.parent / "hsc" / "samples" / "inventory_py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path, str]:
    """Two runs of the sample as a user makes them: every query at the shipped leaves, then six
    queries of another draw cut with bigger leaves, paired against the first."""
    root = tmp_path_factory.mktemp("pairing")
    repo = root / "inventory_py"
    shutil.copytree(SAMPLE, repo)
    base = ["bench", "quality", "--path", str(repo), "--systems", "flat,hybrid+joined"]
    base += ["--no-sweep", "--no-png"]
    assert main([*base, "--out", str(root / "first")]) == 0
    second = [*base, "--out", str(root / "second"), "--queries", "6", "--seed", "3"]
    second += ["--set", "leaf_minimums=python=128", "--against", str(root / "first")]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(second) == 0
    return root / "first", root / "second", printed.getvalue()


def test_a_run_pairs_against_an_earlier_runs_systems_on_the_queries_both_asked(runs):
    first_out, second_out, printed = runs
    first, second = load_run(first_out), load_run(second_out / "run" / "quality.json")
    assert len(first["targets"]) > 6 and len(second["targets"]) == 6
    paired = second["against"]
    assert [row["system"] for row in paired["systems"]] == ["flat", "hybrid+joined"]
    ranks = {row["system"]: row["ranks"] for row in first["systems"]}
    where = {(t["query"], t["path"]): i for i, t in enumerate(first["targets"])}
    mine = next(row["ranks"] for row in second["systems"] if row["system"] == "hybrid+joined")
    for row in paired["systems"]:
        # Every query of the smaller draw is in the full draw, so all six pair.
        assert row["queries"] == 6 and row["default"] == "hybrid+joined"
        theirs = [ranks[row["system"]][where[(t["query"], t["path"])]] for t in second["targets"]]
        found_now = [r is not None and r <= 10 for r in mine]
        found_then = [r is not None and r <= 10 for r in theirs]
        assert row["only_first"] == sum(a and not b for a, b in zip(found_now, found_then))
        assert row["only_second"] == sum(b and not a for a, b in zip(found_now, found_then))
        assert row["recall_at_10"] == round(sum(found_then) / 6, 4)
        assert f"against earlier {row['system']}" in printed


def test_a_run_against_itself_in_another_order_repeats_its_own_mcnemar(runs):
    first = load_run(runs[0])
    order = list(reversed(range(len(first["targets"]))))
    shuffled = {
        **first,
        "targets": [first["targets"][i] for i in order],
        "systems": [{**row, "ranks": [row["ranks"][i] for i in order]} for row in first["systems"]],
    }
    paired = {row["system"]: row for row in against_earlier(first, shuffled)["systems"]}
    assert paired["hybrid+joined"]["only_first"] == paired["hybrid+joined"]["only_second"] == 0
    for test in first["mcnemar"]:
        row = paired[test["system"]]
        assert (row["only_first"], row["only_second"], row["p"]) == (
            test["only_first"],
            test["only_second"],
            test["p"],
        )
        assert row["queries"] == len(first["targets"])


def test_a_bad_earlier_run_is_one_line_and_nothing_runs(tmp_path, capsys):
    other = tmp_path / "context.json"
    other.write_text(json.dumps({"suite": "context", "table": {}}))
    for against, said in ((tmp_path / "nowhere", "no quality run at"), (other, "not a quality run's JSON")):
        out = tmp_path / "out"
        argv = ["bench", "quality", "--path", str(SAMPLE), "--no-sweep", "--out", str(out)]
        argv += ["--against", str(against)]
        assert main(argv) != 0
        (error,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hsc:")]
        assert said in error
        assert not out.exists()
