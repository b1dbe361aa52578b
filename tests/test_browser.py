"""End to end in a real browser: ``streamlit run app.py`` and headless Chromium.

One walk through every page, as a person would click it, with a screenshot
of each in ``HSC_ARTIFACTS`` (or the test's temporary folder). Any Python
exception or error box on a page, or a traceback in the server's log, fails.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hsc import Parameters
from hsc.bench.app import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, streamlit_app

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

APP_DIR = Path(__file__).resolve().parent.parent
SAMPLE = APP_DIR / "hsc" / "samples" / "inventory_py"
# The first page load opens the model and indexes the sample: allow for slow machines.
FIRST_PAGE_MS = 240_000
PAGE_MS = 90_000
GRID_ROW_PX = 35  # height of a header or body row in st.dataframe's grid


def _browser_missing(reason: str) -> None:
    """Skip without a browser, unless CI said one must be there."""
    if os.environ.get("HSC_REQUIRE_BROWSER") == "1":
        pytest.fail(f"HSC_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    configured = os.environ.get("HSC_ARTIFACTS", "").strip()
    folder = Path(configured) if configured else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app on a free port, with its own empty database; yields (url, log)."""
    log = tmp_path / "streamlit.log"
    with streamlit_app(tmp_path / "app.db", SAMPLE, log) as (url, _):
        yield url, log


