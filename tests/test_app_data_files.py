"""The app with a real folder of code and data files: paths left out on the Repository page,
data files a class of their own on the Leaves page and out of the Hierarchy page's figures
until asked for (AppTest, a real SQLite file, the real model)."""

from __future__ import annotations

import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from hsc.api import Index

APP_DIR = Path(__file__).resolve().parent.parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])
TIMEOUT = 300


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The json package, the html package (with its entities table), and a generated folder."""
    root = tmp_path_factory.mktemp("app-data") / "tables"
    for package in ("json", "html"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(STDLIB / "encodings", root / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module", autouse=True)
def app_database(tmp_path_factory: pytest.TempPathFactory, folder: Path) -> Iterator[Path]:
    database = tmp_path_factory.mktemp("hsc-app-data") / "app.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(database))
        patch.setenv("HSC_APP_REPO", str(folder / "json"))  # the first start indexes something small
        yield database


def checked(app: AppTest) -> AppTest:
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    return app


def test_excluded_paths_stay_out_and_data_files_are_a_class(folder: Path, app_database: Path) -> None:
    app = checked(AppTest.from_file(str(APP_DIR / "hsc" / "app" / "app.py"), default_timeout=TIMEOUT).run())
    app.radio(key="repo:source").set_value("A folder on this machine").run()
    app.text_input(key="repo:path").input(str(folder)).run()
    checked(app.text_input(key="repo:exclude").input("generated/").run())
    estimate = "\n".join(str(c.value) for c in app.caption)
    assert "files to parse" in estimate, estimate
    checked(app.button(key="repo:index").click().run())
    assert "Indexed tables" in "\n".join(s.value for s in app.success)

    with Index.open(app_database, create=False) as index:
        repository_id = index.find_repository(folder)
        paths = {row["path"] for row in index.files(repository_id)}
        assert "html/entities.py" in paths and not any(p.startswith("generated/") for p in paths)
        assert index.excludes(folder) == ["generated/"]
        assert index.data_files(repository_id) == {"html/entities.py"}

    checked(app.switch_page("pages/2_Leaves.py").run())
    assert "data" in app.multiselect(key="leaves:classes").options
    assert any("left out of the figures" in str(c.value) for c in app.caption)

    checked(app.switch_page("pages/4_Hierarchy.py").run())
    toggle = app.toggle(key="hierarchy:with_data")
    assert toggle.label == "Include 1 data files" and toggle.value is False
