"""``bench spread``: the default encoder on one core, on every core as
threads of one process, and as one single-threaded process per core, on the
same real leaves in one run (interleaved, the order reversed every slice,
so load from other work falls on all three alike)."""

from __future__ import annotations

import os
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from hsc.bench.encoders import real_leaves
from hsc.embed import encoder_cache_dir, spec_for
from hsc.embed.onnx_export import load_exported
from hsc.embed.pool import EncoderPool
from hsc.params import Parameters, Settings


def bench_spread(root: Path | None = None, limit: int = 320, slices: int = 4) -> dict[str, Any]:
    root = root or Path(sysconfig.get_paths()["stdlib"]) / "email"
    texts = real_leaves(root, limit)
    batch = Parameters().embedding_batch_size
    cores = os.cpu_count() or 1
    spec = spec_for(Settings())
    cache = encoder_cache_dir(Path(tempfile.gettempdir()) / "hsc-bench")
    one = load_exported(spec, cache, "cpu", threads=1)
    threads = load_exported(spec, cache, "cpu", threads=cores)
    pool = EncoderPool(one, cache, processes=cores)
    ways = {
        "1 process, 1 thread": one,
        f"1 process, {cores} threads": threads,
        f"{cores} processes, 1 thread each": pool,
    }
    pool.embed(texts[: batch * 4], batch_size=batch)  # start the workers before the clock
    seconds = dict.fromkeys(ways, 0.0)
    bounds = [round(i * len(texts) / slices) for i in range(slices + 1)]
    try:
        for number, (start, end) in enumerate(zip(bounds[:-1], bounds[1:])):
            for way in list(ways) if number % 2 == 0 else list(ways)[::-1]:
                began = time.perf_counter()
                ways[way].embed(texts[start:end], batch_size=batch)
                seconds[way] += time.perf_counter() - began
    finally:
        pool.close()
    base = seconds["1 process, 1 thread"]
    rows = {
        way: {"leaves_per_second": round(len(texts) / s, 1), "speed_vs_one_thread": round(base / s, 2)}
        for way, s in seconds.items()
    }
    return {
        "suite": "spread",
        "root": str(root),
        "leaves": len(texts),
        "cores": cores,
        "load_average": round(os.getloadavg()[0], 1),
        "ways": rows,
    }


def format_spread(result: dict[str, Any]) -> str:
    lines = [
        f"spread: {result['leaves']} leaves of {result['root']}, {result['cores']} cores, "
        f"load average {result['load_average']} at the end"
    ]
    for way, row in result["ways"].items():
        lines.append(f"  {way:<28} {row['leaves_per_second']:>7} leaves/s  x{row['speed_vs_one_thread']}")
    return "\n".join(lines)
