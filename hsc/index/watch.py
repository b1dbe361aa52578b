"""``python -m hsc watch PATH``: keep an index up to date as files change.

A filesystem watcher (watchdog) collects the changed paths; once no change
has come for ``debounce`` seconds (or ``max_wait`` seconds after the first
change of a burst, so a steady stream of saves is still taken in), one
incremental index runs: only changed files are re-read, then the hierarchies
are rebuilt. Each run prints one ``re-indexed`` line on stderr.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from hsc.api import Index
from hsc.params import Parameters

IGNORED_PARTS = {".git", ".hg", ".svn", "__pycache__"}


class ChangeBatcher:
    """Changed paths, handed out a batch at a time once they settle."""

    def __init__(self, debounce: float, max_wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.debounce, self.max_wait, self.clock = debounce, max_wait, clock
        self._paths: set[str] = set()
        self._first = self._last = 0.0
        self._changed = threading.Condition()

    def add(self, path: str) -> None:
        with self._changed:
            now = self.clock()
            if not self._paths:
                self._first = now
            self._paths.add(path)
            self._last = now
            self._changed.notify()

    def due_in(self) -> float | None:
        """Seconds until the pending batch is due (0: now), None when there is none."""
        if not self._paths:
            return None
        now = self.clock()
        return max(0.0, min(self._last + self.debounce, self._first + self.max_wait) - now)

    def take(self, stop: threading.Event, poll: float = 0.2) -> set[str]:
        """Block until a batch is due (or ``stop`` is set); return and clear it."""
        with self._changed:
            while not stop.is_set():
                wait = self.due_in()
                if wait == 0.0:
                    batch, self._paths = self._paths, set()
                    return batch
                self._changed.wait(poll if wait is None else min(wait, poll))
            return set()


class _Relay(FileSystemEventHandler):
    def __init__(self, database: Path, batcher: ChangeBatcher) -> None:
        self.database, self.batcher = database, batcher

    def _own(self, path: Path) -> bool:
        """The index's own files (the database, its journal, its HNSW folder) may
        live inside the repository: writing them is not a change."""
        folder = self.database.parent
        return (path.parent == folder and path.name.startswith(self.database.name)) or path.is_relative_to(
            folder / "hnsw"
        )

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write") or (
            event.is_directory and event.event_type == "modified"
        ):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            path = Path(str(raw))
            if IGNORED_PARTS & set(path.parts) or self._own(path):
                continue
            self.batcher.add(str(path))


def _log(message: str) -> None:
    print(f"watch: {message}", file=sys.stderr, flush=True)


def watch(
    index: Index,
    root: Path,
    params: Parameters | None = None,
    debounce: float = 1.0,
    max_wait: float = 10.0,
    stop: threading.Event | None = None,
) -> None:
    """Index ``root`` now, then again after each settled batch of changes, until ``stop``."""
    root = root.resolve()
    stop = stop or threading.Event()
    report = index.index(root, params)
    _log(f"indexed {root}: {report.leaves} leaves in {report.seconds:.1f}s; watching for changes")
    batcher = ChangeBatcher(debounce, max_wait)
    observer = Observer()
    observer.schedule(_Relay(index.store.path.resolve(), batcher), str(root), recursive=True)
    observer.start()
    try:
        while not stop.is_set():
            batch = batcher.take(stop)
            if not batch:
                continue
            try:
                report = index.index(root, params)
            except Exception as error:  # a failed run must not end the watch; the next one retries
                _log(f"re-index failed after {len(batch)} changed paths: {type(error).__name__}: {error}")
                continue
            _log(
                f"re-indexed after {len(batch)} changed paths: {report.files_parsed} parsed, "
                f"{report.files_removed} removed, {report.leaves_embedded} embedded, "
                f"{report.leaves} leaves, in {report.seconds:.1f}s"
            )
    finally:
        observer.stop()
        observer.join()
