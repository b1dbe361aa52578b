"""``python -m hsc index`` that holds still once a file is committed, for the interrupt tests.

    python tests/index_cli_paused.py [hsc index arguments...]

Runs the real command line (``hsc.cli.main``) with its progress lines on
stderr. The first ``[files]`` line after an ``[embed]`` line comes once a
window of files has been written (vectors first, then each file's rows): at
that line this script prints ``paused`` on stdout and stops inside the
progress callback until a signal arrives. The test signals then, so the run is
provably mid-way however fast or loaded the machine is (a run that reached its
end before a signal sent "soon after" exited 0 and failed the test under load).
"""

from __future__ import annotations

import re
import signal
import sys
import time

from hsc.cli import main


class PausingStderr:
    """stderr that holds the process at the first committed file (once)."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._embedded = False
        self._paused = False

    def write(self, text: str) -> int:
        written = self._stream.write(text)
        self._stream.flush()
        self._embedded = self._embedded or text.startswith("[embed]")
        if not self._paused and self._embedded and re.match(r"\[files\] \d+/", text):
            self._paused = True
            # The real stdout: a Ray run sends sys.stdout to stderr (hsc.cli), the test reads stdout.
            print("paused", file=sys.__stdout__, flush=True)
            time.sleep(600)  # the signal's KeyboardInterrupt ends this, inside the run
        return written

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


if __name__ == "__main__":
    # A command typed in a terminal starts with Ctrl-C's default; a test run started in the
    # background of a shell without job control inherits SIGINT ignored, and Python then keeps
    # it ignored (no KeyboardInterrupt ever comes). Start as the terminal would.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.stderr = PausingStderr(sys.stderr)
    raise SystemExit(main(["index", *sys.argv[1:]]))
