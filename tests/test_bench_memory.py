"""A benchmark child reports its own peak memory, not what it shared with its parent at the fork."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from hsc.bench.memory import peak_rss_mb

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
