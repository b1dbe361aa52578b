"""The HTML report: written by the CLI, opened offline in a real browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from hsc.cli import main
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.test_browser_teaching import require_browser


@pytest.fixture(scope="module")
def report(indexed_samples, tmp_path_factory) -> Path:
    index, root, _ = indexed_samples
    out = tmp_path_factory.mktemp("report") / "report.html"
    code = main(
        [
            "report",
            "--db",
            str(index.store.path),
            "--repo",
            str(root / "inventory_py"),
            "--out",
            str(out),
            "--query",
            "take a percentage off a price",
        ]
    )
    assert code == 0
    return out


def test_the_report_holds_counts_parameters_and_the_query(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    assert "<h1>inventory_py</h1>" in page
    for part in ("Parameters", "Similarity of neighbouring leaves", "Hierarchy", "Sample queries"):
        assert f"<h2>{part}</h2>" in page
    assert "similarity_drop_threshold" in page and "inventory.pricing.apply_discount" in page
    # No script or style is fetched: plotly.js is inline, fonts are the reader's own.
    assert "<script src" not in page and "<link" not in page and "@import" not in page


def test_the_report_renders_offline_in_a_real_browser(report: Path, tmp_path: Path) -> None:
    sync_playwright = require_browser()
    fetched: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
            page = context.new_page()

            def block(route) -> None:  # noqa: ANN001 - playwright's Route
                if route.request.url.startswith("file://"):
                    route.continue_()
                else:
                    fetched.append(route.request.url)
                    route.abort()

            page.route("**/*", block)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(report.as_uri())
            plots = page.locator(".js-plotly-plot")
            plots.nth(2).wait_for(timeout=30_000)
            assert plots.count() == 3  # histogram, one file's curve, the treemap
            for number in range(3):
                assert plots.nth(number).locator(".main-svg").count() > 0
            assert plots.nth(0).locator(".barlayer .point").count() > 10  # histogram bars
            assert plots.nth(1).locator(".scatterlayer .trace").count() >= 3  # raw, smoothed, boundaries
            assert plots.nth(2).locator(".treemaplayer path").count() > 5

            # Every chart saves itself as a PNG from the modebar, offline too.
            plots.nth(1).hover()
            with page.expect_download() as download:
                plots.nth(1).locator('[data-title="Download plot as a PNG"]').click()
            saved = tmp_path / download.value.suggested_filename
            download.value.save_as(saved)
            assert saved.name.startswith("similarity-inventory") and saved.suffix == ".png"
            assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        finally:
            browser.close()
    assert fetched == [] and errors == []
