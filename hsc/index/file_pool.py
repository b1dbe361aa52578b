"""Stage 1 in worker processes: files read and cut while the encoder runs.

:func:`load_files` gives each file's :class:`~hsc.model.ParsedFile` in the
order asked, whether the files are cut here (``workers`` 0) or by a pool of
worker processes (each with its own tree-sitter parsers and token counter)
that cut the next files while this process embeds and writes the previous
ones. Either way the result is the same: a worker runs the same
:func:`~hsc.chunk.ingest.load_file`.

A file that makes a worker fail gets an ``error`` report with a one-line
reason and nothing else is lost: an exception is that file's alone, and when
a worker process dies (a crash in a parser, the out-of-memory killer) each
file that was in flight is cut again in a fresh pool, the one that killed it
alone.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from hsc.chunk.ingest import detect_language, load_file
from hsc.chunk.reading import FileBytes, stored_name
from hsc.chunk.tokens import TokenCounter, get_counter
from hsc.model import FileReport, ParsedFile
from hsc.params import Parameters, Settings
from hsc.processes import SpawnedPool, exit_with_parent

T = TypeVar("T")

# A pool takes about a second to start (each worker imports hsc and its
# grammars): fewer files than this are cut in this process, so a one-file
# edit never waits for one.
MIN_FILES_FOR_POOL = 24
# Files handed out ahead of the one being written, per worker: enough to keep
# the workers cutting while this process embeds a window of leaves (about 20
# leaves a file, 256 leaves a window).
AHEAD_PER_WORKER = 16


@dataclass(frozen=True)
class FileTask:
    """One file to cut: its path as the walk gives it, and its bytes when already read."""

    rel_path: str
    raw: FileBytes | None = None


def resolve_workers(setting: str, cores: int | None = None) -> int:
    """Worker processes for cutting files: the number asked, or with ``auto``
    one on a machine with at least 2 cores (the encoder keeps the others), none on one core."""
    if setting != "auto":
        return int(setting)
    cores = cores or os.cpu_count() or 1
    return 0 if cores < 2 else max(1, min(4, cores // 4))


def load_files(
    root: Path,
    tasks: list[FileTask],
    params: Parameters,
    settings: Settings,
    counter: TokenCounter,
    workers: int,
) -> Iterator[ParsedFile]:
    """Each task's parsed file, in order. ``workers`` 0 (or few tasks) cuts them
    here with ``counter``; otherwise a pool of ``workers`` processes does, each
    counting with ``settings.tokenizer``."""
    if workers < 1 or len(tasks) < MIN_FILES_FOR_POOL:
        for task in tasks:
            yield load_file(root, task.rel_path, params, settings, counter, raw=task.raw)
        return
    yield from _load_in_pool(root, tasks, params, settings, workers)


def _make_pool(workers: int, params: Parameters, settings: Settings) -> SpawnedPool:
    return SpawnedPool(workers, _start_worker, (params, settings))


def _load_in_pool(
    root: Path, tasks: list[FileTask], params: Parameters, settings: Settings, workers: int
) -> Iterator[ParsedFile]:
    waiting = deque(tasks)
    in_flight: deque[tuple[FileTask, Future[ParsedFile]]] = deque()
    pool = _make_pool(workers, params, settings)
    try:
        while waiting or in_flight:
            while waiting and len(in_flight) < workers * AHEAD_PER_WORKER:
                try:
                    future = pool.submit(_load_in_worker, root, waiting[0].rel_path, waiting[0].raw)
                except BrokenProcessPool:
                    # A worker died since the last submission. The files in flight
                    # fail below; with none, the next file is the one cut alone.
                    break
                in_flight.append((waiting.popleft(), future))
            if in_flight:
                task, future = in_flight.popleft()
            else:
                task, future = waiting.popleft(), None
            try:
                if future is None:
                    raise BrokenProcessPool("the pool broke with no file in flight")
                parsed = future.result()
            except BrokenProcessPool:
                # A worker died and took every file in flight with it: cut this
                # one alone to see whether it is the cause, then go on with a new pool.
                pool.shutdown(wait=True, cancel_futures=True)
                waiting.extendleft(reversed([other for other, _ in in_flight]))
                in_flight.clear()
                parsed = _load_alone(root, task, params, settings)
                pool = _make_pool(workers, params, settings)
            except Exception as error:  # raised in the worker: this file's alone
                parsed = failed(task.rel_path, worker_failure(error))
            yield parsed
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _load_alone(root: Path, task: FileTask, params: Parameters, settings: Settings) -> ParsedFile:
    with _make_pool(1, params, settings) as solo:
        try:
            return solo.submit(_load_in_worker, root, task.rel_path, task.raw).result()
        except BrokenProcessPool:
            return failed(task.rel_path, "chunking failed: the worker process cutting this file died")
        except Exception as error:
            return failed(task.rel_path, worker_failure(error))


def worker_failure(error: BaseException) -> str:
    return f"chunking failed in a worker: {type(error).__name__}: {error}"


def failed(rel_path: str, reason: str) -> ParsedFile:
    """An ``error`` report for a file that could not be cut (no content hash, so the next run tries again)."""
    return ParsedFile(FileReport(stored_name(rel_path), detect_language(rel_path), "error", reason))


# -- in the worker process ------------------------------------------------------


_worker: tuple[Parameters, Settings, TokenCounter] | None = None


def _start_worker(params: Parameters, settings: Settings) -> None:
    global _worker
    exit_with_parent()
    _worker = (params, settings, get_counter(settings.tokenizer))


def _load_in_worker(root: Path, rel_path: str, raw: FileBytes | None) -> ParsedFile:
    assert _worker is not None, "the pool starts each worker with _start_worker"
    params, settings, counter = _worker
    return load_file(root, rel_path, params, settings, counter, raw=raw)
