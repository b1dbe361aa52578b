"""hsc in a browser: explore and tune the hierarchy of a code repository.

Run with ``hsc app`` (:mod:`hsc.app.launch`). This main script is the Repository page:
choose what to index, watch it being indexed, see what came in. The other
stages have a page each in ``pages/``; ``ui/`` holds what they share.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from hsc import Index, Parameters
from hsc.app import ui
from hsc.app.ui.charts import folder_leaves_figure
from hsc.app.ui.progress import LAST_REPORT
from hsc.chunk.ingest import parse_excludes
from hsc.explore.figures import chart_config
from hsc.params import with_values

index = ui.page_setup("Repository")
st.title("Repository")
st.caption(
    "**Stage 1–2: ingest and embed.** Every source file is parsed with tree-sitter and cut along its "
    "syntax tree into *leaves* (functions, methods, classes; long ones split, tiny ones merged), and each "
    "leaf is embedded once. Cutting along the syntax keeps each leaf one meaningful unit, and cached vectors "
    "mean re-indexing only embeds what changed."
)

JUST_INDEXED = "repo:just_indexed"
if JUST_INDEXED in st.session_state:
    good, message = st.session_state.pop(JUST_INDEXED)
    (st.success if good else st.warning)(ui.md(message))


def say_how_it_ended(job: ui.Job) -> None:
    """After a watched job ends: its outcome (shown after the rerun), and a finished one made active."""
    if job.state == "finished":
        report = job.outcome["report"]
        ui.remember_report(job)
        ui.set_active_repository(int(job.outcome["repository_id"]))
        if report["leaves"] == 0:
            problems = "; ".join(f"{p['path']}: {p['reason']}" for p in report.get("problems", [])[:3])
            st.session_state[JUST_INDEXED] = (
                False,
                f"Nothing could be indexed in {job.name}: {report['files_seen']} files seen, none gave a "
                "leaf" + (f" ({problems})" if problems else "") + ". See the skipped files below.",
            )
        else:
            st.session_state[JUST_INDEXED] = (True, f"Indexed {job.name}: {job.outcome['message']}.")
    else:
        st.session_state[JUST_INDEXED] = (False, f"Indexing {job.name} {job.describe()}")
        repository_id = index.repository_id(job.root)
        if repository_id is not None:  # its page, where it can be resumed
            ui.set_active_repository(repository_id)


# Runs in progress, whichever tab started them: watched here until they end, and stoppable.
watched = False
for running in ui.live_jobs(index):
    say_how_it_ended(ui.watch_job(index, running.id, f"repo:stop:{running.id}"))
    watched = True
if watched:
    st.rerun()


def index_as_job(
    index: Index, path: Path, excludes: list[str] | None = None, params: Parameters | None = None
) -> None:
    """Start indexing ``path`` as a job and rerun, so the page watches it (a run of that folder
    already going, from any tab, is watched instead of starting a second)."""
    survey = ui.folder_survey(path, None if excludes is None else tuple(excludes))
    _, new = ui.start_job(index, path, params or ui.current_parameters(), excludes, survey.estimated_leaves)
    if not new:
        st.session_state[JUST_INDEXED] = (False, f"{path.name} is being indexed already; this is that run.")
    st.rerun()


SAMPLE = "A bundled sample repository"
LOCAL = "A folder on this machine"

choose, known = st.columns([1, 1], gap="large")

with choose:
    st.subheader("Index a repository")
    source = st.radio("What to index", [SAMPLE, LOCAL], horizontal=True, key="repo:source")
    path: Path | None = None
    if source == SAMPLE:
        samples = ui.sample_repositories()
        if samples:
            chosen = st.selectbox("Sample repository", [p.name for p in samples], key="repo:sample")
            path = next(p for p in samples if p.name == chosen)
        else:
            st.warning("No sample repositories were found next to the app (hsc/samples/ in the package).")
    else:
        typed = st.text_input("Folder path", key="repo:path", placeholder="/home/me/src/my-project")
        problem = ui.repository_path_problem(typed)
        if not typed.strip():
            st.caption("Give the top folder of a repository.")
        elif problem:
            st.error(ui.md(problem))
        else:
            path = Path(typed.strip()).expanduser().resolve()
    params = ui.current_parameters()
    st.caption(
        f"Leaves are cut with minimum_chunk_token_length = {params.minimum_chunk_token_length} and "
        f"maximum_chunk_token_length = {params.maximum_chunk_token_length} (change them in the sidebar)."
    )
    excludes: list[str] | None = None
    if path is not None:
        kept = index.excludes(path)
        typed_excludes = st.text_input(
            "Leave out",
            key="repo:exclude",
            placeholder=", ".join(kept) or "glob patterns, e.g. tests/data/, *_pb2.py",
            help="Paths to keep out of the index (gitignore patterns, separated by commas), besides the "
            "repository's .hscignore. They are kept with the repository for the next runs; empty keeps "
            "the ones kept" + (f" ({', '.join(kept)})." if kept else "."),
        )
        try:
            excludes = parse_excludes(typed_excludes) if typed_excludes.strip() else None
        except ValueError as error:
            st.error(ui.md(str(error)))
        survey = ui.folder_survey(path, None if excludes is None else tuple(excludes))
        st.caption(f"{survey.describe()}; less with cached vectors.")
    # Never disabled: a path typed and not yet confirmed arrives with the click, which must count.
    if st.button("Index", type="primary", key="repo:index"):
        if path is None:
            st.warning("Choose a repository to index first.")
        else:
            index_as_job(index, path, excludes)

with known:
    st.subheader("Already in the database")
    repositories = index.repositories()
    if not repositories:
        st.info("Nothing indexed yet: index a repository on the left.")
    else:
        active = ui.active_repository(index)
        last_runs = {job.root: job for job in reversed(ui.recent_jobs(index, 50))}  # the newest per folder
        ids = [int(r["id"]) for r in repositories]
        names = {int(r["id"]): f"{r['name']} — {r['root']}" for r in repositories}

        def _open_selected() -> None:
            ui.set_active_repository(st.session_state["repo:open"])

        # Selecting a repository only makes it active: its leaves and vectors are already stored.
        st.session_state["repo:open"] = int(active["id"]) if active else ids[0]
        st.selectbox(
            "Active repository", ids, format_func=names.__getitem__, key="repo:open", on_change=_open_selected
        )
        st.dataframe(
            pd.DataFrame(
                {
                    "name": [r["name"] for r in repositories],
                    "files": [r["file_count"] for r in repositories],
                    "leaves": [r["leaf_count"] for r in repositories],
                    "indexed": [
                        datetime.fromtimestamp(r["indexed_at"]).strftime("%Y-%m-%d %H:%M")
                        if r["indexed_at"]
                        else "not finished"
                        for r in repositories
                    ],
                    "last run": [
                        (last_runs[r["root"]].state if r["root"] in last_runs else "") for r in repositories
                    ],
                    "root": [r["root"] for r in repositories],
                }
            ),
            hide_index=True,
        )

repository = ui.active_repository(index)
if repository is None:
    st.stop()

st.divider()
repository_id = int(repository["id"])
st.subheader("What came in")
st.text(f"{repository['name']}  ·  {repository['root']}")
last_run = ui.last_job(index, repository["root"])
if last_run is not None and last_run.state in ("crashed", "stopped", "failed"):
    ended = datetime.fromtimestamp(last_run.ended_at or last_run.started_at).strftime("%Y-%m-%d %H:%M")
    st.warning(
        ui.md(
            f"The last indexing run of {repository['name']} ({ended}) did not finish: {last_run.describe()}. "
            "The files it committed are kept; resuming parses and embeds only the rest."
        )
    )
    if st.button("Resume indexing", key="repo:resume", help="The same folder, parameters and exclusions."):
        params = with_values(Parameters(), last_run.parameters)
        index_as_job(index, Path(last_run.root), last_run.excludes, params)

files = pd.DataFrame(index.files(repository_id))
if files.empty:
    st.info("This repository has no files in the database.")
    st.stop()
files["language"] = files["language"].fillna("unknown")
indexed = files[files["status"] == "indexed"]
not_indexed = files[files["status"] != "indexed"]
hierarchies = index.hierarchies(repository_id)

counts = st.columns(4)
counts[0].metric("Files indexed", len(indexed))
counts[1].metric("Files skipped or failed", len(not_indexed))
counts[2].metric("Leaves", int(files["leaf_count"].sum()))
counts[3].metric("Saved parameter sets", len(hierarchies))

st.plotly_chart(
    folder_leaves_figure(indexed["path"].tolist(), indexed["leaf_count"].tolist()),
    key="repo:folders",
    config=chart_config(f"leaves-per-folder-{repository['name']}"),
)
by_language, skipped = st.columns([1, 1], gap="large")
with by_language:
    st.markdown("**Per language**")
    languages = (
        indexed.groupby("language")
        .agg(files=("path", "count"), leaves=("leaf_count", "sum"), bytes=("size", "sum"))
        .reset_index()
        .sort_values("leaves", ascending=False)
    )
    st.dataframe(languages, hide_index=True)
with skipped:
    st.markdown("**Skipped files and why**")
    if not_indexed.empty:
        st.caption("None: every file found was indexed.")
    else:
        st.dataframe(not_indexed[["path", "status", "reason", "size"]], hide_index=True)
    warned = indexed[indexed["reason"].fillna("") != ""]
    if not warned.empty:
        st.markdown("**Indexed with a warning**")
        st.dataframe(warned[["path", "language", "reason"]], hide_index=True)

last = st.session_state.get(LAST_REPORT)
if last and int(last["repository_id"]) == repository_id:
    with st.expander("Last indexing run", expanded=False):
        st.dataframe(
            pd.DataFrame(
                [
                    {"what": name.replace("_", " "), "count": last[name]}
                    for name in (
                        "files_seen",
                        "files_parsed",
                        "files_unchanged",
                        "files_skipped",
                        "files_failed",
                        "files_removed",
                        "leaves",
                        "leaves_embedded",
                        "leaves_from_cache",
                    )
                ]
                + [{"what": "seconds", "count": round(last["seconds"], 2)}]
            ),
            hide_index=True,
        )

st.caption("Changed the chunking parameters, or edited files? Bring the index up to date:")
if st.button("Re-index this repository", key="repo:reindex"):
    root = Path(repository["root"])
    problem = ui.repository_path_problem(str(root))
    if problem:
        st.error(ui.md(f"Cannot re-index: {problem}"))
    else:
        index_as_job(index, root)
