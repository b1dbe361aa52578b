"""A fuzz target for reading and parsing, run for a bounded time.

    python tests/fuzz_parse_ingest.py [SECONDS]

Hypothesis turns the property below into a target fed with raw bytes
(``fuzz_one_input``): random buffers and mutations of the sample files go
in, a file is written with those bytes under a name of a random language,
and ingestion (read, decode, parse, chunk) must not raise and must return
leaves that tile the text. The test suite runs it for a few seconds
(``HSC_FUZZ_SECONDS``); run it longer by hand.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hsc.chunk.ingest import LANGUAGE_BY_EXTENSION, load_file
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings

COUNTER = get_counter()
PARAMS = Parameters(minimum_chunk_token_length=8, maximum_chunk_token_length=48)
SETTINGS = Settings(max_file_bytes=200_000, max_line_length=4000)
EXTENSIONS = sorted({*LANGUAGE_BY_EXTENSION, ".txt"})
SAMPLES = Path(__file__).resolve().parent.parent / "hsc" / "samples"
FOLDER = Path(tempfile.mkdtemp(prefix="hsc-fuzz-"))


def check_file(data: bytes, extension: str) -> None:
    """Ingest ``data`` as a file: never raises; indexed leaves are ordered, disjoint slices."""
    name = f"fuzzed{extension}"
    (FOLDER / name).write_bytes(data)
    parsed = load_file(FOLDER, name, PARAMS, SETTINGS, COUNTER)
    assert parsed.report.status in ("indexed", "skipped", "error"), parsed.report
    assert parsed.report.status != "error" or not parsed.report.reason.startswith("chunking failed")
    end = 0
    for leaf in parsed.leaves:
        assert end <= leaf.start_byte < leaf.end_byte, leaf
        assert leaf.start_line <= leaf.end_line
        end = leaf.end_byte


@settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=4096), st.sampled_from(EXTENSIONS))
def fuzz_target(data: bytes, extension: str) -> None:
    check_file(data, extension)


def _seeds() -> list[bytes]:
    return [path.read_bytes()[:4096] for path in sorted(SAMPLES.rglob("*")) if path.is_file()]


def _mutate(seed: bytes, rng: random.Random) -> bytes:
    data = bytearray(seed)
    for _ in range(rng.randint(1, 16)):
        if not data:
            break
        at = rng.randrange(len(data))
        choice = rng.random()
        if choice < 0.4:
            data[at] = rng.randrange(256)
        elif choice < 0.7:
            del data[at : at + rng.randint(1, 32)]
        else:
            data[at:at] = rng.choice([b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\r", b"{(", b"\"'", b"\n" * 3])
    return bytes(data)


def run(seconds: float, seed: int = 0) -> int:
    """Feed the target until ``seconds`` pass; the number of inputs tried.
    A failure raises with the input that caused it."""
    rng = random.Random(seed)
    seeds = _seeds()
    deadline = time.monotonic() + seconds
    tried = 0
    while time.monotonic() < deadline:
        if seeds and rng.random() < 0.5:
            buffer = _mutate(rng.choice(seeds), rng)
        else:
            buffer = rng.randbytes(rng.randint(0, 4096))
        # The buffer drives Hypothesis' choices: the file's bytes and its extension.
        fuzz_target.hypothesis.fuzz_one_input(buffer)
        tried += 1
    return tried


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    total = run(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
    print(f"{total} inputs, no failure")
