"""Peak memory of a benchmark process (a module of its own: the index bench imports it before timing)."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's peak resident set so far, in MB.

    Linux's ``VmHWM`` belongs to the process image, so it starts again at ``exec``;
    ``getrusage``'s ``ru_maxrss`` does not: a child started from a large process
    reports at least its parent's size at the fork (a suite run under ``bench perf``
    after the encoders were loaded reported 2.4 GB at 10^4 leaves)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        status = ""
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)  # kB
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux
