"""How long indexing a folder will take: counted before it starts, corrected while it runs.

Only the files indexing will parse are counted (a folder of ``.so`` files and images is
small work however many bytes it holds), and the time comes from this machine's own rate,
measured on its last indexing run and kept in the database; until one is measured, a first
guess. The rate counts only the leaves a run embedded (a run from cached vectors teaches
nothing). While a run goes, :class:`TimeLeft` moves from that estimate to what the files
finished so far say.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from hsc.chunk.ingest import BINARY_EXTENSIONS, walk_repository
from hsc.chunk.reading import BINARY_SNIFF_BYTES
from hsc.params import Settings
from hsc.store import Store

# Source bytes per leaf, measured on the standard library's email, json and asyncio packages
# (566, 721 and 499 with the default chunk sizes): enough for an estimate, not a promise.
BYTES_PER_LEAF = 550
# The first guess before a run on this machine was measured: 55 leaves a second (the
# README's embedding figure on two shared cores) of 550 bytes each.
GUESSED_BYTES_PER_SECOND = 55.0 * BYTES_PER_LEAF
# A run that parsed less than this says little about the rate (start-up dominates).
MEASURABLE_BYTES = 200_000
# Nor does one that embedded fewer leaves: a run whose vectors were cached embeds none, and its
# speed (parsing only) once made the next real run's estimate ten to twenty times too short.
MEASURABLE_LEAVES = 200
RATE_KEY = "indexing_bytes_per_second"


@dataclass(frozen=True)
class FolderSurvey:
    """What indexing a folder will face, counted before it starts."""

    files: int  # files the walk finds
    bytes: int
    parsed_files: int = 0  # of them, the files indexing will parse (text, within the size limit)
    parsed_bytes: int = 0
    bytes_per_second: float = GUESSED_BYTES_PER_SECOND
    measured: bool = False  # the rate was measured on this machine (else it is a first guess)

    @property
    def estimated_leaves(self) -> int:
        return max(1, round(self.parsed_bytes / BYTES_PER_LEAF)) if self.parsed_files else 0

    @property
    def estimated_seconds(self) -> float:
        """Parsing and embedding every file to parse (vectors already cached make it faster)."""
        return self.parsed_bytes / self.bytes_per_second

    def describe(self) -> str:
        """One line for a person: what will be parsed, and about how long it takes here."""
        skipped = self.files - self.parsed_files
        others = f" ({skipped} others skipped: binary, too large or excluded)" if skipped else ""
        source = "this machine's last run" if self.measured else "a first guess until a run here is measured"
        return (
            f"{self.parsed_files} files to parse, {self.parsed_bytes / 1024:,.0f} kB{others}: about "
            f"{self.estimated_leaves} leaves, about {duration(self.estimated_seconds)} (rate from {source})"
        )


def survey_folder(
    root: Path, settings: Settings | None = None, store: Store | None = None, excludes: Iterable[str] = ()
) -> FolderSurvey:
    """The files indexing would read under ``root`` (the same walk and exclusions), those of
    them it will parse and their size, and the rate ``store`` measured (else the first guess)."""
    settings = settings or Settings()
    files = size = parsed_files = parsed_bytes = 0
    for rel_path in walk_repository(root, excludes=excludes):
        files += 1
        with suppress(OSError):  # gone since the walk: indexing will say so
            file_size = (root / rel_path).stat().st_size
            size += file_size
            if will_parse(root / rel_path, file_size, settings):
                parsed_files += 1
                parsed_bytes += file_size
    rate = measured_rate(store) if store is not None else None
    return FolderSurvey(
        files, size, parsed_files, parsed_bytes, rate or GUESSED_BYTES_PER_SECOND, rate is not None
    )


def will_parse(path: Path, size: int, settings: Settings) -> bool:
    """The cheap part of ingestion's checks: not a binary type, within the size limit, no NUL
    byte at its start (the rest, such as encodings and long lines, is rare and decided then)."""
    binary_type = PurePosixPath(path.name.lower()).suffix in BINARY_EXTENSIONS
    if binary_type or not 0 < size <= settings.max_file_bytes:
        return False
    with path.open("rb") as handle:
        return b"\0" not in handle.read(BINARY_SNIFF_BYTES)


def measured_rate(store: Store) -> float | None:
    """Source bytes (of leaves embedded) a second on this machine's last measurable run, if any."""
    value = store.meta(RATE_KEY)
    with suppress(TypeError, ValueError):
        rate = float(value)  # type: ignore[arg-type]
        return rate if rate > 0 else None
    return None


def record_rate(store: Store, leaves_embedded: int, seconds: float) -> None:
    """Keep the rate of a run that embedded enough leaves to measure it, as the source bytes a
    second those leaves stand for (:data:`BYTES_PER_LEAF` each): the estimate's unit. Leaves
    taken from the vector cache cost next to nothing, so they are not counted."""
    if leaves_embedded >= MEASURABLE_LEAVES and seconds > 0:
        store.set_meta(RATE_KEY, f"{leaves_embedded * BYTES_PER_LEAF / seconds:.1f}")


class TimeLeft:
    """The time a run has left, from Progress events: the estimate made before it started,
    moving to the extrapolation of the files finished so far as they become the larger share."""

    def __init__(self, expected_seconds: float | None = None) -> None:
        self.expected = expected_seconds
        self.started = time.monotonic()
        self.fraction = 0.0

    def __call__(self, event: object) -> None:
        stage, done, total = (getattr(event, name, None) for name in ("stage", "done", "total"))
        if stage == "files" and total:
            self.fraction = min(1.0, done / total)  # type: ignore[operator]

    def seconds_left(self, now: float | None = None) -> float | None:
        """None until there is anything to go on."""
        elapsed = (now if now is not None else time.monotonic()) - self.started
        planned = None if self.expected is None else max(0.0, self.expected - elapsed)
        if self.fraction <= 0.0:
            return planned
        observed = elapsed / self.fraction - elapsed
        if planned is None:
            return observed if self.fraction >= 0.05 else None
        return (1 - self.fraction) * planned + self.fraction * observed


def duration(seconds: float) -> str:
    """A rough duration a person reads at a glance: "40 s", "3 min", "1 h 5 min"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
