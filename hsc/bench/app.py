"""``python -m hsc bench app``: the Streamlit app in a real browser, at scale.

Builds an index (a synthetic repository written straight through the
:class:`~hsc.store.Store`, no embedding; or a real folder with ``--path``),
starts ``streamlit run app.py`` on a free port, drives Chromium through every
page and through slider steps on the Similarity page, and reports:

- per page: the time from the click on its link until the page stopped
  changing (the last DOM mutation), the bytes the server sent, the browser's
  JS heap and DOM size afterwards;
- per slider step (threshold and window): the same, from the key press;
- every request the browser made that did not go to the app's own server.

Timings are printed, never asserted. Playwright is imported only here.
"""

from __future__ import annotations

import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hsc.lexical import leaf_term_text
from hsc.model import FileReport, Leaf
from hsc.params import Parameters, Settings

if TYPE_CHECKING:
    from playwright.sync_api import Page

APP_DIR = Path(__file__).resolve().parent.parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1440, "height": 1000}
LOCAL_HOSTS = ("127.0.0.1", "localhost")
# The page counts as done when nothing in it changed for this long.
QUIET_MS = 1000

# Records the time of the last change anywhere in the page, so a step's end is
# when the browser last drew something for it, not when a poll noticed.
_WATCH_MUTATIONS = """
window.__hscLastChange = performance.now();
new MutationObserver(() => { window.__hscLastChange = performance.now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
_BUSY = (
    "() => ['[data-testid=\"stStatusWidget\"]', '[data-stale=\"true\"]', '[data-testid=\"stSkeleton\"]']"
    ".some(s => document.querySelector(s) !== null)"
)


# -- a synthetic repository, written through the Store ------------------------------------------------


def synthetic_leaf(path: str, scope: str, line: int, tokens: int, number: int) -> Leaf:
    body = "\n".join(f"    value_{k} = compute_{number}(value_{k - 1}, {k})" for k in range(1, 9))
    text = f"def {scope.rsplit('.', 1)[-1]}(value_0):\n{body}\n    return value_8\n"
    return Leaf(
        path=path,
        language="python",
        node_type="function_definition",
        scope=scope,
        start_byte=0,
        end_byte=len(text),
        start_line=line,
        end_line=line + 10,
        text=text,
        token_count=tokens,
    )


def write_synthetic_index(
    database: Path, leaves: int = 20_000, seed: int = 0, settings: Settings | None = None
) -> dict[str, Any]:
    """A repository of ``leaves`` synthetic leaves in files of 5 to 60 leaves,
    in folders of about 20 files, with topic-structured vectors (as
    :func:`hsc.bench.perf.synthetic_table`), and its ``default`` hierarchy.

    Written through the Store as the pipeline writes a real one, so the app
    cannot tell the difference; nothing is embedded.
    """
    from hsc.api import CHUNK_FIELDS, Index
    from hsc.bench.perf import synthetic_table
    from hsc.pipeline import ingestion_key
    from hsc.store import Store
    from hsc.summarize import DigestSummarizer

    params, settings = Parameters(), settings or Settings()
    table = synthetic_table(leaves, seed=seed)
    root = f"/synthetic/repository-{leaves}"
    store = Store(database)
    store.vector_storage = settings.vector_storage
    repository_id = store.upsert_repository(root, f"synthetic-{leaves}")
    key, model = ingestion_key(params, settings), settings.embedding_model
    files = int(table.file_index[-1]) + 1
    paths = [f"pkg_{f // 200}/sub_{f // 20 % 10}/module_{f}.py" for f in range(files)]
    starts = np.searchsorted(table.file_index, np.arange(files + 1))
    for number, path in enumerate(paths):
        rows = range(int(starts[number]), int(starts[number + 1]))
        file_leaves = [
            synthetic_leaf(
                path,
                f"pkg.module_{number}.Class_{row // 7}.function_{row}",
                12 * (row - rows.start) + 1,
                int(table.token_counts[row]),
                row,
            )
            for row in rows
        ]
        store.save_vectors(
            model, {leaf.content_hash: table.vectors[row] for leaf, row in zip(file_leaves, rows)}
        )
        size = sum(len(leaf.text) for leaf in file_leaves)
        report = FileReport(path, "python", "indexed", "", size, f"synthetic-{number}")
        store.replace_file(repository_id, report, file_leaves, key, model, terms_of=leaf_term_text)
    store.update_repository(
        repository_id,
        embedding_model=model,
        tokenizer=settings.tokenizer,
        chunk_key=key,
        parameters=json.dumps({f: getattr(params, f) for f in CHUNK_FIELDS}),
        indexed_at=time.time(),
    )
    index = Index(store, settings, summarizer=DigestSummarizer())
    hierarchy = index.build(repository_id, params)
    index.close()
    return {"root": root, "files": files, "leaves": leaves, "groups": hierarchy["group_count"]}


# -- the app and the browser --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


@contextmanager
def streamlit_app(
    database: Path, repository: Path | str, log: Path, app_dir: Path = APP_DIR
) -> Iterator[tuple[str, int]]:
    """``streamlit run app.py`` (of ``app_dir``) on a free port of 127.0.0.1; yields (url, pid)."""
    port = free_port()
    env = dict(os.environ, HSC_APP_DB=str(database), HSC_APP_REPO=str(repository), HF_HUB_OFFLINE="1")
    env.pop("OLLAMA_HOST", None)
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--server.headless", "true"]
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=app_dir, env=env, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while not healthy(url):
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {process.returncode}:\n{log.read_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer within 90 s:\n{log.read_text()}")
            time.sleep(0.25)
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class BrowserWatch:
    """What a page sent and fetched: bytes from the app's websocket, and
    every request that left 127.0.0.1."""

    received_bytes: int = 0
    requests: int = 0
    external: list[str] = field(default_factory=list)
    runs_started: int = 0  # script runs the server began ("new_session" messages)
    runs_finished: int = 0  # and ended ("script_finished")
    finished_at: float = 0.0  # time.monotonic() when the last run's end arrived
    sent_at: float = 0.0  # and when the page last sent the server something (a widget's new value)

    def attach(self, page: Page) -> None:
        page.add_init_script(_WATCH_MUTATIONS)
        page.on("request", self._on_request)
        page.on("websocket", self._on_websocket)

    def _on_websocket(self, websocket: Any) -> None:
        websocket.on("framereceived", self._on_frame)
        websocket.on("framesent", self._on_sent)

    def _on_sent(self, payload: str | bytes) -> None:
        self.sent_at = time.monotonic()

    def _on_request(self, request: Any) -> None:
        self.requests += 1
        url = str(request.url)
        if url.startswith(("data:", "blob:", "about:")):
            return
        host = url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
        if host not in LOCAL_HOSTS:
            self.external.append(url)

    def _on_frame(self, payload: str | bytes) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.received_bytes += len(payload)
        if isinstance(payload, bytes):
            message = ForwardMsg()
            message.ParseFromString(payload)
            kind = message.WhichOneof("type")
            self.runs_started += kind == "new_session"
            if kind == "script_finished":
                self.runs_finished += 1
                self.finished_at = time.monotonic()


def wait_until_quiet(
    page: Page, watch: BrowserWatch, started_at: float, finished_before: int, timeout_ms: float = 120_000
) -> float:
    """Milliseconds from ``started_at`` (the page's ``performance.now()``) to
    the last change of the page, once a script run that began after it has
    finished (``finished_before``: the count of finished runs then), none is
    running, the page shows nothing busy and nothing changed for :data:`QUIET_MS`."""
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        page.wait_for_timeout(50)
        finished = watch.runs_finished > finished_before and watch.runs_finished >= watch.runs_started
        if not finished or page.evaluate(_BUSY):
            continue
        now, last = page.evaluate("() => [performance.now(), window.__hscLastChange]")
        if now - last >= QUIET_MS:
            return float(last - started_at)
    raise TimeoutError(
        f"the app kept changing past the timeout (runs started {watch.runs_started}, "
        f"finished {watch.runs_finished}, {finished_before} before; busy: {page.evaluate(_BUSY)})"
    )


def page_now(page: Page) -> float:
    return float(page.evaluate("() => performance.now()"))


def browser_memory(page: Page) -> dict[str, float]:
    session = page.context.new_cdp_session(page)
    session.send("Performance.enable")
    metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    session.detach()
    return {"js_heap_mb": round(metrics["JSHeapUsedSize"] / 2**20, 1), "dom_nodes": int(metrics["Nodes"])}


def process_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def page_titles(page: Page) -> list[str]:
    links = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
    # A link's text is its icon's name, then its label.
    return [text.strip().splitlines()[-1].strip() for text in links.all_inner_texts()]


def open_page(page: Page, title: str) -> None:
    page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]').filter(
        has_text=title
    ).first.click()


def page_problems(page: Page) -> list[str]:
    """The text of every exception or error box on the page."""
    boxes = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
    return [text.strip()[:200] for text in boxes.all_inner_texts()]


def metric_value(page: Page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return metric.locator('[data-testid="stMetricValue"]').inner_text()


def _step_slider(page: Page, watch: BrowserWatch, label: str, key: str) -> dict[str, Any]:
    slider = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")
    slider.focus()
    before = (metric_value(page, "Topic boundaries"), metric_value(page, "Mid-level groups"))
    sent, finished = watch.received_bytes, watch.runs_finished
    started, pressed = page_now(page), time.monotonic()
    page.keyboard.press(key)
    milliseconds = wait_until_quiet(page, watch, started, finished)
    after = (metric_value(page, "Topic boundaries"), metric_value(page, "Mid-level groups"))
    return {
        "ms": round(milliseconds),
        # Until the page sent the new value (the widget waits a little for more key presses).
        "sent_ms": round((watch.sent_at - pressed) * 1000),
        # Until the server's "run finished" reached the page: the script run plus the transfer.
        "server_ms": round((watch.finished_at - pressed) * 1000),
        "kb": round((watch.received_bytes - sent) / 1024),
        "changed": before != after,
    }


def percentile(values: list[float], share: float) -> float:
    """The ``share`` percentile of ``values`` (nearest rank: a value that occurred)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _summary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    times = [s["ms"] for s in steps]
    return {
        "steps": len(steps),
        "median_ms": round(statistics.median(times)),
        "p95_ms": round(percentile(times, 0.95)),
        "max_ms": max(times),
        "median_sent_ms": round(statistics.median(s["sent_ms"] for s in steps)),
        "median_server_ms": round(statistics.median(s["server_ms"] for s in steps)),
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


def prepare_index(database: Path, leaves: int, path: Path | None) -> dict[str, Any]:
    """The index to drive the app on: kept in ``database`` when it already holds
    it (a real folder is embedded once, minutes for ten thousand leaves), else built there."""
    from hsc.api import Index

    root = str(path.resolve()) if path is not None else f"/synthetic/repository-{leaves}"
    if database.exists():
        with Index.open(database) as index:
            known = next((r for r in index.repositories() if r["root"] == root), None)
            if known is not None and known["indexed_at"]:
                groups = index.hierarchies(int(known["id"]))
                return {
                    "root": root,
                    "files": known["file_count"],
                    "leaves": known["leaf_count"],
                    "groups": groups[0]["group_count"] if groups else 0,
                    "reused": True,
                }
    if path is None:
        return write_synthetic_index(database, leaves)
    with Index.open(database) as index:
        report = index.index(path)
        hierarchy = index.hierarchies(report.repository_id)[0]
    return {
        "root": root,
        "files": report.files_seen,
        "leaves": report.leaves,
        "groups": hierarchy["group_count"],
    }


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
    another version of the app), that app is driven first on the same index,
    so the two are compared within one run."""
    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is not installed: the app benchmark needs a real browser")
    apps = {"this app": APP_DIR}
    if against is not None:
        if not (against / "app.py").is_file():
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
            with streamlit_app(database, made["root"], log, app_dir) as (url, pid):
                runs[label] = {"app_dir": str(app_dir), **drive_app(url, pid, steps, page_timeout_s, pages)}
    return {"suite": "app", **made, "database": str(database), "setup_seconds": setup_seconds, "runs": runs}


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
                f"{step['median_sent_ms']} ms, run finished after {step['median_server_ms']} ms), "
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
