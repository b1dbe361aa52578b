"""``bench ray``: the same real folder indexed by the local executor and by ``--executor ray`` on
a Ray cluster of two nodes started on this machine (``ray start --head --num-cpus 1`` and
``ray start --address ... --num-cpus 1``), in one run, and the per-node figures the docs'
projection is built from (docs/ray.md).

Each run is a fresh interpreter indexing into a fresh database. Measured: leaves a second (the
files and embedding stages), the driver's share of the time (its seconds not spent waiting on
the cluster, over the run's), the overhead per file against the local run, and what the
database takes per leaf. On one machine there is no speed-up to win: the cluster's two nodes
share its cores with the driver, so the overhead is the figure that multiplies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

# Standard-library packages copied, in this order, until the folder holds about the leaves asked
# (537 bytes a leaf: email, json and http's 632 kB gave 1,177 leaves).
PACKAGES = (
    *("asyncio", "email", "json", "http", "logging", "unittest", "xml", "importlib", "multiprocessing"),
    *("concurrent", "urllib", "ctypes", "tomllib", "wsgiref", "xmlrpc", "html", "zoneinfo", "re"),
    *("collections", "dbm", "curses", "sqlite3", "idlelib", "lib2to3"),
)
BYTES_PER_LEAF = 537


def stdlib_folder(target: Path, leaves: int) -> Path:
    """A copy of standard-library packages (tests left out) of about ``leaves`` leaves."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    copied = 0
    ignore = shutil.ignore_patterns("__pycache__", "test", "tests", "*.pyc")
    for package in PACKAGES:
        if copied >= leaves * BYTES_PER_LEAF or not (stdlib / package).is_dir():
            continue
        shutil.copytree(stdlib / package, target / package, ignore=ignore)
        copied += sum(p.stat().st_size for p in (target / package).rglob("*.py"))
    return target