def _settle(page: Page, timeout_ms: int) -> None:
    """Wait until the script has stopped running and the page stopped changing.

    Running shows as the status widget ("Running…"), but not for short runs;
    elements of the previous run stay marked stale until the new run replaces
    them, which is the surer sign. Either can begin a moment after a click, so
    "idle" must hold for a while before it counts.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since: float | None = None
    busy_signs = ('[data-testid="stStatusWidget"]', '[data-stale="true"]', '[data-testid="stSkeleton"]')
    while time.monotonic() < deadline:
        busy = any(page.locator(sign).count() > 0 for sign in busy_signs)
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.0:
            page.wait_for_timeout(500)  # plotly draws after the element arrives
            return
        page.wait_for_timeout(200)
    raise AssertionError("the app kept running past the timeout")


def _check_and_shoot(page: Page, name: str, folder: Path) -> Path:
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, f"{name}: {exceptions.first.inner_text()}"
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, f"{name}: {errors.first.inner_text()}"
    return _shoot(page, name, folder)


def _shoot(page: Page, name: str, folder: Path) -> Path:
    # Streamlit scrolls inside its main element, so grow the window to the content to capture all of it.
    height = page.evaluate(
        "() => Math.max(...['[data-testid=\"stMain\"]', '[data-testid=\"stMainBlockContainer\"]']"
        ".map(s => document.querySelector(s)).filter(Boolean).map(e => e.scrollHeight), 800)"
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 40, 6000)})
    page.wait_for_timeout(700)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def _go(page: Page, title: str) -> None:
    page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]').filter(
        has_text=title
    ).first.click()
    page.get_by_role("heading", name=title).first.wait_for(timeout=PAGE_MS)


def test_every_page_renders_in_a_real_browser(server: tuple[str, Path], artifacts: Path) -> None:
    if not CHROMIUM.exists():
        _browser_missing(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_missing("the playwright package is not installed")
    url, log = server
    shots: list[Path] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url)

            # Repository: the first visit indexes the default sample, with progress bars.
            page.locator('[data-testid="stProgress"]').first.wait_for(timeout=FIRST_PAGE_MS)
            page.wait_for_timeout(1500)  # let a few files go by
            shots.append(_shoot(page, "0-first-start-indexing", artifacts))
            page.get_by_text("What came in").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            assert page.get_by_text("inventory_py").count() > 0
            shots.append(_check_and_shoot(page, "1-repository", artifacts))

            _go(page, "Leaves")
            page.locator(".js-plotly-plot").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            # Pick the 4th leaf (the third of cli.py; the page opens on code, so README.md's leaves are
            # not listed) in the grid, which is a canvas: click where its row is.
            table = page.locator('[data-testid="stDataFrame"]').first
            table.scroll_into_view_if_needed()
            grid = table.bounding_box()
            assert grid is not None
            page.mouse.click(grid["x"] + 14, grid["y"] + GRID_ROW_PX * 4 + GRID_ROW_PX / 2)
            page.get_by_text("Leaf 3 of 5 in its file").wait_for(timeout=PAGE_MS)
            page.locator('[data-testid="stCode"]').first.wait_for(timeout=PAGE_MS)  # read once picked
            _settle(page, PAGE_MS)
            shots.append(_check_and_shoot(page, "2-leaves", artifacts))

            # Similarity: nudge the threshold up with the keyboard, as a person tuning it would.
            _go(page, "Similarity")
            page.locator(".js-plotly-plot").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            threshold = page.locator('[data-testid="stSlider"]').filter(has_text="similarity_drop_threshold")
            shown_value = threshold.locator('[data-testid="stSliderThumbValue"]')
            raised = f"{float(shown_value.inner_text()) + 0.10:.2f}"
            threshold.get_by_role("slider").focus()
            for _ in range(10):  # one step (0.01) per press
                page.keyboard.press("ArrowRight")
            threshold.get_by_text(raised).wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            # The sidebar, drawn before the slider (a fragment) moved, says so on this page already.
            sidebar = page.locator('[data-testid="stSidebar"]')
            sidebar.get_by_text("Parameters (1 changed)").wait_for(timeout=PAGE_MS)
            shots.append(_check_and_shoot(page, "3-similarity", artifacts))
            # The sliders' grouping against the saved default set.
            page.get_by_text("Compare with a saved set, and save").click()
            page.get_by_text("Save the current parameters as").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            shots.append(_check_and_shoot(page, "8-similarity-tuning", artifacts))

            # Hierarchy: save the tuned parameters, then the two sets are compared.
            _go(page, "Hierarchy")
            page.locator(".js-plotly-plot").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            page.get_by_role("button", name="Save current parameters").click()
            page.get_by_text("Leaves that moved").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            # No Ollama here: the page must say so plainly, as a warning, and keep working.
            page.get_by_role("button", name="Summarise with Ollama").click()
            page.get_by_text("No Ollama server answers").wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            # Only the threshold was changed, on the Similarity page; every other page agrees.
            assert page.get_by_text("Parameters (1 changed)").count() == 1
            shots.append(_check_and_shoot(page, "4-hierarchy", artifacts))
            page.get_by_text("Show which groups were split, merged or moved").click()
            page.get_by_text("Unchanged").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            shots.append(_check_and_shoot(page, "9-hierarchy-diff", artifacts))

            # Query: type, press Enter, see the two rankings beside the flat one.
            _go(page, "Query")
            box = page.get_by_role("textbox", name="Query", exact=True)
            mid_k, leaf_k = Parameters().mid_level_top_k, Parameters().leaf_level_top_k
            for query in ("take a percentage off a price", "add tax to a price"):
                box.fill(query)
                box.press("Enter")
                page.get_by_text("Stage 2 · the answer").wait_for(timeout=PAGE_MS)
                _settle(page, PAGE_MS)
                assert (
                    page.get_by_text(f"mid_level_top_k = {mid_k}, leaf_level_top_k = {leaf_k}").count() == 1
                )
                assert page.get_by_text("stage 1 opened").count() == 1
                # Beside the two stages, the region answer: files and definitions.
                assert page.get_by_text("Where to look · files and definitions").count() == 1
                # The picker names the hit whose code is shown under it, for the second query too
                # (a picker kept between queries went on naming the first query's hit).
                shown = page.get_by_role("combobox", name="Result").input_value().strip()
                header = page.locator('[data-testid="stText"]').filter(has_text=" · score ").first
                path, lines, _ = header.inner_text().split(" · ")
                assert shown.startswith("two-stage #1 · ") and shown.endswith(f"{path} {lines}"), (
                    shown,
                    path,
                )
            assert "add_tax" in shown
            # Below the rankings, what a model would be given: the budget used and the prompt text.
            page.get_by_role("heading", name="What a model would be given").wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            assert page.get_by_text("Budget used").count() == 1
            prompt = page.locator('[data-testid="stCode"]').filter(has_text="### inventory/pricing.py")
            assert prompt.count() == 1 and "def add_tax" in prompt.inner_text()
            shots.append(_check_and_shoot(page, "5-query", artifacts))
            # One query answered by the two saved sets side by side.
            both = page.get_by_role("textbox", name="Query for both sets")
            both.fill("take a percentage off a price")
            both.press("Enter")
            page.get_by_text("Leaves scored, tuned").wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            shots.append(_check_and_shoot(page, "10-query-two-sets", artifacts))
        finally:
            browser.close()

    server_log = log.read_text()
    assert "Traceback" not in server_log, server_log
    print("screenshots:", *map(str, shots), sep="\n  ")


# The overview chart, watched: neither replaced (a new element) nor drawn again in place.
WATCH_OVERVIEW = """() => {
  const chart = document.querySelector('.js-plotly-plot');
  if (chart !== window.__overview) {
    chart.on('plotly_afterplot', () => { chart.__redrawn = true; });
  }
  chart.__redrawn = false;
  window.__overview = chart;
}"""
OVERVIEW_UNTOUCHED = "() => window.__overview.isConnected && !window.__overview.__redrawn"


def test_every_page_opens_on_a_large_index_and_nothing_leaves_the_machine(
    tmp_path: Path, artifacts: Path
) -> None:
    """A synthetic index of 3,000 leaves (real SQLite, written through the Store):
    every page in the sidebar opens without an error, the Similarity page shows
    an overview and a window, a slider step reruns it, and every request the
    browser makes goes to the app's own server (favicon and fonts included)."""
    if not CHROMIUM.exists():
        _browser_missing(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_missing("the playwright package is not installed")
    from hsc.bench.app import (
        BrowserWatch,
        last_chart_drawn,
        open_page,
        page_now,
        page_problems,
        page_titles,
        streamlit_app,
        wait_until_quiet,
        write_synthetic_index,
    )

    database = tmp_path / "large.db"
    made = write_synthetic_index(database, leaves=3000)
    watch = BrowserWatch()
    with streamlit_app(database, made["root"], tmp_path / "streamlit.log") as (url, _):
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport=VIEWPORT)
                watch.attach(page)
                page.goto(url)
                page.get_by_role("heading", name="Repository").first.wait_for(timeout=FIRST_PAGE_MS)
                wait_until_quiet(page, watch, 0.0, 0, timeout_ms=FIRST_PAGE_MS)
                titles = page_titles(page)
                assert {"Repository", "Leaves", "Similarity", "Hierarchy", "Query"} <= set(titles)
                for title in titles:
                    finished = watch.runs_finished
                    open_page(page, title)
                    page.get_by_role("heading", name=title).first.wait_for(timeout=PAGE_MS)
                    wait_until_quiet(page, watch, page_now(page), finished, timeout_ms=PAGE_MS)
                    assert page_problems(page) == [], title
                    if title == "Similarity":
                        assert page.locator(".js-plotly-plot").count() == 2  # overview and window
                        boundaries = page.locator('[data-testid="stMetric"]').filter(
                            has_text="Topic boundaries"
                        )
                        before = boundaries.inner_text()
                        slider = page.locator('[data-testid="stSlider"]').filter(
                            has_text="smoothing_window_size"
                        )
                        slider.get_by_role("slider").focus()
                        # A slider step redraws the window's chart and the counts; the overview (the
                        # first chart) depends on neither slider, so it is left as drawn.
                        page.evaluate(WATCH_OVERVIEW)
                        finished, started = watch.runs_finished, page_now(page)
                        page.keyboard.press("ArrowRight")
                        wait_until_quiet(page, watch, started, finished, timeout_ms=PAGE_MS)
                        assert boundaries.inner_text() != before
                        assert last_chart_drawn(page) > started
                        assert page.evaluate(OVERVIEW_UNTOUCHED)
                        _shoot(page, "6-similarity-large", artifacts)
                        page.evaluate(WATCH_OVERVIEW)  # the screenshot resized the page: charts redrew
                        before = boundaries.inner_text()
                        threshold = page.locator('[data-testid="stSlider"]').filter(
                            has_text="similarity_drop_threshold"
                        )
                        threshold.get_by_role("slider").focus()
                        finished, started = watch.runs_finished, page_now(page)
                        for _ in range(5):  # 0.05 higher: some pair of 3,000 crosses it
                            page.keyboard.press("ArrowRight")
                        wait_until_quiet(page, watch, started, finished, timeout_ms=PAGE_MS)
                        assert boundaries.inner_text() != before
                        assert last_chart_drawn(page) > started
                        assert page.evaluate(OVERVIEW_UNTOUCHED)
                    if title == "Hierarchy":
                        _shoot(page, "7-hierarchy-large", artifacts)
                        # A click on a folder of the sunburst opens it: the groups table follows.
                        assert page.get_by_text("groups in the whole repository").count() == 1
                        finished = watch.runs_finished
                        page.locator(".js-plotly-plot g.slice path.surface").nth(1).click()
                        wait_until_quiet(page, watch, page_now(page), finished, timeout_ms=PAGE_MS)
                        assert page.get_by_text("groups in folder pkg_").count() == 1
                        assert page_problems(page) == []
            finally:
                browser.close()
    assert watch.requests > 0
    assert watch.external == [], watch.external
