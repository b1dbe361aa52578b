"""The Walkthrough page in a real browser: ``streamlit run`` and headless
Chromium, the report and a chart downloaded as files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hsc.api import Index
from hsc.explore.structure import rule_count
from hsc.params import Parameters, with_values
from tests.test_browser import (  # noqa: F401 - fixtures used by name
    CHROMIUM,
    CHROMIUM_ARGS,
    FIRST_PAGE_MS,
    PAGE_MS,
    VIEWPORT,
    _browser_missing,
    _check_and_shoot,
    _settle,
    artifacts,
    server,
)

pytestmark = pytest.mark.browser

# For each chart: where its y axis title and its y tick labels are drawn, in page pixels.
AXIS_PLACEMENT = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
  const title = plot.querySelector('.g-ytitle text');
  const ticks = [...plot.querySelectorAll('.ytick text')].map(t => t.getBoundingClientRect());
  if (!title || !ticks.length) return [];
  const box = title.getBoundingClientRect();
  return [{title_left: box.left, title_right: box.right, ticks_left: Math.min(...ticks.map(t => t.left)),
           plot_left: plot.getBoundingClientRect().left}];
})"""


def require_browser() -> Any:
    """Playwright's ``sync_playwright``, or a skip (a failure under HSC_REQUIRE_BROWSER=1)."""
    if not CHROMIUM.exists():
        _browser_missing(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_missing("the playwright package is not installed")
    return sync_playwright


def test_the_walkthrough_renders_and_downloads_in_a_real_browser(
    server: tuple[str, Path],  # noqa: F811
    artifacts: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    sync_playwright = require_browser()
    url, log = server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(accept_downloads=True, viewport=VIEWPORT)
            page = context.new_page()
            # A link straight to the page works on a fresh server: it indexes the sample first.
            page.goto(f"{url}/Walkthrough")
            page.get_by_role("heading", name="Groups are neighbourhoods").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            plots = page.locator(".js-plotly-plot")
            assert plots.count() == 2  # leaf sizes and the similarity curve; the rest when asked for
            page.get_by_role("button", name="Follow it through both stages").click()
            page.get_by_text("Stage 1 · the groups opened").wait_for(timeout=PAGE_MS)
            # Step 6, for the same query: the pack's prompt text.
            page.get_by_role("heading", name="6 · What a model would be given").wait_for(timeout=PAGE_MS)
            page.locator('[data-testid="stCode"]').filter(has_text="### inventory/").first.wait_for(
                timeout=PAGE_MS
            )
            page.get_by_text("Draw the map of the leaf vectors").click()
            page.get_by_text("coloured by its group").wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            assert plots.count() == 3  # and the leaf map
            shot = _check_and_shoot(page, "7-walkthrough", artifacts)

            # The curve saves as a PNG named after the file it shows.
            curve = plots.nth(1)
            curve.scroll_into_view_if_needed()
            curve.hover()
            with page.expect_download() as png:
                curve.locator('[data-title="Download plot as a PNG"]').click()
            assert png.value.suggested_filename.startswith(
                "similarity-"
            ) and png.value.suggested_filename.endswith(".png")
            saved = tmp_path / "curve.png"
            png.value.save_as(saved)
            assert saved.read_bytes()[:4] == b"\x89PNG"

            # The report is made on click and opens offline.
            with page.expect_download(timeout=PAGE_MS) as report:
                page.get_by_role("button", name="Download a report (HTML)").click()
            saved = tmp_path / report.value.suggested_filename
            report.value.save_as(saved)
            assert saved.name == "hsc-report-inventory_py-default.html"
            assert "<h2>Sample queries</h2>" in saved.read_text(encoding="utf-8")

            # Opened on its own: every chart's y axis title sits left of its tick labels, inside the chart.
            report_page = context.new_page()
            report_page.goto(saved.as_uri())
            report_page.locator(".js-plotly-plot .ytick").first.wait_for(timeout=PAGE_MS)
            placed = report_page.evaluate(AXIS_PLACEMENT)
            assert placed and all(
                p["title_right"] <= p["ticks_left"] and p["title_left"] >= p["plot_left"] for p in placed
            ), placed
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()
    print("screenshot:", shot)


# The structural chart's nodes as the browser holds them: (id, label, parent) of each.
STRUCTURE_NODES = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.data[0].type === 'icicle');
  const trace = plot.data[0];
  return trace.ids.map((id, n) => [id, trace.labels[n], trace.parents[n]]);
}"""


def test_the_structural_levels_and_the_answering_level_show_in_a_real_browser(
    server: tuple[str, Path],  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    sync_playwright = require_browser()
    url, log = server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"{url}/Hierarchy")
            page.get_by_role("heading", name="Structural levels").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            page.locator(".js-plotly-plot .icicle").first.wait_for(timeout=PAGE_MS)
            nodes = page.evaluate(STRUCTURE_NODES)
            by_id = {node_id: (label, parent) for node_id, label, parent in nodes}
            # Folder → file → class → group → leaf, each under the one above it.
            assert by_id["folder:inventory"][1] == "repository"
            assert by_id["file:inventory/models.py"][1] == "folder:inventory"
            assert by_id["def:inventory/models.py:Item"] == ("class Item", "file:inventory/models.py")
            groups = [i for i, (_, parent) in by_id.items() if parent == "def:inventory/models.py:Item"]
            assert groups and all(i.startswith("group:") for i in groups)
            assert any(parent == groups[0] and i.startswith("leaf:") for i, (_, parent) in by_id.items())
            said = page.get_by_text("makes").first.inner_text()
            assert "valley makes" in said and "structure makes" in said
            # The counts the library gives for the app's own index: a structure group never crosses.
            with Index.open(log.parent / "app.db") as index:
                built = with_values(Parameters(), index.hierarchy(index.default_hierarchy())["parameters"])
                repository_id = int(index.repositories()[0]["id"])
                counts = {
                    rule: rule_count(index.preview(repository_id, replace(built, boundary_rule=rule)))
                    for rule in ("valley", "structure")
                }
            assert counts["structure"].crossing == 0 and counts["structure"].groups > 0
            for rule, count in counts.items():
                assert f"{rule} makes {count.groups} groups, {count.crossing} of them crossing" in said
            # The other rule redraws the groups from the stored vectors: more of them, as it cuts at
            # every container edge besides the valleys.
            valley_groups = sum(1 for i in by_id if i.startswith("group:"))
            rule = page.locator('[data-testid="stRadio"]').filter(has_text="Groups by boundary_rule")
            rule.get_by_text("structure", exact=True).click()
            _settle(page, PAGE_MS)
            redrawn = [node_id for node_id, _, _ in page.evaluate(STRUCTURE_NODES)]
            redrawn_groups = sum(1 for i in redrawn if i.startswith("group:"))
            assert redrawn_groups == counts["structure"].groups > valley_groups
            _check_and_shoot(page, "4-hierarchy-structure", artifacts)

            page.goto(f"{url}/Walkthrough")
            page.get_by_role("heading", name="7 · Which level answers").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            page.get_by_text("The class question:").wait_for(timeout=PAGE_MS)
            page.get_by_text("The function question:").wait_for(timeout=PAGE_MS)
            verdict = page.get_by_text("The class question was answered at the").inner_text()
            # The suggested file, persistence.py: each answer's level, and whether it is what was asked.
            assert "the function question was answered at the" in verdict
            assert "level (the definition asked about)" in verdict or "another region)" in verdict
            _check_and_shoot(page, "7-walkthrough-levels", artifacts)
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()