def _run(path: Path, database: Path, settings: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    """One index run in a fresh interpreter (this module's ``main``): its JSON line."""
    command = [sys.executable, "-m", "hsc.bench.ray_bench", str(path), str(database), json.dumps(settings)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"the {settings.get('executor', 'local')} run failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def bench_ray(path: Path | None, leaves: int = 10_000, nodes: int = 2) -> dict[str, Any]:
    from hsc.index.ray_cluster import start_local_cluster

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    with tempfile.TemporaryDirectory(prefix="hsc-bench-ray-") as scratch:
        work = Path(scratch)
        folder = path or stdlib_folder(work / "folder", leaves)
        local = _run(folder, work / "local.db", {"summariser": "digest"}, env)
        started = time.perf_counter()
        cluster = start_local_cluster(nodes=nodes, cpus_per_node=1, env=env)
        cluster_start = time.perf_counter() - started
        try:
            ray = _run(
                folder,
                work / "ray.db",
                {"summariser": "digest", "executor": "ray", "ray_address": cluster.address},
                {**env, **cluster.env},
            )
        finally:
            cluster.stop()
    files = max(1, ray["files_parsed"])
    return {
        "suite": "ray",
        "folder": str(path) if path else f"standard-library packages ({len(PACKAGES)} at most)",
        "cpus": os.cpu_count(),
        "nodes": nodes,
        "cluster_start_seconds": round(cluster_start, 1),
        "local": local,
        "ray": ray,
        "slowdown": round(ray["index_seconds"] / local["index_seconds"], 3),
        "overhead_ms_per_file": round(1000 * (ray["index_seconds"] - local["index_seconds"]) / files, 2),
        "leaves_per_second_per_node": round(ray["leaves_per_second"] / nodes, 2),
    }


def format_ray(result: dict[str, Any]) -> str:
    lines = [
        f"bench ray: {result['folder']}, {result['nodes']} nodes of 1 CPU on {result['cpus']} cores "
        f"(cluster started in {result['cluster_start_seconds']} s)"
    ]
    for name in ("local", "ray"):
        run = result[name]
        lines.append(
            f"  {name:<6}{run['files_parsed']:>6} files {run['leaves']:>7} leaves  "
            f"index {run['index_seconds']:>7.1f} s  {run['leaves_per_second']:>6.1f} leaves/s  "
            f"driver {100 * run['driver_share']:>5.1f}%  "
            f"hierarchy {run['hierarchy_seconds']:.1f} s  db {run['database_bytes_per_leaf']:.0f} B/leaf"
        )
    lines.append(
        f"  ray/local {result['slowdown']:.3f}x, overhead {result['overhead_ms_per_file']:.1f} ms a file, "
        f"{result['leaves_per_second_per_node']:.1f} leaves/s a node"
    )
    return "\n".join(lines)


def main() -> None:
    """One run: ``python -m hsc.bench.ray_bench FOLDER DB SETTINGS_JSON``; one JSON line out."""
    from hsc.api import Index
    from hsc.bench.indexing import StageClock
    from hsc.params import Parameters, Settings, with_values

    folder, database, given = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    settings = with_values(Settings(), given)
    waited, startup = _count_waiting() if settings.executor == "ray" else (None, lambda: 0.0)
    started = time.perf_counter()
    with Index.open(database, settings) as index:
        clock = StageClock()
        report = index.index(folder, Parameters(), progress=clock)
        total = time.perf_counter() - started
        side = sum(p.stat().st_size for p in database.parent.rglob("*") if p.is_file() and p != database)
    index_seconds = clock.seconds["scan"] + clock.seconds["files"] + clock.seconds["embed"]
    hierarchy_seconds = clock.seconds["hierarchy"] + clock.seconds["summaries"]
    # On Ray, the driver's share of the files and embedding stages: what it does besides waiting on
    # the cluster (reading, hashing, the vector cache, the writes). Locally it is the whole process.
    driver = index_seconds - waited() if waited else index_seconds
    print(
        json.dumps(
            {
                "executor": settings.executor,
                "files_parsed": report.files_parsed,
                "leaves": report.leaves,
                "leaves_embedded": report.leaves_embedded,
                "definitions_embedded": report.definitions_embedded,
                "seconds": round(total, 2),
                "index_seconds": round(index_seconds, 2),
                "hierarchy_seconds": round(hierarchy_seconds, 2),
                # Connecting to the cluster and starting its workers: once a run, whatever its size.
                "startup_seconds": round(startup(), 2),
                "leaves_per_second": round(report.leaves_embedded / index_seconds, 2),
                "steady_leaves_per_second": round(report.leaves_embedded / (index_seconds - startup()), 2),
                "driver_seconds": round(driver, 2),
                "driver_share": round(driver / index_seconds, 3),
                "database_bytes_per_leaf": round(database.stat().st_size / max(1, report.leaves), 1),
                "side_bytes_per_leaf": round(side / max(1, report.leaves), 1),
            }
        )
    )


def _count_waiting() -> tuple[Any, Any]:
    """Count the seconds the driver blocks on the cluster (Ray's get and wait) once its workers are
    up, and those it takes to start them; a reader of each."""
    import ray

    from hsc.index.ray_executor import RayExecutor

    spent = {"waiting": 0.0, "startup": 0.0}
    starting = [False]

    def timed(call: Any, into: str) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if starting[0] and into == "waiting":
                return call(*args, **kwargs)  # waiting for the workers to start is the start's
            starting[0] = into == "startup"
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                spent[into] += time.perf_counter() - started
                starting[0] = False

        return wrapper

    ray.get, ray.wait = timed(ray.get, "waiting"), timed(ray.wait, "waiting")
    RayExecutor.start = timed(RayExecutor.start, "startup")  # type: ignore[method-assign]
    return (lambda: spent["waiting"]), lambda: spent["startup"]


if __name__ == "__main__":
    main()
