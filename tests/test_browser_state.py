"""The app's state and its indexing jobs in a real browser: ``hsc app`` and headless Chromium.

A reload, a second tab and a bare address open the same view (the URL and the app's
database); a run started in one browser context outlives it and is watched to its end
from another; a worker killed mid-run is reported and resumed from the page.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import sysconfig
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

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

STDLIB = Path(sysconfig.get_paths()["stdlib"])
JOB_MS = 600_000  # indexing a thousand leaves on two loaded cores


def query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(url).query).items()}


def threshold_shown(page) -> str:
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="similarity_drop_threshold")
    return slider.locator('[data-testid="stSliderThumbValue"]').inner_text()


def test_a_reload_a_second_tab_and_a_bare_address_open_the_same_view(server, artifacts) -> None:  # noqa: F811
    sync_playwright = require_browser()
    url, log = server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.goto(url)
            page.get_by_text("What came in").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            assert query(page.url)["repo"] == "inventory_py"
            _go(page, "Similarity")
            _settle(page, PAGE_MS)
            raised = f"{float(threshold_shown(page)) - 0.15:.2f}"
            slider = page.locator('[data-testid="stSlider"]').filter(has_text="similarity_drop_threshold")
            slider.get_by_role("slider").focus()
            for _ in range(15):
                page.keyboard.press("ArrowLeft")
            slider.get_by_text(raised).wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            assert query(page.url)["similarity_drop_threshold"] == raised.rstrip("0")

            # F5: the same page, repository and threshold.
            page.reload()
            page.get_by_role("heading", name="Similarity").first.wait_for(timeout=PAGE_MS)
            _settle(page, PAGE_MS)
            assert threshold_shown(page) == raised
            page.locator('[data-testid="stSidebar"]').get_by_text("Parameters (1 changed)").wait_for()

            # A second tab on the same address, and a new window on the bare address.
            second = context.new_page()
            second.goto(page.url)
            second.get_by_role("heading", name="Similarity").first.wait_for(timeout=PAGE_MS)
            _settle(second, PAGE_MS)
            assert threshold_shown(second) == raised
            bare = browser.new_context(viewport=VIEWPORT).new_page()
            bare.goto(f"{url}/Similarity")
            bare.get_by_role("heading", name="Similarity").first.wait_for(timeout=PAGE_MS)
            _settle(bare, PAGE_MS)
            assert threshold_shown(bare) == raised
            assert query(bare.url)["repo"] == "inventory_py"
            _check_and_shoot(bare, "11-view-restored", artifacts)

            # A link naming a repository that is not indexed says so.
            bare.goto(f"{url}/?repo=flask")
            bare.get_by_text("which is not indexed in this database").wait_for(timeout=PAGE_MS)

            # The sidebar's parameter panel stays open while the count of changed parameters changes.
            sidebar = page.locator('[data-testid="stSidebar"]')
            sidebar.get_by_text("Show and change them").click()
            for name, value, count in (("leaf_level_top_k", "9", 2), ("mid_level_top_k", "4", 3)):
                box = sidebar.get_by_label(name, exact=True)
                box.fill(value)
                box.press("Enter")
                sidebar.get_by_text(f"Parameters ({count} changed)").wait_for(timeout=PAGE_MS)
                _settle(page, PAGE_MS)
                assert sidebar.get_by_label("embedding_batch_size", exact=True).is_visible()
            assert query(page.url)["leaf_level_top_k"] == "9"
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()


@pytest.fixture()
def large_repo(tmp_path: Path) -> Path:
    """The standard library's email, json and http packages: about 40 files, over a thousand leaves."""
    root = tmp_path / "stdlib_part"
    for package in ("email", "json", "http"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def job_row(database: Path, root: Path) -> dict:
    with sqlite3.connect(database) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute(
            "SELECT * FROM index_jobs WHERE root = ? ORDER BY id DESC LIMIT 1", (str(root),)
        ).fetchone()
        committed = conn.execute(
            "SELECT COUNT(*) FROM files f JOIN repositories r ON r.id = f.repository_id "
            "WHERE r.root = ? AND f.status = 'indexed'",
            (str(root),),
        ).fetchone()[0]
    conn.close()
    return {**dict(row), "committed": committed} if row else {"committed": committed}


def wait_for_job(database: Path, root: Path, ready, timeout_s: float = JOB_MS / 1000) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = job_row(database, root)
        if "state" in row and ready(row):
            return row
        time.sleep(0.2)
    raise AssertionError(f"the job never got there: {job_row(database, root)}")


def start_from_the_page(page, folder: Path) -> None:
    page.get_by_text("A folder on this machine").click()
    box = page.get_by_label("Folder path")
    box.fill(str(folder))
    box.press("Enter")
    _settle(page, PAGE_MS)
    page.get_by_role("button", name="Index", exact=True).click()
    page.get_by_text("a job of its own").first.wait_for(timeout=PAGE_MS)


def test_a_run_outlives_its_tab_and_a_killed_worker_is_resumed(
    server,  # noqa: F811
    artifacts,  # noqa: F811
    large_repo: Path,
    tmp_path: Path,
) -> None:
    sync_playwright = require_browser()
    url, log = server
    database = tmp_path / "app.db"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            first = browser.new_context(viewport=VIEWPORT)
            page = first.new_page()
            page.goto(url)
            page.get_by_text("What came in").wait_for(timeout=FIRST_PAGE_MS)
            _settle(page, PAGE_MS)
            start_from_the_page(page, large_repo)
            # Held still (SIGSTOP) while its only tab closes, so "still running" does not hang on speed.
            running = wait_for_job(database, large_repo, lambda r: r["state"] == "running" and r["pid"])
            os.killpg(running["pid"], signal.SIGSTOP)
            first.close()
            assert job_row(database, large_repo)["state"] == "running"
            os.killpg(running["pid"], signal.SIGCONT)

            # Another browser context sees the run, and watches it until a file is committed.
            other = browser.new_context(viewport=VIEWPORT).new_page()
            other.goto(url)
            other.get_by_text("a job of its own").first.wait_for(timeout=FIRST_PAGE_MS)
            going = wait_for_job(
                database, large_repo, lambda r: r["committed"] >= 1 or r["state"] != "running"
            )
            assert going["state"] == "running", going
            # The worker dies mid-run (as an out-of-memory kill would): the page says so, and resumes.
            os.killpg(going["pid"], signal.SIGKILL)
            other.get_by_role("button", name="Resume indexing").first.wait_for(timeout=PAGE_MS)
            _settle(other, PAGE_MS)
            other.get_by_text("did not finish").first.wait_for(timeout=PAGE_MS)
            kept = job_row(database, large_repo)["committed"]
            assert kept >= 1 and job_row(database, large_repo)["state"] == "crashed"
            _check_and_shoot(other, "12-job-crashed", artifacts)
            other.get_by_role("button", name="Resume indexing").first.click()
            other.get_by_text("Indexed stdlib_part").wait_for(timeout=JOB_MS)
            _settle(other, PAGE_MS)
            finished = job_row(database, large_repo)
            assert finished["state"] == "finished"
            assert json.loads(finished["outcome"])["report"]["files_unchanged"] >= kept
            _check_and_shoot(other, "13-job-resumed", artifacts)
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()
