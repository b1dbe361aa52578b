"""Before indexing: only the files that will be parsed are counted, at this machine's
measured rate, and the time left is corrected as the run goes. Paths a user excludes
(--exclude, .hscignore) stay out of the index and of the estimate, run after run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import ROOT

from hsc.api import Index
from hsc.index.estimate import (
    BYTES_PER_LEAF,
    GUESSED_BYTES_PER_SECOND,
    MEASURABLE_BYTES,
    MEASURABLE_LEAVES,
    TimeLeft,
)
from hsc.index.pipeline import Progress
from hsc.params import Settings

STDLIB = Path(sysconfig.get_paths()["stdlib"])
DYNLOAD = Path(sysconfig.get_config_var("DESTSHARED"))  # the compiled standard-library modules


@pytest.fixture()
def mixed_folder(tmp_path: Path) -> Path:
    """The json and email packages' source, and compiled extension modules beside them."""
    root = tmp_path / "mixed"
    for package in ("json", "email"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "compiled").mkdir()
    modules = sorted(DYNLOAD.glob("*.so"))[:12]
    assert len(modules) == 12
    for module in modules:
        shutil.copy(module, root / "compiled" / module.name)
    return root


def test_the_estimate_counts_only_files_that_will_be_parsed_at_the_measured_rate(mixed_folder, tmp_path):
    sources = [p for p in mixed_folder.rglob("*") if p.is_file() and p.suffix != ".so"]
    source_bytes = sum(p.stat().st_size for p in sources)
    assert source_bytes >= MEASURABLE_BYTES  # enough to measure the rate on
    with Index.open(tmp_path / "index.db", Settings(summariser="digest")) as index:
        before = index.survey(mixed_folder)
        assert before.files == len(sources) + 12
        empty = sum(1 for p in sources if p.stat().st_size == 0)  # skipped by indexing too
        assert before.parsed_files == len(sources) - empty and before.parsed_bytes == source_bytes
        assert before.bytes > source_bytes  # the compiled modules are seen, not counted
        assert not before.measured and before.bytes_per_second == GUESSED_BYTES_PER_SECOND
        assert "files to parse" in before.describe() and "first guess" in before.describe()
        report = index.index(mixed_folder)
        after = index.survey(mixed_folder)
        # A copy, every file parsed again but every vector cached: nothing embedded, nothing learned.
        cached = index.index(shutil.copytree(mixed_folder, tmp_path / "copy"))
        again = index.survey(mixed_folder)
    assert after.measured and "this machine" in after.describe()
    # The rate of leaves embedded, as the bytes they stand for, leaving out loading the encoder
    # (once per process): at least the run's average.
    assert report.leaves_embedded >= MEASURABLE_LEAVES
    assert after.bytes_per_second >= report.leaves_embedded * BYTES_PER_LEAF / report.seconds * 0.99
    assert report.bytes_parsed == source_bytes
    assert cached.files_parsed > 0 and cached.leaves_embedded == 0
    assert again.bytes_per_second == after.bytes_per_second


def test_the_time_left_moves_from_the_estimate_to_what_the_run_shows() -> None:
    clock = TimeLeft(expected_seconds=100.0)
    start = clock.started
    assert clock.seconds_left(now=start + 10) == pytest.approx(90.0)  # nothing done yet: the plan
    clock(Progress("files", 50, 100))  # half the files in 10 s: 10 s more, by the run itself
    assert clock.seconds_left(now=start + 10) == pytest.approx(0.5 * 90 + 0.5 * 10)
    clock(Progress("files", 90, 100))
    assert clock.seconds_left(now=start + 18) == pytest.approx(0.1 * 82 + 0.9 * 2)
    unplanned = TimeLeft()
    assert unplanned.seconds_left() is None
    unplanned(Progress("files", 10, 100))
    assert unplanned.seconds_left(now=unplanned.started + 5) == pytest.approx(45.0)


def hsc(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "hsc", *args], env=env, capture_output=True, text=True, timeout=600
    )


def indexed_paths(database: Path) -> set[str]:
    with Index.open(database, create=False) as index:
        return {row["path"] for row in index.files()}


def test_excludes_and_hscignore_are_kept_for_reruns(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(STDLIB / "json", repo / "json", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(STDLIB / "tomllib", repo / "tomllib", ignore=shutil.ignore_patterns("__pycache__"))
    database = tmp_path / "index.db"
    first = hsc("index", str(repo), "--db", str(database), "--exclude", "tomllib/", "--set=summariser=digest")
    assert first.returncode == 0, first.stderr
    assert "files to parse" in first.stderr
    paths = indexed_paths(database)
    assert paths and not any(path.startswith("tomllib/") for path in paths)
    (repo / ".hscignore").write_text("# generated\njson/tool.py\n")
    again = hsc("index", str(repo), "--db", str(database), "--json", "--quiet")  # no --exclude: kept
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files_removed"] == 1
    assert indexed_paths(database) == paths - {"json/tool.py"}
    with Index.open(database, Settings(summariser="digest")) as index:
        assert index.excludes(repo) == ["tomllib/"]
        index.index(repo, excludes=[])  # cleared: tomllib comes in, .hscignore still holds
        assert index.excludes(repo) == []
    now = indexed_paths(database)
    assert any(path.startswith("tomllib/") for path in now) and "json/tool.py" not in now
