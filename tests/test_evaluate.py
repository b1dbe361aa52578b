"""The Evaluate page and saved quality runs, on real parts: the bundled model,
real SQLite files in a temporary folder, and a small corpus copied from this
machine's standard library (three modules, a few dozen leaves)."""

from __future__ import annotations

import copy
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from hsc.quality.corpus import MIN_QUERIES

APP = Path(__file__).resolve().parent.parent / "hsc" / "app" / "app.py"
# Small standard-library modules with many documented functions (about 30 queries in 23 kB).
MODULES = ("calendar.py", "bisect.py")
TIMEOUT = 240


@pytest.fixture(scope="module")
def small_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("evaluate") / "stdlib_bits"
    root.mkdir()
    for name in MODULES:
        shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / name, root / name)
    return root


@pytest.fixture(scope="module")
def app_environment(small_repository: Path) -> Iterator[Path]:
    database = small_repository.parent / "app.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(database))
        patch.setenv("HSC_APP_REPO", str(small_repository))
        yield database


def evaluate_page() -> AppTest:
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.run()
    app.switch_page("pages/6_Evaluate.py").run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_the_page_refuses_a_corpus_with_too_few_queries(app_environment):
    app = evaluate_page()
    app.radio(key="evaluate:corpus").set_value("standard library").run()
    app.multiselect(key="evaluate:packages").set_value(["tomllib"]).run()
    warnings = [w.value for w in app.warning]
    assert any(f"at least {MIN_QUERIES} needed" in w for w in warnings), warnings
    assert not [b for b in app.button if b.key == "evaluate:start"]


def test_the_page_runs_saves_explains_and_compares(app_environment, small_repository):
    app = evaluate_page()
    corpus = app.radio(key="evaluate:corpus")
    repository_choice = next(o for o in corpus.options if o.startswith("active repository"))
    corpus.set_value(repository_choice).run()
    assert not app.warning, [w.value for w in app.warning]
    assert "queries available" in "\n".join(c.value for c in app.caption)
    systems = app.multiselect(key="evaluate:systems")
    assert "flat" in systems.value and "two-stage" in systems.value
    app.button(key="evaluate:start").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.warning, [w.value for w in app.warning]

    table = app.dataframe[0].value
    assert {"flat", "two-stage", "hybrid"} <= set(table["system"])
    assert not table.isna().any().any()  # a figure a system has not is an empty cell, never "None"
    assert table["recall@10"].between(0, 1).all()
    charts = [c.proto for c in app.get("plotly_chart")]
    assert len(charts) == 2  # the frontier and the sweep's heatmap
    assert "frontier-run-" in str(charts[0])  # the PNG download's name
    # The star marks the run's own two-stage row: the run used the sidebar's parameters.
    assert any("The star:" in c.value for c in app.caption)

    # One query across the systems: every system says where it ranked the target, and why.
    app.toggle(key="evaluate:split").set_value(False).run()
    query = app.selectbox(key="evaluate:query")
    assert len(query.options) >= MIN_QUERIES
    explained = app.dataframe[-1].value
    assert set(explained["system"]) == set(table["system"])
    ranks = app.dataframe[-2].value  # each system's rank of the target, empty where it missed
    assert not ranks.isna().any().any() and not explained.isna().any().any()
    assert (ranks[list(table["system"])] == "").any().any()  # some system missed some query
    staged = explained[explained["system"] == "two-stage"].iloc[0]
    assert int(staged["groups opened"]) >= 1
    why = "\n".join(m.value for m in app.markdown)
    assert why.count("\n- **") + why.startswith("- **") >= len(table)  # one reason per system

    # A second run with fewer systems and a narrower stage 1, then the two compared.
    app.multiselect(key="evaluate:systems").set_value(["flat", "two-stage-seed"]).run()
    app.checkbox(key="evaluate:sweep").uncheck().run()
    app.button(key="evaluate:start").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert len(app.selectbox(key="evaluate:run").options) == 2
    assert app.selectbox(key="evaluate:first").value != app.selectbox(key="evaluate:second").value
    compared = app.selectbox(key="evaluate:compare-system")
    assert set(compared.options) == {"flat", "two-stage-seed"}
    assert any("queries were asked in both runs" in c.value for c in app.caption)


