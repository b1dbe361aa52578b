"""The app's view (repository, parameter set, changed parameters) in the URL and
in the app's database: what a reload, a second tab or a shared link opens.

AppTest with the real model, a real SQLite file and the bundled samples; the
browser cases (F5, a second tab) are in ``test_browser_state.py``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_app import APP, SAMPLE, SECOND_SAMPLE, TIMEOUT, assert_clean, open_page, texts


@pytest.fixture(scope="module", autouse=True)
def app_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("hsc-app-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(folder / "app.db"))
        patch.setenv("HSC_APP_REPO", str(SAMPLE))
        yield folder / "app.db"


def session(**query: str) -> AppTest:
    """A new browser session opened at ``/?key=value&...`` (none: the bare address)."""
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.query_params.update(query)
    app.run()
    assert_clean(app)
    return app


def threshold(app: AppTest):
    """The Similarity page's threshold slider (its key changes when a view's parameters are applied)."""
    return next(w for w in app.slider if w.label == "similarity_drop_threshold")


def saved_view(database: Path) -> dict[str, str]:
    with sqlite3.connect(database) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'app:view'").fetchone()
    conn.close()
    return json.loads(row[0]) if row else {}


def test_a_link_opens_its_repository_and_parameters_and_a_bare_address_the_last_view(
    app_database: Path, tmp_path: Path
) -> None:
    first = session()  # indexes the sample on an empty database
    assert first.query_params["repo"] == "inventory_py"
    second = tmp_path / "shortlink_go"
    shutil.copytree(SECOND_SAMPLE, second)
    first.radio(key="repo:source").set_value("A folder on this machine").run()
    first.text_input(key="repo:path").input(str(second)).run()
    first.button(key="repo:index").click().run()
    assert_clean(first)
    assert first.query_params["repo"] == "shortlink_go"  # the URL follows the active repository

    # A link to the sample with a tuned threshold: that repository, that value, nothing else changed.
    linked = session(repo="inventory_py", similarity_drop_threshold="0.45")
    assert "inventory_py" in texts(linked, sidebar=True).replace("\\", "")
    assert "95 leaves in 8 files indexed)" in texts(linked, sidebar=True)  # as the pages count them
    assert linked.session_state["hsc_parameters"]["similarity_drop_threshold"] == pytest.approx(0.45)
    assert "Parameters (1 changed)" in texts(linked, sidebar=True)
    assert "Show and change them" in [e.label for e in linked.sidebar.expander]  # the same in every state
    open_page(linked, "pages/3_Similarity.py")
    assert threshold(linked).value == pytest.approx(0.45)
    threshold(linked).set_value(0.5).run()
    assert_clean(linked)
    # A slider step (a fragment's run) rewrites the URL and the database's view.
    assert linked.query_params["similarity_drop_threshold"] == "0.5"
    assert saved_view(app_database) == {"repo": "inventory_py", "similarity_drop_threshold": "0.5"}

    # A bare address (a new tab) opens the last view any tab showed.
    bare = session()
    assert bare.session_state["hsc_parameters"]["similarity_drop_threshold"] == pytest.approx(0.5)
    assert bare.query_params["repo"] == "inventory_py"
    assert "inventory_py" in texts(bare, sidebar=True).replace("\\", "")

    # Back to the defaults: the parameter leaves the URL.
    bare.sidebar.button(key="param:reset").click().run()
    assert_clean(bare)
    assert "similarity_drop_threshold" not in bare.query_params


def test_a_link_naming_a_repository_not_indexed_says_so_and_shows_the_active_one() -> None:
    app = session(repo="flask", similarity_drop_threshold="2.5")
    warnings = "\n".join(w.value for w in app.warning)
    assert "'flask', which is not indexed in this database" in warnings
    assert "similarity_drop_threshold" in warnings  # the bad value is refused, said, and nothing else lost
    assert app.query_params["repo"] in {"inventory_py", "shortlink_go"}
    assert "What came in" in texts(app)


def test_a_linked_parameter_set_is_the_one_every_page_traces() -> None:
    app = session(repo="inventory_py", similarity_drop_threshold="0.45")
    open_page(app, "pages/4_Hierarchy.py")
    app.button(key="hierarchy:save").click().run()  # saved as "tuned"
    assert_clean(app)
    app.selectbox(key="hierarchy:set").set_value("tuned").run()
    assert app.query_params["set"] == "tuned"

    linked = session(repo="inventory_py", set="tuned")
    for page, key in (("pages/5_Query.py", "query:set"), ("pages/7_Walkthrough.py", "walk:set")):
        open_page(linked, page)
        assert linked.selectbox(key=key).value == "tuned", page
    assert linked.query_params["set"] == "tuned"
    # The default set is the URL's default; a set this repository has not saved falls back to it.
    elsewhere = session(repo="inventory_py", set="no-such-set")
    open_page(elsewhere, "pages/5_Query.py")
    assert elsewhere.selectbox(key="query:set").value == "default"
    assert "set" not in elsewhere.query_params


def test_the_similarity_page_says_what_the_threshold_does_and_what_it_does_to_retrieval() -> None:
    app = open_page(session(repo="inventory_py"), "pages/3_Similarity.py")
    boundaries = next(m.value for m in app.metric if m.label == "Topic boundaries")
    line = next(c.value for c in app.caption if c.value.startswith("Under the valley rule"))
    assert f"0.60 → {boundaries}" in line and "0.50 → " in line and "0.70 → " in line
    recall = {m.label: m.value for m in app.metric if m.label.startswith("Recall@10")}
    assert set(recall) == {"Recall@10, two stages", "Recall@10, flat"}
    assert "of the repository's own docstrings" in texts(app)
    # The seed's rule reads the other way.
    app.segmented_control(key="param:similarity:boundary_rule").set_value("threshold").run()
    assert_clean(app)
    assert any(c.value.startswith("Under the threshold rule") for c in app.caption)
    assert "Measured in" in texts(app) and "kept for this setting" in texts(app)


def test_the_walkthrough_traces_the_shipped_mode_and_says_how_stage_one_ran() -> None:
    from hsc import Parameters

    app = open_page(session(repo="inventory_py"), "pages/7_Walkthrough.py")
    app.selectbox(key="walk:file").set_value("inventory/pricing.py").run()
    app.text_input(key="walk:query:inventory/pricing.py").input("apply a percentage discount to a price")
    next(b for b in app.button if b.label == "Follow it through both stages").click().run()
    assert_clean(app)
    shipped = Parameters().retrieval_mode
    assert f"Traced in `{shipped}` mode" in texts(app)
    # The sample's 34 groups: stage 1 widened to a tenth of the leaves asks for more than 2% of them.
    assert "scores all" in texts(app) and "skips the HNSW index" in texts(app)
    app.segmented_control(key="walk:mode:inventory/pricing.py").set_value("two-stage").run()
    assert_clean(app)
    assert "Traced in `two-stage` mode" in texts(app)
    # Every page's sidebar explains the seed once.
    glossary = [e for e in app.sidebar.expander if e.label == "Glossary"]
    assert len(glossary) == 1 and "the seed" in "\n".join(m.value for m in glossary[0].markdown)


def test_the_group_table_names_each_file_once_and_scopes_without_their_module() -> None:
    app = open_page(session(repo="inventory_py"), "pages/4_Hierarchy.py")
    [groups] = [d.value for d in app.dataframe if "summary" in d.value.columns]
    named = [p for p in groups["path"] if p]
    assert len(named) == len(set(named)) == groups["path"].nunique() - ("" in set(groups["path"]))
    assert "" in set(groups["path"]) and groups["path"].iloc[0]  # later groups of a file leave it blank
    assert not groups["scope"].str.startswith("inventory.pricing.").any()
