"""``python -m hsc bench app``: the Streamlit app in a real browser, at scale.

Builds an index (a synthetic repository written straight through the
:class:`~hsc.store.Store`, no embedding; or a real folder with ``--path``),
starts the app (``hsc app``) on a free port, drives Chromium through every
page and through slider steps on the Similarity page, and reports:

- per page: the time from the click on its link until the page stopped
  changing (the last DOM mutation), the bytes the server sent, the browser's
  JS heap and DOM size afterwards;
- per slider step (threshold and window): the same, from the key press,
  with when the page sent the new value, when the run's end reached it and
  when the charts last finished drawing (the step's breakdown);
- every request the browser made that did not go to the app's own server.

Timings are printed, never asserted. Playwright is imported only here (the
browser helpers live in :mod:`hsc.bench.browser`, the index in
:mod:`hsc.bench.app_index`).
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hsc.bench.app_index import prepare_index, synthetic_leaf, write_synthetic_index
from hsc.bench.browser import (
    APP_DIR,
    CHROMIUM,
    CHROMIUM_ARGS,
    QUIET_MS,
    VIEWPORT,
    BrowserWatch,
    browser_memory,
    last_chart_drawn,
    metric_value,
    open_page,
    page_now,
    page_problems,
    page_titles,
    process_rss_mb,
    streamlit_app,
    wait_until_quiet,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

# Kept importable from here: the browser tests and the scale benchmark use them.
__all__ = [
    "APP_DIR",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "VIEWPORT",
    "BrowserWatch",
    "bench_app",
    "drive_app",
    "format_app",
    "last_chart_drawn",
    "open_page",
    "page_now",
    "page_problems",
    "page_titles",
    "prepare_index",
    "streamlit_app",
    "synthetic_leaf",
    "wait_until_quiet",
    "write_synthetic_index",
]


def _step_slider(page: Page, watch: BrowserWatch, label: str, key: str) -> dict[str, Any]:
    slider = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")
    slider.focus()
    before = (metric_value(page, "Topic boundaries"), metric_value(page, "Mid-level groups"))
    sent, finished = watch.received_bytes, watch.runs_finished
    started, pressed = page_now(page), time.monotonic()
    page.keyboard.press(key)
    milliseconds = wait_until_quiet(page, watch, started, finished)
    drawn = last_chart_drawn(page)
    after = (metric_value(page, "Topic boundaries"), metric_value(page, "Mid-level groups"))
    return {
        "ms": round(milliseconds),
        # Until the page sent the new value (the widget waits a little for more key presses).
        "sent_ms": round((watch.sent_at - pressed) * 1000),
        # Until the server's "run finished" reached the page: the script run plus the transfer.
        "server_ms": round((watch.finished_at - pressed) * 1000),
        # Until the last chart finished drawing its new data (None: no chart redrew).
        "drawn_ms": round(drawn - started) if drawn > started else None,
        "kb": round((watch.received_bytes - sent) / 1024),
        "changed": before != after,
    }


def percentile(values: list[float], share: float) -> float:
    """The ``share`` percentile of ``values`` (nearest rank: a value that occurred)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _summary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    times = [s["ms"] for s in steps]
    drawn = [s["drawn_ms"] for s in steps if s["drawn_ms"] is not None]
    return {
        "steps": len(steps),
        "median_ms": round(statistics.median(times)),
        "p95_ms": round(percentile(times, 0.95)),
        "max_ms": max(times),
        "median_sent_ms": round(statistics.median(s["sent_ms"] for s in steps)),
        "median_server_ms": round(statistics.median(s["server_ms"] for s in steps)),
        "median_drawn_ms": round(statistics.median(drawn)) if drawn else None,
        "median_kb": round(statistics.median(s["kb"] for s in steps)),
        "counts_changed": sum(s["changed"] for s in steps),
    }


def drive_app(
    url: str, server_pid: int, steps: int = 10, page_timeout_s: float = 120, pages: bool = True
) -> dict[str, Any]:
    """Open every page from the sidebar, then step the Similarity sliders.

    A page that is still changing after ``page_timeout_s`` is reported as
    None (over the timeout); the slider steps are then not measured."""
    from playwright.sync_api import sync_playwright

    watch = BrowserWatch()
    result: dict[str, Any] = {"pages": {}}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            watch.attach(page)
            started = time.monotonic()
            page.goto(url)
            page.get_by_role("heading", name="Repository").first.wait_for(timeout=300_000)
            wait_until_quiet(page, watch, 0.0, 0, timeout_ms=300_000)
            result["first_load_s"] = round(time.monotonic() - started - QUIET_MS / 1000, 1)
            titles = page_titles(page)
            # Twice round: the first visit of a page fills the caches, the second is what a person
            # moving between pages sees.
            for visit in ("first", "again") if pages else ():
                if any(page["first_ms"] is None for page in result["pages"].values()):
                    break  # a page still running blocks the links: the rest cannot be measured
                for title in [*titles[1:], titles[0]]:
                    sent, finished = watch.received_bytes, watch.runs_finished
                    started_at = page_now(page)
                    open_page(page, title)
                    page.get_by_role("heading", name=title).first.wait_for(timeout=120_000)
                    entry = result["pages"].setdefault(title, {})
                    try:
                        milliseconds: float | None = wait_until_quiet(
                            page, watch, started_at, finished, timeout_ms=page_timeout_s * 1000
                        )
                    except TimeoutError:
                        milliseconds = None  # reported as "over the timeout"
                    entry.setdefault("first_ms", None)
                    entry["problems"] = page_problems(page)
                    entry[f"{visit}_ms"] = round(milliseconds) if milliseconds is not None else None
                    entry[f"{visit}_kb"] = round((watch.received_bytes - sent) / 1024)
                    if visit == "again":
                        entry.update(browser_memory(page))
                    if milliseconds is None:
                        break
            if not pages or result["pages"].get("Similarity", {}).get("first_ms") is not None:
                _step_sliders(page, watch, steps, result)
        finally:
            browser.close()
    result["server_rss_mb"] = process_rss_mb(server_pid)
    result["requests"] = watch.requests
    result["external_requests"] = sorted(set(watch.external))
    return result


