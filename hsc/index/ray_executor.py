"""Indexing on a Ray cluster (``Settings.executor = "ray"``): files cut and embedded by Ray
workers spread over the cluster's nodes, while this process alone writes the database.

Ray Core actors, not Ray Data: a worker is a long-lived process that keeps what is costly to
make (the tree-sitter parsers, the token counter and the encoder, on a GPU where it reserves
one), and the pipeline's own order and per-file transactions stay as they are. A Data pipeline
would own the order of the files and the batching, and its blocks would have to be written back
here anyway, one file at a time.

The two seams of :func:`~hsc.index.pipeline.index_repository` are reused: :meth:`RayExecutor.load_files`
gives the parsed files in order, as :func:`~hsc.index.file_pool.load_files` does, and
:attr:`RayExecutor.embedder` embeds a window's missing texts, as the local encoder does. The
vector cache, the checks of unchanged files and every write stay in this process.

This process reads each file's bytes (the same safe read as a local run) and ships them, so the
nodes need hsc and its encoder installed, not the repository. A worker that is lost (its node
gone, its process killed) takes nothing with it: each call it had is asked again of another
worker, and a replacement worker is started for when the cluster has room for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hsc.chunk.reading import read_file_bytes
from hsc.embed.base import EncoderSpec, OnBatch, longest_first, normalise
from hsc.index.file_pool import FileTask, failed, worker_failure
from hsc.model import ParsedFile
from hsc.params import Parameters, Settings

INSTALL_HINT = "the ray executor needs Ray: pip install 'hsc[ray]'"
# Calls handed to each worker ahead of the one awaited: enough to keep it busy while this
# process writes (each call is one file; a window's embedding batches queue behind them).
AHEAD_PER_WORKER = 8
# A call is asked of this many workers at most: a file whose worker died this often is taken
# for the cause (a parser crash), not a lost node, and gets an error report.
MAX_TRIES = 3
# Seconds to wait for a replacement worker when every worker was lost.
REPLACEMENT_WAIT = 120.0


class RayMissingError(RuntimeError):
    """Ray is not installed (the ``ray`` extra)."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissingError(INSTALL_HINT) from None
    return ray


# -- in a worker process ----------------------------------------------------------


class IndexWorker:
    """One Ray worker: parsers and a token counter for cutting, one encoder for embedding
    (loaded at its first batch, on cuda when the worker reserved a GPU)."""

    def __init__(
        self, params: Parameters, settings: Settings, spec: EncoderSpec, cache_dir: str, threads: int
    ) -> None:
        from hsc.chunk.tokens import get_counter

        self.params, self.settings, self.spec = params, settings, spec
        self.cache_dir, self.threads = Path(cache_dir), threads
        self.counter = get_counter(settings.tokenizer)
        self.encoder: Any = None

    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def cut(self, root: str, rel_path: str, raw: Any) -> ParsedFile:
        from hsc.chunk.ingest import load_file

        return load_file(Path(root), rel_path, self.params, self.settings, self.counter, raw=raw)

    def embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """The batch's rows (L2-normalised) and how many texts were longer than the window."""
        if self.encoder is None:
            self.encoder = _make_encoder(
                self.spec, self.cache_dir, self.settings.ray_worker_gpus, self.threads
            )
        before = getattr(self.encoder, "truncated", 0)
        rows = self.encoder.embed(texts, batch_size=len(texts))
        return rows, getattr(self.encoder, "truncated", 0) - before


def _make_encoder(spec: EncoderSpec, cache_dir: Path, gpus: float, threads: int) -> Any:
    device = "cuda" if gpus > 0 else "cpu"
    if spec.backend == "torch":
        from hsc.embed.factory import make_embedder

        return make_embedder(spec, cache_dir, device)
    from hsc.embed.onnx_export import load_exported

    return load_exported(spec, cache_dir, device, threads=threads)


# -- in the driver ----------------------------------------------------------------


@dataclass
class _Call:
    method: str
    args: tuple[Any, ...]
    worker: int = -1
    ref: Any = None
    tries: int = 0


