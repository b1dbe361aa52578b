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
        (work / "local").mkdir()
        (work / "ray").mkdir()
        local = _run(folder, work / "local" / "index.db", {"summariser": "digest"}, env)
        started = time.perf_counter()
        cluster = start_local_cluster(nodes=nodes, cpus_per_node=1, env=env)
        cluster_start = time.perf_counter() - started
        try:
            ray = _run(
                folder,
                work / "ray" / "index.db",
                {"summariser": "digest", "executor": "ray", "ray_address": cluster.address},
                {**env, **cluster.env},
            )
        finally:
            cluster.stop()
    files = max(1, ray["files_parsed"])
    result = {
        "suite": "ray",
        "folder": str(path) if path else f"standard-library packages ({len(PACKAGES)} at most)",
        "cpus": os.cpu_count(),
        "nodes": nodes,
        "cluster_start_seconds": round(cluster_start, 1),
        "local": local,
        "ray": ray,
        "slowdown": round(ray["index_seconds"] / local["index_seconds"], 3),
        "overhead_ms_per_file": round(1000 * (ray["index_seconds"] - local["index_seconds"]) / files, 2),
        "leaves_per_second_per_node": round(ray["steady_leaves_per_second"] / nodes, 2),
    }
    result["projection"] = projection(result)
    return result


NODE_COUNTS = (1, 8, 64, 512)
LEAF_COUNTS = (10**6, 10**7, 10**8)
# In memory for search: each leaf's float32 vector (384 numbers), and an HNSW graph over the groups
# (hnswlib: the vector plus 2 x M links of 4 bytes at the base layer, M = 16).
VECTOR_BYTES = 384 * 4
HNSW_BYTES_PER_GROUP = 384 * 4 + 2 * 16 * 4


def projection(result: dict[str, Any]) -> list[dict[str, Any]]:
    """From the measured per-node figures only: the hours a size takes on N nodes (each embeds at
    the measured rate a node, and the one driver absorbs at most the leaves a second its own
    measured time a leaf allows, then builds the hierarchy alone), and what the driver's store
    holds at that size."""
    ray = result["ray"]
    per_node = result["leaves_per_second_per_node"]
    driver_cap = ray["leaves_embedded"] / max(ray["driver_seconds"], 1e-9)
    # The hierarchy is planned and written by the driver alone once the leaves are in, at the
    # measured seconds a leaf (linear: segmentation and pooling are; the HNSW build is n log n).
    hierarchy_per_leaf = ray["hierarchy_seconds"] / max(1, ray["leaves"])
    rows = []
    for leaves in LEAF_COUNTS:
        row: dict[str, Any] = {"leaves": leaves, "driver_cap_leaves_per_second": round(driver_cap, 1)}
        hierarchy = leaves * hierarchy_per_leaf
        for nodes in NODE_COUNTS:
            rate = min(nodes * per_node, driver_cap)
            row[f"hours_{nodes}_nodes"] = round((leaves / rate + hierarchy) / 3600, 2)
        row["hours_at_driver_cap"] = round((leaves / driver_cap + hierarchy) / 3600, 2)
        row["hierarchy_hours"] = round(hierarchy / 3600, 2)
        row["database_gb"] = round(leaves * ray["database_bytes_per_leaf"] / 1e9, 1)
        row["side_files_gb"] = round(leaves * ray["side_bytes_per_leaf"] / 1e9, 1)
        row["search_memory_gb"] = round(
            (leaves * VECTOR_BYTES + leaves * ray["groups_per_leaf"] * HNSW_BYTES_PER_GROUP) / 1e9, 1
        )
        rows.append(row)
    return rows


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
    lines.append("  projection (hours on N nodes; the driver's store at that size):")
    for row in result.get("projection", []):
        hours = "  ".join(f"{n}: {row[f'hours_{n}_nodes']:.2f}" for n in NODE_COUNTS)
        lines.append(
            f"  {row['leaves']:>11,} leaves  {hours}  driver-bound {row['hours_at_driver_cap']:.2f} "
            f"(hierarchy {row['hierarchy_hours']:.2f})  db {row['database_gb']} GB, side files "
            f"{row['side_files_gb']} GB, search memory {row['search_memory_gb']} GB"
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
        # The side files this database's hierarchy and leaf table were saved to (hsc.store.sidecar).
        side = sum(p.stat().st_size for p in (database.parent / "hnsw").glob(f"{database.stem}-*"))
    index_seconds = clock.seconds["scan"] + clock.seconds["files"] + clock.seconds["embed"]
    hierarchy_seconds = clock.seconds["hierarchy"] + clock.seconds["summaries"]
    # On Ray, the driver's share of the files and embedding stages: what it does besides waiting on
    # the cluster (reading, hashing, the vector cache, the writes). Locally it is the whole process.
    driver = index_seconds - waited() - startup() if waited else index_seconds
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
                "groups_per_leaf": round(_groups(database) / max(1, report.leaves), 4),
            }
        )
    )


def _groups(database: Path) -> int:
    import sqlite3

    with sqlite3.connect(database) as conn:
        count = conn.execute("SELECT COUNT(*) FROM nodes WHERE level = 'mid'").fetchone()[0]
    conn.close()
    return int(count)


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
