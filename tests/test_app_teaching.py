"""The teaching and tuning views, driven with AppTest on a real index of a
bundled sample (its own database; the model is loaded once per process)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from hsc import Index, Parameters

APP_DIR = Path(__file__).resolve().parent.parent
APP = APP_DIR / "app.py"
SAMPLE = APP_DIR / "sample_repos" / "inventory_py"
TIMEOUT = 240


@pytest.fixture(scope="module", autouse=True)
def app_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    database = tmp_path_factory.mktemp("hsc-teaching") / "app.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(database))
        patch.setenv("HSC_APP_REPO", str(SAMPLE))
        yield database


def open_page(page: str) -> AppTest:
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
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


def test_the_walkthrough_follows_one_file_through_every_stage(app_database: Path) -> None:
    app = open_page("pages/7_Walkthrough.py")
    headings = [h.value for h in app.subheader]
    for stage in ("1 ·", "2 ·", "3 ·", "4 ·", "5 ·", "Groups are neighbourhoods"):
        assert any(h.startswith(stage) for h in headings), headings
    # Syntax tree, sizes, curve and map are drawn; every chart saves as a named PNG.
    charts = app.get("plotly_chart")
    assert len(charts) == 3
    tree = frame_with(app, "became")
    assert tree["node"].iloc[0] == "module" and tree["became"].str.startswith("leaf").any()

    # Follow pricing.py: its boundaries, its summarised group, the query's winner.
    app.selectbox(key="walk:file").set_value("inventory/pricing.py").run()
    assert_clean(app)
    leaves = frame_with(app, "node type")
    assert len(leaves) == 15 and "apply_discount" in " ".join(leaves["scope"])
    assert "is what stage 1 reads as its text" in shown(app)
    app.text_input(key="walk:query:inventory/pricing.py").input("take a percentage off a price").run()
    assert_clean(app)
    assert "Stage 2\\'s winner is the flat search\\'s winner" in shown(app)
    assert "apply\\_discount" in shown(app)
    opened = frame_with(app, "leaves")
    assert len(opened) == 5 and list(opened["rank"]) == [1, 2, 3, 4, 5]

    # A set with a higher threshold cuts more: the curve and groups follow the set chosen.
    before = len(frame_with(app, "boundary after leaf"))
    with Index.open(app_database) as index:
        index.build(None, Parameters(similarity_drop_threshold=0.8, boundary_rule="threshold"), name="strict")
    app.run()
    app.selectbox(key="walk:set").set_value("strict").run()
    assert_clean(app)
    assert len(frame_with(app, "boundary after leaf")) > before
