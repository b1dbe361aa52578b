"""The app in a real browser: ``hsc app`` on a free port, and what a
headless Chromium page shows, sends and receives. Used by the app benchmark
and the browser tests; Playwright is imported by the callers, not here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page

# The checkout (or installed tree) this module belongs to: the one ``python -m hsc app`` serves.
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
# when the browser last drew something for it, not when a poll noticed; and
# when a Plotly chart last finished drawing (its "afterplot" event), to tell
# the charts' share of a step from the rest of the page's.
_WATCH_MUTATIONS = """
window.__hscLastChange = performance.now();
window.__hscLastPlot = 0;
new MutationObserver(() => {
  window.__hscLastChange = performance.now();
  for (const chart of document.querySelectorAll('.js-plotly-plot')) {
    if (chart.on && !chart.__hscWatched) {
      chart.__hscWatched = true;
      chart.on('plotly_afterplot', () => { window.__hscLastPlot = performance.now(); });
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
_BUSY = (
    "() => ['[data-testid=\"stStatusWidget\"]', '[data-stale=\"true\"]', '[data-testid=\"stSkeleton\"]']"
    ".some(s => document.querySelector(s) !== null)"
)


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


def app_command(app_dir: Path, database: Path, port: int) -> list[str]:
    """How the checkout ``app_dir`` starts its app: ``python -m hsc app`` where the app is in the
    package, ``streamlit run app.py`` in a checkout from before it was (``bench app --against``)."""
    if (app_dir / "hsc" / "app" / "app.py").is_file():
        # The folder goes by HSC_APP_REPO: a synthetic index's folder need not exist.
        return [sys.executable, "-m", "hsc", "app", "--db", str(database), "--port", str(port)]
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    return command + ["--server.address", "127.0.0.1", "--server.headless", "true"]


@contextmanager
def streamlit_app(
    database: Path, repository: Path | str, log: Path, app_dir: Path = APP_DIR
) -> Iterator[tuple[str, int]]:
    """The app of the checkout ``app_dir`` on a free port of 127.0.0.1; yields (url, pid)."""
    port = free_port()
    env = dict(os.environ, HSC_APP_DB=str(database), HSC_APP_REPO=str(repository), HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(app_dir), env.get("PYTHONPATH")]))
    env.pop("OLLAMA_HOST", None)
    command = app_command(app_dir, database, port)
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


def last_chart_drawn(page: Page) -> float:
    """``performance.now()`` when a Plotly chart of the page last finished drawing (0: never)."""
    return float(page.evaluate("() => window.__hscLastPlot"))


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
