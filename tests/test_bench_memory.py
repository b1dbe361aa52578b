"""A benchmark child reports its own peak memory, not what it shared with its parent at the fork."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from hsc.bench.memory import children_peak_rss_mb, peak_rss_mb

ROOT = Path(__file__).resolve().parent.parent


def test_a_child_of_a_large_process_reports_its_own_peak() -> None:
    held = np.ones(300 * 2**20, dtype=np.uint8)  # 300 MB resident in this process
    assert peak_rss_mb() > 300
    child = subprocess.run(
        [sys.executable, "-c", "from hsc.bench.memory import peak_rss_mb; print(peak_rss_mb())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    # ru_maxrss would say at least 300 here; a bare interpreter with this module is far smaller.
    assert 0 < float(child.stdout) < 100
    del held


def test_live_children_report_their_own_peaks() -> None:
    program = (
        "import sys, numpy as np\n"
        "held = np.ones(int(sys.argv[1]) * 2**20, dtype=np.uint8)\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    sizes = (120, 40)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", program, str(size)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for size in sizes
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        peaks = children_peak_rss_mb()
        big, small = (peaks[child.pid] for child in children)
        assert 120 < big < 120 + 100 and 40 < small < 40 + 100  # each its own, not this process's
        assert big - small > 60
    finally:
        for child in children:
            child.communicate("\n", timeout=30)
    ended = {child.pid for child in children}
    assert not ended & set(children_peak_rss_mb())  # ended children are no longer listed (others may live on)
