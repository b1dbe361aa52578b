"""The Query page's context pack in a real browser (``streamlit run``, headless Chromium): the
budget line is read whole at every width, never cut off with an ellipsis."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_browser import (  # noqa: F401 - fixtures used by name
    CHROMIUM,
    CHROMIUM_ARGS,
    FIRST_PAGE_MS,
    PAGE_MS,
    VIEWPORT,
    _check_and_shoot,
    _go,
    _settle,
    artifacts,
    server,
)
from tests.test_browser_teaching import require_browser

pytestmark = pytest.mark.browser

# Every element of the budget line whose text overflows its box (an ellipsis, or text hidden).
CUT_OFF = """(metric) => [metric, ...metric.querySelectorAll('*')]
  .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
  .map(e => e.textContent)"""


def test_the_budget_line_is_never_cut_off(server, artifacts: Path) -> None:  # noqa: F811
    sync_playwright = require_browser()
    url, log = server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url)
            page.get_by_text("What came in").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            _go(page, "Query")
            box = page.get_by_role("textbox", name="Query", exact=True)
            box.fill("take a percentage off a price")
            box.press("Enter")
            page.get_by_role("heading", name="What a model would be given").wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            # The sidebar open takes a third of a laptop's width: the main column is narrow then.
            for width in (VIEWPORT["width"], 1024, 800, 420):
                page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
                page.wait_for_timeout(700)
                budget = page.locator('[data-testid="stMetric"]').filter(has_text="Budget used")
                assert budget.count() == 1
                budget.scroll_into_view_if_needed()
                text = budget.inner_text()
                assert "Budget used, of 2,048 tokens" in text, text
                cut = budget.evaluate(CUT_OFF)
                assert cut == [], (width, cut)
            page.set_viewport_size({"width": 800, "height": VIEWPORT["height"]})
            _check_and_shoot(page, "pack-budget-at-800", artifacts)
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()
