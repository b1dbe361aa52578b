"""Context runs (``bench context``) kept with the saved quality runs and shown on the Evaluate
page, on real parts: the benchmark run on the standard library's json package (14 queries, a few
seconds) with the bundled model, real SQLite files, the real app under Streamlit's AppTest."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from hsc.api import Index
from hsc.bench.context import BUDGETS, PACK, SHIPPED, bench_context
from hsc.cli import main
from hsc.quality.context_report import (
    CONTEXT_COLUMNS,
    context_budgets,
    context_figure,
    context_intervals,
    context_table,
)
from hsc.store import Store

APP = Path(__file__).resolve().parent.parent / "hsc" / "app" / "app.py"
TIMEOUT = 240


@pytest.fixture(scope="module")
def context_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return bench_context(("json",), out=tmp_path_factory.mktemp("context"), report=lambda _: None)


@pytest.fixture(scope="module")
def quality_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from hsc.quality.sweep import Options, run_quality

    source = tmp_path_factory.mktemp("quality") / "source"
    source.mkdir()
    for name in ("calendar.py", "bisect.py"):
        shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / name, source / name)
    options = Options(path=source, out=source.parent / "q", systems=("flat",), sweep=False)
    return run_quality(options, report=lambda _: None)


def database_before_suites(path: Path, quality: dict[str, Any]) -> None:
    """An hsc database as made before runs named their suite: no quality_runs.suite column, one
    quality run saved the way it was saved then."""
    Store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE quality_runs DROP COLUMN suite")
        conn.execute(
            "INSERT INTO quality_runs (created_at, corpus, parameters, result) VALUES (1, ?, '{}', ?)",
            (quality["corpus"]["source"], json.dumps(quality)),
        )
    conn.close()


def test_an_older_database_lists_its_quality_runs_and_keeps_context_runs_apart(
    tmp_path, context_run, quality_run
):
    path = tmp_path / "old.db"
    database_before_suites(path, quality_run)
    read_only = Store(path, read_only=True)
    try:  # read-only: the column is not added, the old run is still a quality run
        assert [(r["id"], r["suite"]) for r in read_only.quality_runs()] == [(1, "quality")]
        assert read_only.quality_run(1)["result"] == quality_run
        assert read_only.refs_column == "refs"  # another added column is not taken for missing
    finally:
        read_only.close()

    with Index.open(path) as index:  # writable: the column is added, the old row a quality run
        saved = index.save_quality_run(context_run)
        assert [(r["id"], r["suite"]) for r in index.quality_runs()] == [(saved, "context"), (1, "quality")]
        assert [r["id"] for r in index.quality_runs(suite="quality")] == [1]
        assert [r["id"] for r in index.quality_runs(suite="context")] == [saved]
        assert index.quality_runs(suite="context")[0]["corpus"] == "standard library: json"
        with pytest.raises(ValueError, match="not a quality or context run"):
            index.save_quality_run({**context_run, "suite": "scale"})
    with Index.open(path, create=False) as reopened:  # on disk, not in memory
        back = reopened.quality_run(saved)
        assert back["suite"] == "context" and back["result"] == context_run
        assert reopened.quality_run(1)["suite"] == "quality"


def test_bench_context_saves_its_run_with_db(tmp_path, capsys):
    database = tmp_path / "runs.db"
    argv = ["bench", "context", "--packages", "json", "--out", str(tmp_path / "out"), "--db", str(database)]
    assert main(argv) == 0
    assert f"saved as run #1 in {database}" in capsys.readouterr().out
    with Index.open(database, create=False) as index:
        (listed,) = index.quality_runs()
        assert listed["suite"] == "context"
        assert set(index.quality_run(1)["result"]["table"]) >= {PACK, SHIPPED}


def test_the_shaping_reads_every_system_budget_and_interval(context_run):
    assert context_budgets(context_run) == list(BUDGETS)
    table = context_table(context_run)
    systems = list(context_run["table"])
    assert len(table) == len(systems) * len(BUDGETS)
    assert [row["system"] for row in table[:: len(BUDGETS)]] == systems
    for row in table:
        summary = context_run["table"][row["system"]][str(row["budget"])]
        assert [row[heading] for heading in CONTEXT_COLUMNS.values()] == [summary[k] for k in CONTEXT_COLUMNS]
        assert 0 <= row["full context"] <= row["hit"] <= 1 and row["tokens"] <= row["budget"]

    intervals = context_intervals(context_run)
    assert {(r["budget"], r["metric"]) for r in intervals} == {
        (b, m) for b in BUDGETS for m in ("full context", "hit")
    }
    for row in intervals:
        assert row["low"] <= row["difference"] <= row["high"]
        expected = "pack better" if row["low"] > 0 else "pack worse" if row["high"] < 0 else "no difference"
        assert row["reading"].startswith(expected)

    figure = context_figure(context_run)
    assert [trace.name for trace in figure.data] == systems
    for trace, system in zip(figure.data, systems):
        assert list(trace.x) == list(BUDGETS)
        assert list(trace.y) == [context_run["table"][system][str(b)]["full"] for b in BUDGETS]


@pytest.fixture()
def app_with_runs(tmp_path, context_run) -> Iterator[Path]:
    repository = tmp_path / "stdlib_bits"
    repository.mkdir()
    shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / "bisect.py", repository / "bisect.py")
    database = tmp_path / "app.db"
    with Index.open(database) as index:
        index.save_quality_run(context_run)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(database))
        patch.setenv("HSC_APP_REPO", str(repository))
        yield database


def test_the_evaluate_page_shows_a_saved_context_run_and_runs_another(app_with_runs, context_run):
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.run()
    app.switch_page("pages/6_Evaluate.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert [tab.label for tab in app.tabs] == ["Retrieval quality", "Context at a budget"]
    quality, context = app.tabs
    # The context run is never read as a quality run: the quality tab has none.
    assert any("No run yet" in i.value for i in quality.info)
    assert not quality.get("plotly_chart")

    table, intervals = (frame.value for frame in context.dataframe)
    assert list(table.columns) == ["system", "budget", *CONTEXT_COLUMNS.values()]
    assert set(table["system"]) == set(context_run["table"]) and set(table["budget"]) == set(BUDGETS)
    assert not table.isna().any().any()
    assert set(intervals["budget"]) == set(BUDGETS) and set(intervals["metric"]) == {"full context", "hit"}
    (chart,) = context.get("plotly_chart")
    assert "context-run-" in str(chart.proto)  # the PNG download's name
    assert "14 queries" in "\n".join(c.value for c in context.caption)

    app.button(key="evaluate:context-start").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.warning, [w.value for w in app.warning]
    assert len(app.selectbox(key="evaluate:context-run").options) == 2
    app.button(key="evaluate:context-run:delete").click().run()
    assert len(app.selectbox(key="evaluate:context-run").options) == 1
