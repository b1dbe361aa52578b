"""A Ray cluster of several nodes on this one machine, started as an operator starts one on
real machines: ``ray start --head`` and then ``ray start --address ...`` for each other node.

``bench ray`` measures on it and the tests index on it, kill one of its nodes (its raylet, by
PID) and stop it. Every process it started is found by this cluster's own temporary folder and
ports and stopped by PID (never ``ray stop``, which ends every Ray cluster of the machine).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    listing = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(child) for child in listing.read_text().split()]
    except OSError:
        return []


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@dataclass
class LocalCluster:
    """A cluster of ``ray start`` nodes here: ``address`` for ``--ray-address``, each node's raylet PID."""

    address: str
    temp_dir: Path
    port: int
    env: dict[str, str]  # what a driver needs in its environment to join (the cluster's token)
    raylets: list[int] = field(default_factory=list)  # the head's first

    def processes(self) -> list[int]:
        """This cluster's processes: those naming its folder or port, and the raylets' children."""
        mine = [
            int(entry.name)
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and self._names_this_cluster(_command_line(int(entry.name)))
        ]
        return sorted({*mine, *(child for raylet in self.raylets for child in _children(raylet))})

    def _names_this_cluster(self, command: str) -> bool:
        return str(self.temp_dir) in command or f":{self.port} " in f"{command} "

    def kill_node(self, number: int) -> int:
        """Kill node ``number``'s raylet with SIGKILL (its workers end with it); its PID."""
        pid = self.raylets[number]
        os.kill(pid, signal.SIGKILL)
        return pid

    def stop(self) -> None:
        """End every process of the cluster: the raylets first (their workers follow), then the rest."""
        # Listed before any is stopped: a raylet's workers and agents are known by their parent only.
        pids = dict.fromkeys([*self.raylets, *self.processes()])
        for round_signal in (signal.SIGTERM, signal.SIGKILL):
            pids.update(dict.fromkeys(self.processes()))
            alive = [pid for pid in pids if running(pid)]
            for pid in alive:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, round_signal)
            deadline = time.monotonic() + 5
            while any(running(pid) for pid in alive) and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def ray_command() -> list[str]:
    """The ``ray`` command of this Python's Ray."""
    script = Path(sys.executable).parent / "ray"
    if script.exists():
        return [str(script)]
    found = shutil.which("ray")
    if found is None:
        raise RuntimeError("the `ray` command is not installed (pip install 'hsc[ray]')")
    return [found]


def start_local_cluster(
    nodes: int = 2,
    cpus_per_node: int = 1,
    env: dict[str, str] | None = None,
    object_store_bytes: int = 200_000_000,
    timeout: float = 120.0,
) -> LocalCluster:
    """Start a head and ``nodes - 1`` more nodes here, ``cpus_per_node`` CPUs each; raises
    RuntimeError (with ``ray start``'s last lines) when one does not start. ``env``: the
    nodes' environment (their workers import hsc from its PYTHONPATH)."""
    temp_dir = Path(tempfile.mkdtemp(prefix="hsc-ray-", dir="/tmp"))  # short: Ray's socket paths are
    port = _free_port()
    # Token authentication (Ray's default for a new local cluster), with a token of this cluster's own.
    joining = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    cluster = LocalCluster(f"127.0.0.1:{port}", temp_dir, port, joining)
    environment = {**(env or os.environ), "RAY_USAGE_STATS_ENABLED": "0", **joining}
    common = ["--num-cpus", str(cpus_per_node), "--object-store-memory", str(object_store_bytes)]
    try:
        for number in range(nodes):
            node_ports = [
                "--dashboard-agent-listen-port",
                str(_free_port()),
                "--metrics-export-port",
                str(_free_port()),
                "--runtime-env-agent-port",
                str(_free_port()),
            ]
            if number == 0:
                where = ["--head", "--port", str(port), "--temp-dir", str(temp_dir), "--include-dashboard"]
                where += ["false", "--dashboard-port", str(_free_port()), "--ray-client-server-port"]
                where += [str(_free_port())]
            else:
                where = ["--address", cluster.address]
            before = set(_raylets(temp_dir))
            started = subprocess.run(
                [*ray_command(), "start", *where, *common, *node_ports, "--disable-usage-stats"],
                env=environment,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            if started.returncode != 0:
                tail = " | ".join((started.stderr or started.stdout).strip().splitlines()[-3:])
                raise RuntimeError(f"`ray start` failed for node {number + 1}: {tail}")
            new = sorted(set(_raylets(temp_dir)) - before)
            if len(new) != 1:
                raise RuntimeError(f"node {number + 1} started no raylet of its own")
            cluster.raylets.append(new[0])
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _raylets(temp_dir: Path) -> list[int]:
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit()
        and "raylet/raylet" in (command := _command_line(int(entry.name)))
        and str(temp_dir) in command
    ]