def test_runs_are_saved_listed_compared_and_deleted(tmp_path):
    from hsc.api import Index
    from hsc.quality.runs import compare_runs, explain_query
    from hsc.quality.sweep import Options, run_quality

    source = tmp_path / "source"
    source.mkdir()
    for name in MODULES:
        shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / name, source / name)
    options = Options(path=source, out=tmp_path / "q", systems=("flat", "two-stage-seed"), sweep=False)
    result = run_quality(options, report=lambda _: None)  # the default encoder, as the app runs it
    seed_row = result["systems"][1]
    assert seed_row["system"] == "two-stage-seed" and len(seed_row["queries"]) == len(result["targets"])
    for number, detail in enumerate(explain_query(result, 0)):
        assert detail["rank"] == result["systems"][number]["ranks"][0]
    staged = explain_query(result, 0)[1]
    assert staged["groups_opened"] >= 1 and staged["group_rank_exact"] >= 1

    # The second run differs on one query: one the first found, the second misses.
    found = next(n for n, rank in enumerate(result["systems"][0]["ranks"]) if rank is not None)
    changed = copy.deepcopy(result)
    changed["systems"][0]["ranks"][found] = None
    changed["systems"][0]["recall_at_10"] -= 1 / len(result["targets"])

    with Index.open(tmp_path / "runs.db") as index:
        first, second = index.save_quality_run(result), index.save_quality_run(changed)
        listed = index.quality_runs()
        assert [r["id"] for r in listed] == [second, first] and listed[0]["corpus"] == str(source)
        assert "result" not in listed[0] and listed[0]["parameters"] == result["parameters"]
        a, b = index.quality_run(first), index.quality_run(second)
        assert a is not None and b is not None and a["result"] == result
        compared = compare_runs(a["result"], b["result"], "flat")
        target = result["targets"][found]
        assert [q["query"] for q in compared["only_first"]] == [target["query"]]
        assert compared["only_second"] == []
        assert compared["shared_queries"] == len(result["targets"])
        flat = next(r for r in compared["systems"] if r["system"] == "flat")
        assert flat["recall_at_10 Δ"] == pytest.approx(-1 / len(result["targets"]), abs=1e-3)
        assert index.delete_quality_run(first) and not index.delete_quality_run(first)
        assert index.quality_run(first) is None and [r["id"] for r in index.quality_runs()] == [second]
    with Index.open(tmp_path / "runs.db") as reopened:  # on disk, not in memory
        assert reopened.quality_run(second)["result"]["systems"][0]["ranks"][found] is None


def test_the_current_point_comes_from_the_table_or_a_matching_sweep_row():
    from dataclasses import asdict, replace

    from hsc.params import Parameters
    from hsc.quality.runs import current_point

    ran = Parameters()
    row = {"system": "two-stage", "recall_at_10": 0.7, "leaves_scored_share": 0.1}
    swept = {
        "system": "two-stage+share",
        "similarity_drop_threshold": 0.8,
        "smoothing_window_size": ran.smoothing_window_size,
        "boundary_rule": ran.boundary_rule,
        "mid_level_top_k": ran.mid_level_top_k,
        "leaf_share": ran.stage1_leaf_share,
        "recall_at_10": 0.6,
        "leaves_scored_share": 0.12,
    }
    result = {"parameters": asdict(ran), "systems": [row], "sweep": [swept]}
    assert current_point(result, asdict(ran), "two-stage")["source"] == "this run's table"
    moved = asdict(replace(ran, similarity_drop_threshold=0.8))
    assert current_point(result, moved, "two-stage") == {
        "recall_at_10": 0.6,
        "leaves_scored_share": 0.12,
        "source": "the sweep",
    }
    assert current_point(result, asdict(replace(ran, similarity_drop_threshold=0.7)), "two-stage") is None
    assert current_point(result, moved, "hybrid") is None  # the sweep holds two-stage rows only


def test_the_page_asks_class_and_module_questions_too(app_environment):
    from hsc.quality.corpus import QUICK_PACKAGES, stdlib_sources, survey_corpus

    app = evaluate_page()
    app.radio(key="evaluate:corpus").set_value("standard library").run()
    kind = app.radio(key="evaluate:kind")
    assert list(kind.options) == [
        "functions (a docstring's first sentence)",
        "comments inside functions",
        "classes (a class docstring's; regions scored)",
        "modules (a module docstring's; regions and files scored)",
    ]
    kind.set_value("class").run()
    assert not app.exception, [e.value for e in app.exception]
    classes = survey_corpus(stdlib_sources(QUICK_PACKAGES), "class").queries
    functions = survey_corpus(stdlib_sources(QUICK_PACKAGES), "docstring").queries
    assert classes != functions
    captions = "\n".join(c.value for c in app.caption)
    assert f"{classes} queries available (classes" in captions, captions
    # Few modules of one package have a docstring of four words or more: too few to run.
    app.radio(key="evaluate:kind").set_value("module").run()
    app.multiselect(key="evaluate:packages").set_value(["json"]).run()
    assert any(f"at least {MIN_QUERIES} needed" in w.value for w in app.warning)