@dataclass
class _Workers:
    """The run's Ray workers and the calls in flight on each; a lost worker's calls go to others."""

    ray: Any
    make: Any  # () -> actor handle
    live: dict[int, Any] = field(default_factory=dict)
    starting: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # id -> (actor, ready ref)
    busy: dict[int, int] = field(default_factory=dict)
    nodes: set[str] = field(default_factory=set)
    lost: int = 0
    _next: int = 0

    def start(self, count: int) -> None:
        for _ in range(count):
            self._start_one()
        refs = {ready: number for number, (_, ready) in self.starting.items()}
        for number, node in zip(refs.values(), self.ray.get(list(refs))):
            self._promote(number, node)

    def _start_one(self) -> None:
        actor = self.make()
        self.starting[self._next] = (actor, actor.ready.remote())
        self._next += 1

    def _promote(self, number: int, node: str) -> None:
        actor, _ = self.starting.pop(number)
        self.live[number] = actor
        self.busy[number] = 0
        self.nodes.add(node)

    def _check_starting(self, wait: float = 0.0) -> None:
        if not self.starting:
            return
        refs = {ready: number for number, (_, ready) in self.starting.items()}
        done, _ = self.ray.wait(list(refs), num_returns=1, timeout=wait)
        for ref in done:
            try:
                self._promote(refs[ref], self.ray.get(ref))
            except self.ray.exceptions.RayError:
                self.starting.pop(refs[ref])
                self._start_one()

    def submit(self, call: _Call) -> _Call:
        self._check_starting()
        if not self.live:
            self._check_starting(REPLACEMENT_WAIT)
        if not self.live:
            raise RuntimeError(
                "every Ray worker was lost and none could be started again; what was written is kept, "
                "run again to continue"
            )
        call.worker = min(self.live, key=lambda number: self.busy[number])
        call.ref = getattr(self.live[call.worker], call.method).remote(*call.args)
        call.tries += 1
        self.busy[call.worker] += 1
        return call

    def result(self, call: _Call) -> Any:
        """The call's value; raises the worker's own exception as ``RayTaskError``, and
        :class:`_TooManyTries` when its workers kept dying."""
        ray = self.ray
        while True:
            try:
                value = ray.get(call.ref)
            except ray.exceptions.RayTaskError:
                self._finished(call)
                raise
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError):
                self._lose(call.worker)  # its calls in flight are asked of other workers as they come up
                if call.tries >= MAX_TRIES:
                    raise _TooManyTries() from None
                self.submit(call)
                continue
            self._finished(call)
            return value

    def _finished(self, call: _Call) -> None:
        if self.busy.get(call.worker, 0) > 0:
            self.busy[call.worker] -= 1

    def _lose(self, number: int) -> None:
        actor = self.live.pop(number, None)
        if actor is None:
            return  # already known to be lost
        self.busy.pop(number, None)
        self.lost += 1
        _kill(self.ray, actor)
        self._start_one()  # placed when the cluster has room (a node comes back, or joins)

    def close(self) -> None:
        for actor in [*self.live.values(), *(actor for actor, _ in self.starting.values())]:
            _kill(self.ray, actor)
        self.live.clear()
        self.starting.clear()


class _TooManyTries(Exception):
    pass


def _kill(ray: Any, actor: Any) -> None:
    with contextlib.suppress(Exception):  # already gone, or the cluster is: nothing left to stop
        ray.kill(actor, no_restart=True)


