"""Progress bars fed by the library's Progress events, and the indexing run."""

from __future__ import annotations

import re
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import streamlit as st

from hsc import Index, IndexReport, Parameters, Progress
from hsc.app.ui.context import (
    default_repository_path,
    index_lock,
    repository_path_problem,
    set_active_repository,
)
from hsc.app.ui.text import md, shorten
from hsc.explore.views import duration

# The stages a person watches as bars, with what one step of each is.
_BARS = {
    "files": "Files parsed",
    "embed": "Embedding batches",
    "summaries": "Summaries",
}
LAST_REPORT = "last_index_report"


class OverallBar:
    """Leaves embedded of all the leaves expected, with the rate and the time left.

    The pipeline embeds in windows and reports each window's batches, so the
    leaves done so far are the windows finished plus this one's batches. The
    total is the estimate made before starting, raised if the run passes it.
    """

    def __init__(self, expected_leaves: int, batch_size: int) -> None:
        self._bar = st.progress(0.0, text=f"Overall: about {expected_leaves} leaves to embed")
        self._expected = max(1, expected_leaves)
        self._batch_size = batch_size
        self._finished_windows = 0
        self._window = (0, 0)  # (batches done, leaves) of the window being embedded
        self._started = time.monotonic()

    def __call__(self, event: Progress) -> None:
        if event.stage != "embed":
            return
        found = _WINDOW_LEAVES.search(event.message)
        leaves = int(found.group(1)) if found else event.total * self._batch_size
        if event.done < self._window[0]:  # a new window began: the last one is done
            self._finished_windows += self._window[1]
        self._window = (event.done, leaves)

    @property
    def embedded(self) -> int:
        done, leaves = self._window
        return self._finished_windows + min(leaves, done * self._batch_size)

    def draw(self) -> None:
        embedded = self.embedded
        total = max(self._expected, embedded)
        seconds = time.monotonic() - self._started
        rate = embedded / seconds if seconds > 0 else 0.0
        left = f" · about {duration((total - embedded) / rate)} left" if rate > 0 else ""
        self._bar.progress(
            min(1.0, embedded / total),
            text=f"Overall: {embedded} of ~{total} leaves embedded · {rate:.0f} leaves/s{left}",
        )

    def finish(self, embedded: int) -> None:
        self._bar.progress(1.0, text=f"Overall: done, {embedded} leaves embedded")


_WINDOW_LEAVES = re.compile(r"of (\d+) leaves")


class ProgressBars:
    """One bar per stage that has a count, and optionally an overall bar above
    them; scan and hierarchy events (single steps) go to a line of text underneath.

    Bars redraw at most every 0.1 s, and always on a stage's last step: a
    repository of thousands of files would otherwise send thousands of updates.
    """

    def __init__(self, stages: tuple[str, ...] = tuple(_BARS), overall: OverallBar | None = None) -> None:
        self.overall = overall
        self._bars = {stage: st.progress(0.0, text=f"{_BARS[stage]}: waiting") for stage in stages}
        self._note = st.empty()
        self._seen: set[str] = set()
        self._drawn_at = 0.0

    def __call__(self, event: Progress) -> None:
        self._seen.add(event.stage)
        if self.overall is not None:
            self.overall(event)
        if event.stage not in self._bars:
            self._note.caption(md(f"{event.stage}: {event.message}"))
            return
        last_step = event.total > 0 and event.done >= event.total
        now = time.monotonic()
        if not last_step and now - self._drawn_at < 0.1:
            return
        self._drawn_at = now
        if self.overall is not None:
            self.overall.draw()
        fraction = min(1.0, event.done / event.total) if event.total else 1.0
        detail = f" · {shorten(event.message, 60)}" if event.message else ""
        text = f"{_BARS[event.stage]}: {event.done} of {event.total}{detail}"
        self._bars[event.stage].progress(fraction, text=md(text))

    def finish(self) -> None:
        """Say so for stages that had nothing to do (e.g. every vector cached)."""
        for stage, bar in self._bars.items():
            if stage not in self._seen:
                bar.progress(1.0, text=f"{_BARS[stage]}: nothing to do (all cached or unchanged)")


INDEXING = "indexing_in_progress"


def interrupted_indexing() -> str | None:
    """The folder whose indexing this session started but never finished (the
    page was left or Stop pressed, which ends the script run), once; else None.

    Files are committed one by one, so what was done is kept, and indexing the
    folder again carries on from there."""
    return st.session_state.pop(INDEXING, None)


def run_indexing(
    index: Index,
    path: Path,
    params: Parameters,
    expected_leaves: int | None = None,
    excludes: list[str] | None = None,
) -> IndexReport:
    """Index ``path`` with bars a person can watch (an overall one when
    ``expected_leaves`` is given), and keep the report for the Repository page
    (it outlives this run of the script)."""
    started = time.perf_counter()
    with st.status(md(f"Indexing {path.name}…"), expanded=True) as status:
        overall = OverallBar(expected_leaves, params.embedding_batch_size) if expected_leaves else None
        bars = ProgressBars(overall=overall)
        st.session_state[INDEXING] = str(path)
        try:
            report = index.index(path, params, progress=bars, excludes=excludes)
        except Exception:
            st.session_state.pop(INDEXING, None)
            status.update(label=md(f"Indexing {path.name} failed"), state="error")
            raise
        st.session_state.pop(INDEXING, None)
        if overall is not None:
            overall.finish(report.leaves_embedded)
        bars.finish()
        seconds = time.perf_counter() - started
        status.update(
            label=md(
                f"Indexed {path.name}: {report.leaves} leaves, {report.files_seen} files, {seconds:.1f} s"
            ),
            state="complete",
            expanded=False,
        )
    # A plain dict (problems included), so it can be shown after the script reruns.
    st.session_state[LAST_REPORT] = asdict(report)
    return report


def run_build(index: Index, repository_id: int, params: Parameters, name: str) -> dict[str, Any]:
    """Build and save the hierarchy ``name`` with visible summary progress."""
    with st.status(md(f"Building parameter set {name}…"), expanded=True) as status:
        bars = ProgressBars(stages=("summaries",))
        info = index.build(repository_id, params, name=name, progress=bars)
        bars.finish()
        status.update(
            label=md(f"Saved {name}: {info['group_count']} groups in {info['document_count']} files"),
            state="complete",
            expanded=False,
        )
    return info


AUTO_INDEX_TRIED = "auto_index_tried"


def index_default_repository_once(index: Index, params: Parameters) -> None:
    """On a first visit to an empty database, index the default repository
    (``HSC_APP_REPO`` or the bundled sample) so every page has something to show.

    Tried once per session: a failure is shown, not retried on every rerun.
    """
    if st.session_state.get(AUTO_INDEX_TRIED) or index.repositories():
        return
    st.session_state[AUTO_INDEX_TRIED] = True
    path = default_repository_path()
    problem = repository_path_problem(str(path))
    if problem:
        st.warning(
            md(f"The default repository cannot be indexed: {problem} Choose one on the Repository page.")
        )
        return
    # Two tabs opened at once on an empty database must not both index it.
    with index_lock():
        if index.repositories():
            return
        # Said while it runs, then gone: the finished run's own line (leaves, files, time) stays.
        banner = st.empty()
        banner.info(
            md(f"First start: indexing the default repository {path.name} so there is something to explore.")
        )
        try:
            report = run_indexing(index, path, params)
        except (OSError, RuntimeError, ValueError) as error:
            st.error(md(f"Indexing the default repository {path} failed: {error}"))
            return
        finally:
            banner.empty()
    set_active_repository(report.repository_id)
