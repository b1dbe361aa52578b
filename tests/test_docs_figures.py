"""The documentation's benchmark tables say where they came from, and keep the rows their benchmarks report.

Each table names its command, the date its figures were recorded and the machine (``tests/doc_figures.py``).
Its row set is checked against the benchmark: ``bench quality`` and ``bench context`` are run here on one
small standard-library package (seconds; the row set does not depend on the corpus), the others' rows are
read from what their code reports (scale's sizes, the app's pages, the encoders suite's systems, the
extras of ``pyproject.toml``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import doc_figures
import pytest

from hsc.app.ui.layout import PAGES
from hsc.bench.encoder_quality import SYSTEMS as ENCODER_SYSTEMS
from hsc.bench.scale import SIZES
from hsc.quality.catalog import SYSTEM_NAMES

ROOT = Path(__file__).resolve().parent.parent
TABLES = doc_figures.all_tables()


def table(page: str, header: str, nth: int = 0) -> doc_figures.Table:
    found = [t for t in TABLES if t.page == page and t.header.startswith(header)]
    assert len(found) > nth, f"docs/{page} has no table starting {header!r}"
    return found[nth]


def names(column: list[str]) -> set[str]:
    """A column's labels without Markdown emphasis or code marks, and without a note in brackets."""
    return {re.sub(r"\s*\(.*\)$", "", cell.replace("**", "").replace("`", "")).strip() for cell in column}


def bench(suite: str, *arguments: str, out: Path) -> dict:
    """One benchmark run as a user runs it, on the standard library's json package (14 queries)."""
    done = subprocess.run(
        [sys.executable, "-m", "hsc", "bench", suite, *arguments, "--json", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_every_benchmark_table_names_its_command_date_and_machine() -> None:
    benchmarks = [t for t in TABLES if t.benchmark]
    assert len(benchmarks) >= 15, [f"{t.page}:{t.line}" for t in benchmarks]
    missing = [f"docs/{t.page}:{t.line} {t.header[:60]}" for t in benchmarks if not t.source]
    assert not missing, (
        "a benchmark table without its '> Benchmark: `command` · recorded DATE · machine' line"
    )
    for t in benchmarks:
        assert t.source["command"].startswith(("python -m hsc ", "make ")), t.source["command"]
        assert t.source["machine"].strip(), f"{t.page}:{t.line}"


def test_the_source_line_is_read_as_written() -> None:
    line = "> Benchmark: `python -m hsc bench spread` · recorded 2026-12-03 · 2-core x86-64, 24 GiB"
    match = doc_figures.SOURCE.match(line)
    assert match and match["command"] == "python -m hsc bench spread" and match["date"] == "2026-12-03"
    assert not doc_figures.SOURCE.match(line.replace(" · recorded 2026-12-03", ""))  # no date: no source
    assert doc_figures.runnable("python -m hsc bench quality --out DIR")
    assert not doc_figures.runnable("python -m hsc bench app --db x.db --against BEFORE")


@pytest.fixture(scope="module")
def json_package() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]) / "json"


def test_the_quality_tables_list_the_systems_bench_quality_reports(
    tmp_path: Path, json_package: Path
) -> None:
    run = bench("quality", "--path", str(json_package), "--no-sweep", "--no-png", out=tmp_path)
    reported = [row["system"] for row in run["systems"]]
    assert reported == list(SYSTEM_NAMES)
    for nth in (0, 1):
        shown = names(table("quality.md", "| system | R@1", nth).column(0))
        assert shown == set(reported), shown ^ set(reported)


# The context tables name the benchmark's systems in words; the benchmark's own names beside them.
CONTEXT_ROWS = {
    "leaves in rank order, flat": "leaves (flat)",
    "leaves in rank order, hybrid": "leaves (hybrid)",
    "each leaf, then its group": "leaf + parent group",
    "auto-merging": "auto-merging",
    "windows of 256 tokens, 64 overlap": "windows 256/64",
    "context pack, flat ranking": "context pack (flat)",
    "context pack, hybrid": "context pack (hybrid)",
    "the pack given a perfect ranking": "ceiling (perfect ranking)",
}


def test_the_context_tables_list_the_systems_bench_context_reports(tmp_path: Path) -> None:
    run = bench("context", "--packages", "json", out=tmp_path)
    reported = set(run["table"])
    for nth in (0, 1):
        shown = {
            CONTEXT_ROWS.get(label, label) for label in names(table("context.md", "| system", nth).column(0))
        }
        assert shown == reported, shown ^ reported
        budgets = [cell.removesuffix(" tokens").replace(",", "") for cell in cells_of_header(nth)]
        assert budgets == list(next(iter(run["table"].values())))


def cells_of_header(nth: int) -> list[str]:
    return doc_figures.cells(table("context.md", "| system", nth).header)[1:]


def test_the_scale_table_has_a_row_per_size_bench_scale_measures() -> None:
    leaves = table("performance.md", "| leaves | groups").column(0)
    assert [int(cell.replace(",", "")) for cell in leaves] == list(SIZES)


def test_the_app_tables_time_every_page_of_the_app() -> None:
    titles = {title for _script, title, _icon in PAGES}
    rows = names(table("app-pages.md", "| first visit; again (ms)").column(0))
    assert titles <= rows, titles - rows
    pages_then = {
        title for cell in table("app-pages.md", "| pip, 9,474").column(0) for title in cell.split(" / ")
    }
    assert titles <= pages_then, titles - pages_then


def test_the_encoder_tables_have_the_systems_bench_encoders_scores() -> None:
    for header in ("| encoder, leaf vectors", "| encoder | docstring"):
        columns = names(doc_figures.cells(table("quality.md", header).header)[1:])
        systems = {column.split()[-1] for column in columns}
        assert systems == set(ENCODER_SYSTEMS), systems ^ set(ENCODER_SYSTEMS)
    per_query = names(table("encoders.md", "| queries | system").column(1))
    assert per_query <= set(ENCODER_SYSTEMS)


def test_the_install_table_has_a_row_per_extra() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    shown = {
        name
        for cell in table("install.md", "| install | adds").column(0)
        for name in re.findall(r"\[(\w+)\]", cell)
    }
    assert shown == extras, shown ^ extras