class RayEmbedder:
    """The encoder as the pipeline sees it: batches, longest first, spread over the workers."""

    def __init__(self, workers: _Workers, spec: EncoderSpec, dimension: int, window: int) -> None:
        self._workers = workers
        self.spec = spec
        self.name = spec.model
        self.dimension = dimension
        self.max_seq_length = window
        self.truncated = 0

    def embed(
        self, texts: Sequence[str], batch_size: int = 32, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        batches = longest_first(texts, batch_size)
        calls = [self._workers.submit(_Call("embed", ([texts[i] for i in rows],))) for rows in batches]
        for number, (rows, call) in enumerate(zip(batches, calls), start=1):
            try:
                vectors[rows], truncated = self._workers.result(call)
            except _TooManyTries:
                raise RuntimeError(
                    f"the Ray workers embedding a batch died {MAX_TRIES} times; nothing of it was written"
                ) from None
            self.truncated += truncated
            if on_batch:
                on_batch(number, len(batches))
        return normalise(vectors)


class RayExecutor:
    """A run's Ray workers: connected (or a local Ray started) when made, all stopped by :meth:`close`."""

    def __init__(self, params: Parameters, settings: Settings, spec: EncoderSpec, cache_dir: Path) -> None:
        self.ray = import_ray()  # before anything else: without the extra, say so at once
        self.params, self.settings, self.spec, self.cache_dir = params, settings, spec, cache_dir
        self._owns = False
        self._workers = _Workers(self.ray, lambda: None)
        self._embedder: RayEmbedder | None = None

    def start(self) -> None:
        """Connect to the cluster (or start a local Ray) and start the workers; only a run with
        files to cut calls it, so a run that finds nothing changed starts nothing."""
        if self._embedder is not None:
            return
        ray, settings, spec, cache_dir = self.ray, self.settings, self.spec, self.cache_dir
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(
                address=settings.ray_address or None,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,  # not its notes on every run
            )
        try:
            _ensure_export(spec, cache_dir)
            gpus = settings.ray_worker_gpus
            cpus = settings.ray_worker_cpus
            remote = ray.remote(num_cpus=cpus, num_gpus=gpus, max_restarts=0, max_task_retries=0)(IndexWorker)
            params = self.params
            self._workers.make = lambda: remote.options(scheduling_strategy="SPREAD").remote(
                params, settings, spec, str(cache_dir), cpus
            )
            try:
                self._workers.start(worker_count(ray.cluster_resources(), cpus, gpus))
            except ray.exceptions.RayError as error:  # hsc or its encoder missing on a node, say
                first = (str(error).strip().splitlines() or [type(error).__name__])[-1]
                raise RuntimeError(
                    f"the Ray workers could not start (is hsc installed on every node?): {first}"
                ) from None
            dimension, window = _encoder_shape(spec, cache_dir)
        except BaseException:
            self.close()
            raise
        self._embedder = RayEmbedder(self._workers, spec, dimension, window)

    @property
    def embedder(self) -> RayEmbedder:
        self.start()
        assert self._embedder is not None
        return self._embedder

    @property
    def processes(self) -> int:
        """Workers the run started with (the pipeline's embedding window grows with them)."""
        return max(1, len(self._workers.live))

    @property
    def nodes(self) -> int:
        return len(self._workers.nodes)

    @property
    def workers_lost(self) -> int:
        return self._workers.lost

    def load_files(self, root: Path, tasks: list[FileTask], settings: Settings) -> Iterator[ParsedFile]:
        """Each task's parsed file, in order, cut by the workers ahead of the one given."""
        if not tasks:
            return
        self.start()
        waiting = deque(tasks)
        in_flight: deque[tuple[FileTask, _Call]] = deque()
        while waiting or in_flight:
            while waiting and len(in_flight) < AHEAD_PER_WORKER * self.processes:
                task = waiting.popleft()
                # Read here, once, with the same safe read as a local run: the nodes need not see the files.
                raw = task.raw or read_file_bytes(root, task.rel_path, settings.max_file_bytes)
                in_flight.append((task, self._workers.submit(_Call("cut", (str(root), task.rel_path, raw)))))
            task, call = in_flight.popleft()
            try:
                yield self._workers.result(call)
            except self.ray.exceptions.RayTaskError as error:  # raised by the cut itself: this file's alone
                yield failed(task.rel_path, worker_failure(error.cause or error))
            except _TooManyTries:
                yield failed(
                    task.rel_path, f"chunking failed: the Ray worker cutting it died {MAX_TRIES} times"
                )

    def close(self) -> None:
        """Stop this run's workers (their calls in flight are dropped), and a Ray started here."""
        self._workers.close()
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()


def worker_count(resources: dict[str, float], cpus: int, gpus: float) -> int:
    """One worker per ``cpus`` CPUs of the cluster, or per ``gpus`` of its GPUs when they reserve some."""
    if gpus > 0:
        count = int(resources.get("GPU", 0) // gpus)
        if count < 1:
            raise RuntimeError(f"ray_worker_gpus={gpus} but the Ray cluster has no GPU to give")
        return count
    return max(1, int(resources.get("CPU", os.cpu_count() or 1) // cpus))


def _ensure_export(spec: EncoderSpec, cache_dir: Path) -> None:
    """Export the ONNX model here before the workers start, so they never export it at once."""
    if spec.backend == "torch":
        return
    from hsc.embed.onnx_export import export, export_files, own_int8_folder

    if own_int8_folder(spec) is None:
        model_file, meta_file = export_files(spec, cache_dir)
        if not (model_file.exists() and meta_file.exists()):
            export(spec, cache_dir)


def _encoder_shape(spec: EncoderSpec, cache_dir: Path) -> tuple[int, int]:
    """The encoder's dimension and window, from its export's description (no model loaded here)."""
    import json

    from hsc.embed.onnx_export import export_files, own_int8_folder
    from hsc.embed.tuned import tuned_meta

    if spec.backend == "torch":
        from hsc.embed.factory import make_embedder

        local = make_embedder(spec, cache_dir, "cpu")
        return local.dimension, int(getattr(local, "max_seq_length", 0))
    folder = own_int8_folder(spec)
    meta = (
        tuned_meta(folder) if folder is not None else json.loads(export_files(spec, cache_dir)[1].read_text())
    )
    window = min(spec.window or meta["max_seq_length"], meta["max_seq_length"])
    return int(meta["dimension"]), int(window)
