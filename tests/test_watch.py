"""``python -m hsc watch``: a real process, real file changes, the real model."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from hsc.api import Index
from hsc.index.watch import ChangeBatcher

ROOT = Path(__file__).resolve().parent.parent
REFLECTED_WITHIN = 60.0
# Long enough to stay a leaf of its own (short ones are merged with a neighbour).
PARCEL_WEIGHT = """

def parcel_weight(item_grams: list[int], packaging_grams: int = 250) -> int:
    \"\"\"Shipping weight of a parcel: every item plus the box and its padding.\"\"\"
    return sum(item_grams) + packaging_grams
"""  # seconds; generous for a shared machine, the log shows the real times


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_batcher_waits_for_quiet_but_not_forever() -> None:
    clock = FakeClock()
    batcher = ChangeBatcher(debounce=1.0, max_wait=5.0, clock=clock)
    assert batcher.due_in() is None
    for i in range(200):  # a burst of saves, 10 ms apart
        batcher.add(f"file{i % 3}.py")
        clock.now += 0.01
        assert batcher.due_in() > 0
    clock.now += 1.0
    assert batcher.due_in() == 0.0
    assert batcher.take(threading.Event()) == {"file0.py", "file1.py", "file2.py"}
    assert batcher.due_in() is None
    for _ in range(100):  # a steady stream: due after max_wait anyway
        batcher.add("busy.py")
        clock.now += 0.5
        if batcher.due_in() == 0.0:
            break
    assert 4.5 <= clock.now - 3.0 <= 5.5


class Watcher:
    """``python -m hsc watch`` in the background, its stderr lines collected."""

    def __init__(self, repo: Path, database: Path) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hsc", "watch", str(repo), "--db", str(database), "--debounce", "0.5"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line.rstrip())

    def runs(self) -> int:
        return sum(1 for line in self.lines if line.startswith("watch: re-indexed"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _until(condition, timeout: float = REFLECTED_WITHIN) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "not reflected in time"
        time.sleep(0.1)
    return time.monotonic() - started


def test_watch_reflects_edits_additions_deletions_and_bounds_bursts(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py" / "inventory", repo / "inventory")
    for path in repo.rglob("*.py"):
        if path.name not in ("pricing.py", "__init__.py"):
            path.unlink()
    database = tmp_path / "index.db"
    watcher = Watcher(repo, database)
    try:
        _until(lambda: any("watching for changes" in line for line in watcher.lines), timeout=300)
        index = Index.open(database)

        def scopes() -> set[str]:
            return {row["scope"] for row in index.leaves(with_text=False)}

        def paths() -> set[str]:
            return {row["path"] for row in index.leaves(with_text=False)}

        pricing = repo / "inventory" / "pricing.py"
        pricing.write_text(pricing.read_text() + PARCEL_WEIGHT)
        edited = _until(lambda: "inventory.pricing.parcel_weight" in scopes())

        (repo / "inventory" / "shipping.py").write_text(
            "def shipping_cost(weight_grams, rate_per_kg):\n    return weight_grams / 1000 * rate_per_kg\n"
        )
        added = _until(lambda: "inventory.shipping.shipping_cost" in scopes())

        (repo / "inventory" / "__init__.py").unlink()
        deleted = _until(lambda: "inventory/__init__.py" not in paths())

        runs_before = watcher.runs()
        started = time.monotonic()
        for save in range(200):
            (repo / "inventory" / "shipping.py").write_text(
                f"def shipping_cost(weight_grams, rate):\n    return weight_grams * rate * {save}\n"
            )
            time.sleep(0.005)
        burst_seconds = time.monotonic() - started
        _until(lambda: watcher.runs() > runs_before)
        time.sleep(2.0)  # any run still to come after the burst
        runs = watcher.runs() - runs_before
        # One run once the saves settle, plus at most one per max_wait (10 s) while they keep coming.
        assert 1 <= runs <= 2 + int(burst_seconds // 10), watcher.lines
        final = {row["text"] for row in index.leaves() if row["path"] == "inventory/shipping.py"}
        assert any("* 199" in text for text in final)
        index.close()
        print(
            f"reflected: edit {edited:.1f}s, add {added:.1f}s, delete {deleted:.1f}s; 200 saves, {runs} runs"
        )
    finally:
        watcher.stop()
