"""The ONNX encoder in several processes, one batch each at a time.

On 2 shared cores, 2 processes with one thread each embedded 1.38x as many
leaves a second as one process with 2 threads, and 1.57x one thread (the
same 400 leaves, interleaved, in one run; README, *Performance*): threads of
one session meet at a barrier after every operator, and on a busy machine
each barrier waits for the slowest. Processes do not.

Small jobs (a one-file edit) are embedded in this process: the pool starts
(a second or so) only for the first job that is worth it, then stays.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np

from hsc.embed.base import EncoderSpec, OnBatch, longest_first, normalise
from hsc.embed.onnx_backend import OnnxEmbedder
from hsc.embed.onnx_export import load_exported
from hsc.processes import SpawnedPool, exit_with_parent

# Fewer texts than this many batches are embedded in this process.
MIN_BATCHES_FOR_POOL = 4
# Processes ``auto`` uses at most: more were not measured.
MAX_AUTO_PROCESSES = 4


def resolve_processes(setting: str, cores: int | None = None) -> int:
    """Encoder processes: the number asked, or with ``auto`` one per core
    (up to ``MAX_AUTO_PROCESSES``), and 1 (this process only) on one core."""
    if setting != "auto":
        return int(setting)
    cores = cores or os.cpu_count() or 1
    return 1 if cores < 2 else min(cores, MAX_AUTO_PROCESSES)


class EncoderPool:
    """An :class:`OnnxEmbedder` here and the same export in ``processes``
    worker processes; vectors and their order are the embedder's own."""

    def __init__(self, local: OnnxEmbedder, cache_dir: Path, processes: int) -> None:
        self.local = local
        self.spec = local.spec
        self.name = local.name
        self.dimension = local.dimension
        self.max_seq_length = local.max_seq_length
        self.providers = local.providers
        self.processes = processes
        self._cache_dir = cache_dir
        self._threads = max(1, (os.cpu_count() or 1) // processes)
        self._pool: SpawnedPool | None = None
        self._truncated_elsewhere = 0

    @property
    def truncated(self) -> int:
        """Texts longer than the window so far, here and in the workers."""
        return self.local.truncated + self._truncated_elsewhere

    def embed(
        self, texts: Sequence[str], batch_size: int = 32, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        """Batches longest first, handed to the workers as they free up; rows in the given order."""
        if len(texts) < batch_size * MIN_BATCHES_FOR_POOL:
            return self.local.embed(texts, batch_size, on_batch)
        batches = longest_first(texts, batch_size)
        pool = self._started()
        futures = [pool.submit(_encode_in_worker, [texts[i] for i in rows]) for rows in batches]
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        try:
            for number, (rows, future) in enumerate(zip(batches, futures), start=1):
                vectors[rows], truncated = future.result()
                self._truncated_elsewhere += truncated
                if on_batch:
                    on_batch(number, len(batches))
        except BrokenProcessPool as error:
            self.close()
            raise RuntimeError(
                "an encoder process died (out of memory?); nothing of this batch was written, "
                "run again or use encode_processes=1"
            ) from error
        finally:
            for future in futures:
                future.cancel()
        return normalise(vectors)

    def _started(self) -> SpawnedPool:
        if self._pool is None:
            self._pool = SpawnedPool(
                self.processes, _start_worker, (self.spec, self._cache_dir, self._threads)
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


# -- in the worker process ------------------------------------------------------

_worker: OnnxEmbedder | None = None


def _start_worker(spec: EncoderSpec, cache_dir: Path, threads: int) -> None:
    global _worker
    exit_with_parent()
    _worker = load_exported(spec, cache_dir, "cpu", threads=threads)


def _encode_in_worker(texts: list[str]) -> tuple[np.ndarray, int]:
    """Mean-pooled rows of one batch (normalised by the caller) and how many texts were truncated."""
    assert _worker is not None, "the pool starts each worker with _start_worker"
    before = _worker.truncated
    rows = _worker.encode_batch(texts)
    return rows, _worker.truncated - before
