"""Index a repository and stop dead at a chosen point, for kill -9 tests.

    python tests/index_until.py DB REPO STAGE COUNT [BATCH] [INDEX_WORKERS] [RAY_ADDRESS]

Runs the real pipeline (real model, real SQLite) and, at the first progress
event of STAGE with ``done >= COUNT``, prints ``paused`` and sleeps: the test
then kills the process with SIGKILL at exactly that point. With RAY_ADDRESS the files
are cut and embedded on that Ray cluster (``executor="ray"``).
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hsc.api import Index  # noqa: E402
from hsc.index.pipeline import Progress  # noqa: E402
from hsc.params import Parameters, Settings  # noqa: E402


def main() -> None:
    database, repository, stage, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    batch = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    workers = sys.argv[6] if len(sys.argv) > 6 else "auto"
    on_ray = {"executor": "ray", "ray_address": sys.argv[7]} if len(sys.argv) > 7 else {}

    def pause_at(event: Progress) -> None:
        if event.stage == stage and event.done >= count:
            print("paused", flush=True)
            time.sleep(600)

    # The same encoder as the tests' in-process runs: the default (onnx-int8), as users get it.
    settings = Settings(summariser="digest", index_workers=workers, **on_ray)
    with Index.open(database, settings) as index:
        index.index(repository, Parameters(embedding_batch_size=batch), progress=pause_at)
    print("finished", flush=True)


if __name__ == "__main__":
    main()
