"""Index runs as jobs, seen from a page: start one, watch it, stop it (hsc.index.jobs).

A page that watches a job redraws its bars from the job's row until it ends.
Closing the tab, or a click that reruns the page, ends only the watching: the
worker goes on, and any tab (this one after its rerun, or another) watches it
again or asks it to stop.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from hsc import Index, Parameters
from hsc.app.ui.context import index_lock
from hsc.app.ui.text import md, shorten
from hsc.explore.views import duration
from hsc.index import jobs
from hsc.index.jobs import Job

_BARS = {"files": "Files parsed", "embed": "Embedding batches", "summaries": "Summaries"}
WATCH_EVERY_SECONDS = 0.5


def live_jobs(index: Index) -> list[Job]:
    with index_lock():
        return jobs.live_jobs(index.store)


def recent_jobs(index: Index, limit: int = 10) -> list[Job]:
    with index_lock():
        return jobs.recent_jobs(index.store, limit)


def last_job(index: Index, root: str | Path) -> Job | None:
    with index_lock():
        return jobs.last_job(index.store, root)


def start_job(
    index: Index, path: Path, params: Parameters, excludes: list[str] | None, expected_leaves: int
) -> tuple[Job, bool]:
    with index_lock():
        return jobs.start_job(index.store, path, params, excludes, expected_leaves)


def stop_job(index: Index, job_id: int) -> None:
    with index_lock():
        jobs.request_stop(index.store, job_id)


def _get(index: Index, job_id: int) -> Job:
    with index_lock():
        job = jobs.get_job(index.store, job_id)
    assert job is not None
    return job


def overall_text(job: Job) -> tuple[float, str]:
    """The overall bar: leaves embedded of those expected, at the rate of leaves actually
    embedded (not counting cached ones, which cost nothing), and the time that leaves."""
    embedded, expected = job.leaves_embedded, max(job.leaves_expected, job.leaves_embedded, 1)
    rate = embedded / job.embed_seconds if job.embed_seconds > 0 else 0.0
    if rate <= 0:
        return 0.0, f"Overall: about {job.leaves_expected} leaves to embed (fewer with cached vectors)"
    left = f" · about {duration((expected - embedded) / rate)} left" if embedded < expected else ""
    return min(
        1.0, embedded / expected
    ), f"Overall: {embedded} of ~{expected} leaves embedded · {rate:.0f} leaves/s{left}"


def watch_job(index: Index, job_id: int, stop_key: str) -> Job:
    """Draw a job's progress until it ends, with a Stop button; returns the ended job."""
    job = _get(index, job_id)
    if st.button("Stop indexing", key=stop_key, help="What was committed is kept; indexing again resumes."):
        stop_job(index, job_id)
    with st.status(
        md(f"Indexing {job.name}… (a job of its own: closing this tab does not stop it)"), expanded=True
    ) as status:
        overall = st.progress(0.0, text="Overall: starting")
        bars = {stage: st.progress(0.0, text=f"{label}: waiting") for stage, label in _BARS.items()}
        note = st.empty()
        while True:
            job = _get(index, job_id)
            fraction, text = overall_text(job)
            overall.progress(fraction, text=text)
            for stage, bar in bars.items():
                step = job.stage(stage)
                if step:
                    done, total, message = step
                    detail = f" · {shorten(message, 60)}" if message else ""
                    bar.progress(
                        min(1.0, done / total) if total else 1.0,
                        text=md(f"{_BARS[stage]}: {done} of {total}{detail}"),
                    )
            for stage in ("scan", "hierarchy"):
                step = job.stage(stage)
                if step:
                    note.caption(md(f"{stage}: {step[2]}"))
            if not job.live:
                break
            time.sleep(WATCH_EVERY_SECONDS)
        state = {"finished": "complete", "stopped": "complete"}.get(job.state, "error")
        status.update(label=md(f"Indexing {job.name}: {job.describe()}"), state=state, expanded=False)
    return job