def _step_sliders(page: Page, watch: BrowserWatch, steps: int, result: dict[str, Any]) -> None:
    """Open the Similarity page, then nudge the threshold and the window, each up then down."""
    finished = watch.runs_finished
    open_page(page, "Similarity")
    page.get_by_role("heading", name="Similarity").first.wait_for(timeout=120_000)
    wait_until_quiet(page, watch, page_now(page), finished)
    keys = ["ArrowRight"] * (steps // 2) + ["ArrowLeft"] * (steps - steps // 2)
    threshold = [_step_slider(page, watch, "similarity_drop_threshold", key) for key in keys]
    window = [_step_slider(page, watch, "smoothing_window_size", key) for key in keys]
    result["threshold_step"] = _summary(threshold)
    result["window_step"] = _summary(window)
    result["after_steps"] = browser_memory(page)


def bench_app(
    leaves: int = 20_000,
    path: Path | None = None,
    steps: int = 10,
    page_timeout_s: float = 120,
    database: Path | None = None,
    against: Path | None = None,
    pages: bool = True,
) -> dict[str, Any]:
    """The app on a synthetic index of ``leaves`` leaves, or on the real folder
    ``path``; kept in ``database`` if given. With ``against`` (a checkout of
    another version of the app), that app is driven first, so the two are compared within one
    run: on the same synthetic index, or on ``path`` indexed by its own code."""
    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is not installed: the app benchmark needs a real browser")
    apps = {"this app": APP_DIR}
    if against is not None:
        if not any((against / script).is_file() for script in ("hsc/app/app.py", "app.py")):
            raise ValueError(f"{against} holds no app.py: pass a checkout of the app")
        apps = {"against": against.resolve(), **apps}
    with tempfile.TemporaryDirectory() as folder:
        database = database or Path(folder) / "app.db"
        started = time.perf_counter()
        made = prepare_index(database, leaves, path)
        setup_seconds = round(time.perf_counter() - started, 1)
        runs = {}
        for label, app_dir in apps.items():
            log = Path(folder) / f"streamlit-{len(runs)}.log"
            served = database
            if label == "against" and path is not None:
                served = index_with(app_dir, path, database.with_name(f"{database.stem}-against.db"))
            with streamlit_app(served, made["root"], log, app_dir) as (url, pid):
                runs[label] = {"app_dir": str(app_dir), **drive_app(url, pid, steps, page_timeout_s, pages)}
    return {"suite": "app", **made, "database": str(database), "setup_seconds": setup_seconds, "runs": runs}


def index_with(checkout: Path, path: Path, database: Path) -> Path:
    """``path`` indexed into ``database`` by the code of ``checkout`` (incremental when it is there):
    an older app cannot read the settings a newer version stores, so each version serves its own."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(checkout))
    command = [sys.executable, "-m", "hsc", "index", str(path.resolve()), "--db", str(database), "--quiet"]
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{checkout} could not index {path}: {done.stderr.strip()[-500:]}")
    return database


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def format_app(result: dict[str, Any]) -> str:
    runs = result["runs"]
    labels = list(runs)
    lines = [
        f"app: {result['root']}: {result['leaves']} leaves, {result['files']} files, "
        f"{result['groups']} groups (index {'reused' if result.get('reused') else 'built'} in "
        f"{result['setup_seconds']} s: {result['database']})",
    ]
    for label, run in runs.items():
        lines.append(f"  [{label}] {run['app_dir']}: first load {run['first_load_s']} s")
    header = "".join(f"{label + ' ' + what:>22}" for label in labels for what in ("first ms", "again ms"))
    lines.append(f"  {'page':<14}{header}")
    for title in runs[labels[-1]]["pages"]:
        cells = "".join(
            f"{_cell(runs[label]['pages'].get(title, {}).get(what)):>22}"
            for label in labels
            for what in ("first_ms", "again_ms")
        )
        lines.append(f"  {title:<14}{cells}")
    for label, run in runs.items():
        for title, page in run["pages"].items():
            if page.get("problems"):
                lines.append(f"  [{label}] {title} PROBLEMS: {page['problems']}")
    for name in ("threshold_step", "window_step"):
        for label, run in runs.items():
            step = run.get(name)
            if step is None:
                lines.append(
                    f"  [{label}] {name.replace('_', ' ')}: not measured (the Similarity page timed out)"
                )
                continue
            lines.append(
                f"  [{label}] {name.replace('_', ' ')}: median {step['median_ms']} ms, "
                f"p95 {step['p95_ms']} ms, max {step['max_ms']} ms (median: value sent after "
                f"{step['median_sent_ms']} ms, run finished after {step['median_server_ms']} ms, "
                f"charts drawn after {_cell(step.get('median_drawn_ms'))} ms), "
                f"{step['median_kb']} kB per step, "
                f"counts changed in {step['counts_changed']} of {step['steps']}"
            )
    for label, run in runs.items():
        after = run.get("after_steps", {})
        memory = f"JS heap {after['js_heap_mb']} MB, {after['dom_nodes']} DOM nodes; " if after else ""
        lines.append(f"  [{label}] after the steps: {memory}server RSS {run['server_rss_mb']} MB")
        lines.append(
            f"  [{label}] requests {run['requests']}, not to 127.0.0.1: {run['external_requests'] or 'none'}"
        )
    return "\n".join(lines)
