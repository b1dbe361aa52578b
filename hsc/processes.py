"""Worker processes for the two pools that run beside the main process (files cut
in :mod:`hsc.index.file_pool`, batches encoded in :mod:`hsc.embed.pool`):
spawned cleanly, and gone when their parent is."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class SpawnedPool(ProcessPoolExecutor):
    """Worker processes spawned, not forked (this process may hold running
    encoder threads, which a fork would copy mid-flight), and started without
    this process's ``__main__``.

    A spawned worker first imports its parent's ``__main__`` module. Under
    Streamlit (and its AppTest) that module is the page script being run, so
    every worker would run the app page again; hsc's workers need only hsc's
    own modules. Workers start on ``submit``, so each submit runs with an
    empty ``__main__`` in place."""

    def __init__(self, workers: int, initializer: Callable[..., None], initargs: tuple[Any, ...]) -> None:
        super().__init__(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=initializer,
            initargs=initargs,
        )

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            return super().submit(fn, *args, **kwargs)
        finally:
            if main is not None:
                sys.modules["__main__"] = main


def exit_with_parent() -> None:
    """End this worker once the process that started it is gone (killed with
    SIGKILL, say): a pool's idle workers would otherwise wait for work forever.

    Ctrl-C reaches every process of the terminal's group: a worker leaves it to its
    parent, which stops handing out work and shuts the pool down (a worker that took
    it would print a traceback and break the pool mid-file)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
