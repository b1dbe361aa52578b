"""Two ``bench context`` runs paired query by query (``--against``), on real parts: the benchmark on
the standard library's json and tomllib packages with the bundled model, through the command line,
its context-run.json files read back from disk."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hsc.bench.context import BUDGETS, PACK
from hsc.cli import main
from hsc.quality.context_metrics import PER_QUERY, paired_against, paired_interval

PACKAGES = "json,tomllib"


def run(out: Path, *extra: str) -> dict[str, Any]:
    argv = ["bench", "context", "--packages", PACKAGES, "--out", str(out), *extra]
    assert main(argv) == 0
    return json.loads((out / "context-run.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """A run at the defaults, and one indexed with other leaves paired against it."""
    root = tmp_path_factory.mktemp("pairing")
    first = run(root / "first")
    second = run(
        root / "second",
        "--set",
        "leaf_minimums=python=128,rust=128,javascript=128",
        "--against",
        str(root / "first" / "context-run.json"),
    )
    return root, first, second


def test_the_run_keeps_each_querys_scores_and_they_make_its_table(runs):
    _, first, _ = runs
    kept = first["per_query"]
    assert len(kept["ids"]) == len(set(kept["ids"])) == first["corpus"]["queries"] > 10
    assert set(kept["systems"]) == set(first["table"]) | {n for n in kept["systems"] if "file outline" in n}
    for name, by_budget in first["table"].items():
        for budget, summary in by_budget.items():
            scores = kept["systems"][name][budget]
            assert round(sum(scores["hit"]) / len(kept["ids"]), 3) == summary["hit"]
            assert round(sum(scores["full"]) / len(kept["ids"]), 3) == summary["full"]
            covered = [c for c in scores["coverage"] if c is not None]
            assert round(sum(covered) / len(covered), 3) == pytest.approx(summary["coverage"], abs=0.0015)
            shown = sum(scores["target"]) / len(kept["ids"])
            assert round(shown, 3) == pytest.approx(summary["target"], abs=0.0015)


def test_a_run_against_itself_differs_by_exactly_nothing(runs):
    _, first, _ = runs
    paired = paired_against(first, first)
    assert paired["queries"] == first["corpus"]["queries"]
    assert set(paired["paired"]) == set(first["per_query"]["systems"])
    for by_budget in paired["paired"].values():
        assert set(by_budget) == {str(b) for b in BUDGETS}
        for row in by_budget.values():
            for metric in PER_QUERY:
                assert (row[metric]["difference"], row[metric]["low"], row[metric]["high"]) == (0, 0, 0)
            assert row["hit_test"] == {"only_after": 0, "only_before": 0, "p": 1.0}


def reordered(result: dict[str, Any], order: list[int]) -> dict[str, Any]:
    """The same run with its queries listed in ``order`` (a run that drew them otherwise)."""
    out = copy.deepcopy(result)
    kept = out["per_query"]
    kept["ids"] = [kept["ids"][i] for i in order]
    for by_budget in kept["systems"].values():
        for scores in by_budget.values():
            for metric in PER_QUERY:
                scores[metric] = [scores[metric][i] for i in order]
    return out


def test_the_pairing_is_by_query_not_by_position(runs):
    _, first, _ = runs
    count = len(first["per_query"]["ids"])
    backwards = reordered(first, list(reversed(range(count))))
    # Position by position the two differ (else this test could not tell the pairings apart) ...
    columns = [
        (scores["full"], backwards["per_query"]["systems"][name][budget]["full"])
        for name, by_budget in first["per_query"]["systems"].items()
        for budget, scores in by_budget.items()
    ]
    assert any(a != b for a, b in columns)
    # ... yet paired by query they are the same run.
    for by_budget in paired_against(first, backwards)["paired"].values():
        for row in by_budget.values():
            assert all(row[m]["difference"] == 0 and row[m]["high"] == 0 for m in PER_QUERY)
    # Only the queries both asked are paired.
    fewer = reordered(first, list(range(count - 3)))
    assert paired_against(fewer, first)["queries"] == count - 3


def test_the_interval_comes_from_the_stored_scores(runs):
    _, first, _ = runs
    after = copy.deepcopy(first)
    hits = after["per_query"]["systems"][PACK]["2048"]["hit"]
    lost = [i for i, hit in enumerate(hits) if hit][:2]
    for i in lost:
        hits[i] = 0
    row = paired_against(first, after)["paired"][PACK]["2048"]
    assert row["hit"]["difference"] == round(-2 / len(hits), 3)
    assert row["hit"]["low"] < 0 == row["hit"]["high"]
    assert row["hit_test"]["only_before"] == 2 and row["hit_test"]["only_after"] == 0
    assert row["hit_test"]["p"] == 0.5  # two discordant queries, both one way: 2 * (1/2)^2
    assert row["full"] == paired_against(first, first)["paired"][PACK]["2048"]["full"]
    # Questions without dependencies (class and module questions) pair no coverage at all.
    for scores in after["per_query"]["systems"][PACK].values():
        scores["coverage"] = [None] * len(scores["coverage"])
    row = paired_against(first, after)["paired"][PACK]["2048"]
    assert row["coverage"] is None and row["target"]["queries"] == len(hits)
    # An earlier run that kept fewer metrics pairs on those it kept.
    for scores in after["per_query"]["systems"][PACK].values():
        del scores["target"]
    row = paired_against(after, first)["paired"][PACK]["2048"]
    assert row["target"] is None and row["hit"]["difference"] == round(2 / len(hits), 3)


def test_the_command_line_pairs_a_run_at_other_leaves_against_the_earlier_one(runs, capsys):
    root, first, second = runs
    against = second["against"]
    assert against["parameters_before"] == {}
    assert against["parameters_after"] == {"leaf_minimums": "python=128,rust=128,javascript=128"}
    # The gold and the queries come from ast, not from the leaves: the same queries both times.
    assert against["queries"] == len(first["per_query"]["ids"]) == len(second["per_query"]["ids"])
    before = first["per_query"]["systems"][PACK]["2048"]
    after = second["per_query"]["systems"][PACK]["2048"]
    where = {query: i for i, query in enumerate(first["per_query"]["ids"])}
    order = [where[query] for query in second["per_query"]["ids"]]
    expected = paired_interval(after["full"], [before["full"][i] for i in order])
    assert against["paired"][PACK]["2048"]["full"] == expected | {"queries": len(order)}


def test_an_earlier_run_without_per_query_scores_is_refused_in_one_line(runs, tmp_path, capsys):
    _, first, _ = runs
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in first.items() if k != "per_query"}))
    argv = ["bench", "context", "--packages", PACKAGES, "--out", str(tmp_path / "out"), "--against", str(old)]
    assert main(argv) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert error[-1] == "hsc: the earlier context run keeps no per-query scores: rerun it with this version"
    assert not (tmp_path / "out").exists()  # refused before any work
