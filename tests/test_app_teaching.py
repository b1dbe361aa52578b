"""The teaching and tuning views, driven with AppTest on a real index of a
bundled sample (its own database; the model is loaded once per process)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from hsc import Index, Parameters
from hsc.app.ui.text import md
from hsc.integrations.tools import DEFAULT_BUDGET

APP_DIR = Path(__file__).resolve().parent.parent
APP = APP_DIR / "hsc" / "app" / "app.py"
SAMPLE = APP_DIR / "hsc" / "samples" / "inventory_py"
TIMEOUT = 240


@pytest.fixture(scope="module", autouse=True)
def app_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    database = tmp_path_factory.mktemp("hsc-teaching") / "app.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(database))
        patch.setenv("HSC_APP_REPO", str(SAMPLE))
        yield database


def open_page(page: str) -> AppTest:
    """A new session opened by a link to the sample (a bare address opens the last view kept)."""
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.query_params["repo"] = SAMPLE.name
    app.run()
    app.switch_page(page).run()
    assert_clean(app)
    return app


def assert_clean(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


def frame_with(app: AppTest, column: str) -> pd.DataFrame:
    """The one table on the page with this column."""
    found = [frame.value for frame in app.dataframe if column in frame.value.columns]
    assert len(found) == 1, [list(frame.value.columns) for frame in app.dataframe]
    return found[0]


def shown(app: AppTest) -> str:
    parts = [e.value for e in (*app.subheader, *app.markdown, *app.caption, *app.text, *app.success)]
    return "\n".join(str(p) for p in parts)


def follow_query(app: AppTest, path: str, text: str) -> None:
    """Type ``text`` in the query of ``path`` and run it through both stages."""
    app.text_input(key=f"walk:query:{path}").input(text)
    next(b for b in app.button if b.label == "Follow it through both stages").click().run()
    assert_clean(app)


def test_the_walkthrough_follows_one_file_through_every_stage(app_database: Path) -> None:
    app = open_page("pages/7_Walkthrough.py")
    headings = [h.value for h in app.subheader]
    stages = (
        "1 ·",
        "2 ·",
        "3 ·",
        "4 ·",
        "5 ·",
        "6 · What a model would be given",
        "Groups are neighbourhoods",
    )
    for stage in stages:
        assert any(h.startswith(stage) for h in headings), headings
    # Syntax tree, sizes and curve are drawn at once; the query and the map wait until asked for.
    assert len(app.get("plotly_chart")) == 2
    assert "Stage 1 · the groups opened" not in shown(app)
    tree = frame_with(app, "became")
    assert tree["node"].iloc[0] == "module" and tree["became"].str.startswith("leaf").any()
    app.toggle(key="walk:map:on").set_value(True).run()
    assert_clean(app)
    assert len(app.get("plotly_chart")) == 3
    assert "coloured by its group" in shown(app)

    # Follow pricing.py: its boundaries, its summarised group, the query's winner.
    app.selectbox(key="walk:file").set_value("inventory/pricing.py").run()
    assert_clean(app)
    leaves = frame_with(app, "node type")
    assert len(leaves) == 15 and "apply_discount" in " ".join(leaves["scope"])
    assert len(app.get("plotly_chart")) == 3  # the map stays drawn, now with this file's leaves
    follow_query(app, "inventory/pricing.py", "apply a percentage discount to a price")
    assert "Stage 2\\'s winner is the flat search\\'s winner" in shown(app)
    assert "apply\\_discount" in shown(app)
    opened = frame_with(app, "leaves")
    # At least mid_level_top_k groups, more while they hold under stage1_leaf_share of the leaves.
    assert len(opened) >= 5 and list(opened["rank"]) == list(range(1, len(opened) + 1))
    # Step 6: the same query's context pack, within its budget, the winner's code in the prompt text.
    spans = frame_with(app, "why it is here")
    assert spans["role"].iloc[0] == "hit" and spans["tokens"].sum() <= DEFAULT_BUDGET
    assert any(c.value.startswith("### ") and "def apply_discount" in c.value for c in app.code)
    assert "of them from this file" in shown(app)

    # A set with a higher threshold cuts more: the curve and groups follow the set chosen.
    before = len(frame_with(app, "boundary after leaf"))
    with Index.open(app_database) as index:
        index.build(None, Parameters(similarity_drop_threshold=0.8, boundary_rule="threshold"), name="strict")
    app.run()
    app.selectbox(key="walk:set").set_value("strict").run()
    assert_clean(app)
    assert len(frame_with(app, "boundary after leaf")) > before

    # One group per file: pricing.py's group is over maximum_merged_chunk_token_length, so its summary
    # is what stage 1 reads.
    with Index.open(app_database) as index:
        index.build(None, Parameters(similarity_drop_threshold=-1.0), name="whole-files")
    app.run()
    app.selectbox(key="walk:set").set_value("whole-files").run()
    assert_clean(app)
    assert "is what stage 1 reads as its text" in shown(app)


def test_the_walkthrough_asks_a_class_and_a_function_question_and_names_the_level() -> None:
    app = open_page("pages/7_Walkthrough.py")
    app.selectbox(key="walk:file").set_value("inventory/pricing.py").run()
    assert_clean(app)
    assert any(h.value == "7 · Which level answers" for h in app.subheader)
    levels = frame_with(app, "first region level")
    # Verified by running them: pricing.py's longest documented class and function, each asked in
    # its doc sentence, are answered by their own definition, and their first leaf is inside it.
    assert list(levels["question"]) == ["class", "function"]
    assert list(levels["asked of"]) == ["inventory.pricing.Promotion", "inventory.pricing.line_total"]
    assert list(levels["first region level"]) == ["definition", "definition"]
    assert list(levels["first region"]) == [
        "inventory.pricing.Promotion L43–59",
        "inventory.pricing.line_total L181–200",
    ]
    said = shown(app)
    assert "A named promotion that takes a percentage off items in some categories" in said
    # Said in each question's line and twice in the verdict under them.
    assert said.count("the definition asked about") == 4 and "not the definition asked about" not in said
    assert (
        md(
            "The class question was answered at the definition level (the definition asked about); "
            "the function question was answered at the definition level (the definition asked about)."
        )
        in said
    )


def walkthrough_of(app: AppTest, path: str) -> AppTest:
    app.switch_page("pages/7_Walkthrough.py").run()
    app.selectbox(key="walk:file").set_value(path).run()
    assert_clean(app)
    return app


def test_a_changed_file_is_never_shown_from_a_stale_cache(app_database: Path, tmp_path: Path) -> None:
    """The walkthrough is computed once per state of the index and kept: an
    edited file says so at once, and re-indexing it (from the app, or from
    another connection) shows its new leaves and map in the same session."""
    copy = tmp_path / "inventory_copy"
    shutil.copytree(SAMPLE, copy)
    with Index.open(app_database) as index:
        repository_id = index.index(copy).repository_id
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.session_state["active_repository_id"] = repository_id
    app.run()
    walkthrough_of(app, "inventory/pricing.py")
    app.toggle(key="walk:map:on").set_value(True).run()
    follow_query(app, "inventory/pricing.py", "apply a percentage discount to a price")
    assert "apply\\_discount" in shown(app) and len(frame_with(app, "became")) > 1  # the syntax tree
    assert "apply_discount" in app.get("plotly_chart")[-1].proto.spec  # the map's hover labels

    pricing = copy / "inventory" / "pricing.py"
    pricing.write_text(pricing.read_text().replace("apply_discount", "apply_price_reduction"))
    app.run()
    assert_clean(app)
    assert "changed on disk since it was indexed" in " ".join(w.value for w in app.warning)
    assert not [frame for frame in app.dataframe if "became" in frame.value.columns]

    # Re-indexed from the Repository page: leaves, the same query's trace and the map are new.
    app.switch_page("app.py").run()
    app.button(key="repo:reindex").click().run()
    assert_clean(app)
    walkthrough_of(app, "inventory/pricing.py")
    assert not app.warning
    scopes = " ".join(frame_with(app, "node type")["scope"])
    assert "apply_price_reduction" in scopes and "apply_discount" not in scopes
    assert "apply\\_price\\_reduction" in shown(app)  # the query asked before, traced again
    assert "apply_price_reduction" in app.get("plotly_chart")[-1].proto.spec

    # Re-indexed by another connection (a command line run beside the app): the same.
    pricing.write_text(pricing.read_text().replace("apply_price_reduction", "reduce_by_percentage"))
    with Index.open(app_database) as index:
        index.index(copy)
    app.run()
    assert_clean(app)
    scopes = " ".join(frame_with(app, "node type")["scope"])
    assert "reduce_by_percentage" in scopes and "apply_price_reduction" not in scopes
    assert "reduce_by_percentage" in app.get("plotly_chart")[-1].proto.spec


def metric(app: AppTest, label: str) -> str:
    for element in app.metric:
        if element.label == label:
            return str(element.value)
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in app.metric]}")


def test_tuning_compares_sets_and_asks_before_replacing_one() -> None:
    app = open_page("pages/3_Similarity.py")
    assert len(app.get("plotly_chart")) == 1  # the comparison waits until asked for
    app.toggle(key="tuning:similarity:on").set_value(True).run()
    # The seed's rule at a higher threshold cuts at every pair the default's valleys cut, and more:
    # a pure split of the default grouping (the valley rule alone is not monotone in the threshold).
    app.segmented_control(key="param:similarity:boundary_rule").set_value("threshold").run()
    app.slider(key="param:similarity:similarity_drop_threshold").set_value(0.7).run()
    assert_clean(app)
    before, after = metric(app, "Groups: default → current").split(" → ")
    assert int(after) > int(before) and int(metric(app, "Split")) > 0
    assert len(app.get("plotly_chart")) == 2  # the curve, and the two strips
    changes = frame_with(app, "groups before")
    assert set(changes["change"]) <= {"split", "merged", "moved"} and len(changes) == int(
        metric(app, "Split")
    )

    app.text_input(key="tuning:similarity:name").input("default").run()
    app.button(key="tuning:similarity:save").click().run()
    assert "holds the default parameters" in app.warning[0].value

    app.text_input(key="tuning:similarity:name").input("loose").run()
    app.button(key="tuning:similarity:save").click().run()
    assert_clean(app)
    assert "Saved loose" in app.success[0].value
    app.button(key="tuning:similarity:save").click().run()
    assert "exists already" in app.warning[0].value
    app.button(key="tuning:similarity:keep").click().run()
    assert not app.warning
    app.button(key="tuning:similarity:save").click().run()
    app.button(key="tuning:similarity:replace").click().run()
    assert_clean(app)
    assert "Saved loose" in app.success[0].value and not app.warning

    app.switch_page("pages/4_Hierarchy.py").run()
    assert_clean(app)
    app.toggle(key="tuning:hierarchy:on").set_value(True).run()
    app.selectbox(key="tuning:hierarchy:after").set_value("loose").run()
    assert metric(app, "Groups: default → loose") == f"{before} → {after}"

    app.switch_page("pages/5_Query.py").run()
    app.selectbox(key="tuning:query:first").set_value("default").run()
    app.selectbox(key="tuning:query:second").set_value("loose").run()
    app.text_input(key="tuning:query:text").input("apply a percentage discount to a price").run()
    assert_clean(app)
    rankings = frame_with(app, "loose ranks it")
    assert f"Answered in `{Parameters().retrieval_mode}` mode" in shown(app)  # the shipped mode, said
    assert rankings["default"].iloc[0].startswith("inventory.pricing.apply_discount")
    assert int(metric(app, "Leaves scored, default")) > 0
