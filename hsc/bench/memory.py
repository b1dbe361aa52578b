"""Peak memory of a benchmark process (a module of its own: the index bench imports it before timing)."""

from __future__ import annotations

import os
import resource
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's peak resident set so far, in MB.

    Linux's ``VmHWM`` belongs to the process image, so it starts again at ``exec``;
    ``getrusage``'s ``ru_maxrss`` does not: a child started from a large process
    reports at least its parent's size at the fork (a suite run under ``bench perf``
    after the encoders were loaded reported 2.4 GB at 10^4 leaves)."""
    peak_kb = _status_number(Path("/proc/self/status"), "VmHWM:")
    if peak_kb is not None:
        return round(peak_kb / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def children_peak_rss_mb() -> dict[int, float]:
    """Each live child process's own peak resident set so far, in MB, by process id.

    Read while the children run (a pool's workers, before it is shut down): the
    ``RUSAGE_CHILDREN`` figure of those that ended counts, for a worker started
    by fork and exec, the memory it shared with this process before its exec.
    Empty where ``/proc`` is not."""
    peaks = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        if _status_number(status, "PPid:") == os.getpid():
            peak_kb = _status_number(status, "VmHWM:")
            if peak_kb is not None:
                peaks[int(status.parent.name)] = round(peak_kb / 1024, 1)
    return peaks


def _status_number(status: Path, field: str) -> int | None:
    """The number on a ``/proc/PID/status`` line (memory in kB), None when absent."""
    try:
        text = status.read_text()
    except OSError:  # no /proc, or the process has just ended
        return None
    for line in text.splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return None
