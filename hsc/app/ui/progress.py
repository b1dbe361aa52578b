"""Progress bars fed by the library's Progress events, and the first start's indexing job."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from hsc import Index, Parameters, Progress
from hsc.app.ui.context import default_repository_path, repository_path_problem, set_active_repository
from hsc.app.ui.jobs import start_job, watch_job
from hsc.app.ui.text import md, shorten
from hsc.index.jobs import Job

# The stages a person watches as bars, with what one step of each is.
_BARS = {
    "files": "Files parsed",
    "embed": "Embedding batches",
    "summaries": "Summaries",
}
LAST_REPORT = "last_index_report"


class ProgressBars:
    """One bar per stage that has a count; scan and hierarchy events (single steps) go to a
    line of text underneath.

    Bars redraw at most every 0.1 s, and always on a stage's last step: a
    repository of thousands of files would otherwise send thousands of updates.
    """

    def __init__(self, stages: tuple[str, ...] = tuple(_BARS)) -> None:
        self._bars = {stage: st.progress(0.0, text=f"{_BARS[stage]}: waiting") for stage in stages}
        self._note = st.empty()
        self._seen: set[str] = set()
        self._drawn_at = 0.0

    def __call__(self, event: Progress) -> None:
        self._seen.add(event.stage)
        if event.stage not in self._bars:
            self._note.caption(md(f"{event.stage}: {event.message}"))
            return
        last_step = event.total > 0 and event.done >= event.total
        now = time.monotonic()
        if not last_step and now - self._drawn_at < 0.1:
            return
        self._drawn_at = now
        fraction = min(1.0, event.done / event.total) if event.total else 1.0
        detail = f" · {shorten(event.message, 60)}" if event.message else ""
        text = f"{_BARS[event.stage]}: {event.done} of {event.total}{detail}"
        self._bars[event.stage].progress(fraction, text=md(text))

    def finish(self) -> None:
        """Say so for stages that had nothing to do (e.g. every vector cached)."""
        for stage, bar in self._bars.items():
            if stage not in self._seen:
                bar.progress(1.0, text=f"{_BARS[stage]}: nothing to do (all cached or unchanged)")


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

    The run is a job of its own (:mod:`hsc.app.ui.jobs`): this page watches it, and a tab
    closed meanwhile leaves it running. Tried once per session: a failure is shown, not
    retried on every rerun; two tabs opened at once watch the same job.
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
    # Said while it runs, then gone: the finished run's own line (leaves, files, time) stays.
    banner = st.empty()
    banner.info(
        md(f"First start: indexing the default repository {path.name} so there is something to explore.")
    )
    job, _ = start_job(index, path, params, None, 0)
    ended = watch_job(index, job.id, "first-start:stop")
    banner.empty()
    if ended.state != "finished":
        st.warning(md(f"Indexing the default repository {path}: {ended.describe()}"))
        return
    remember_report(ended)
    set_active_repository(int(ended.outcome["repository_id"]))


def remember_report(job: Job) -> None:
    """Keep a finished job's report for the Repository page's "Last indexing run"."""
    st.session_state[LAST_REPORT] = {**job.outcome["report"], "repository_id": job.outcome["repository_id"]}
