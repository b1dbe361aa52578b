"""The Evaluate page's pieces: choosing a run, running it, and reading saved runs.

The benchmark itself is :mod:`hsc.quality`; this module only asks for its
options, shows its progress and draws what it returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from hsc import Index
from hsc.app.ui.context import active_repository, database_path
from hsc.app.ui.params import current_parameters
from hsc.app.ui.text import blank_missing, code_language, line_range, md
from hsc.explore.figures import chart_config
from hsc.explore.views import duration
from hsc.params import RETRIEVAL_MODES
from hsc.quality.catalog import QUICK_SYSTEMS, SYSTEM_NAMES, SYSTEMS, expected_seconds
from hsc.quality.corpus import (
    LANGUAGES,
    MIN_QUERIES,
    QUICK_PACKAGES,
    STDLIB_PACKAGES,
    CorpusSurvey,
    stdlib_sources,
    survey_corpus,
)
from hsc.quality.regions import REGION_COLUMNS
from hsc.quality.report import TABLE_COLUMNS, frontier_figure, stage1_settings, sweep_heatmap
from hsc.quality.runs import compare_runs, current_point, explain_query, query_table
from hsc.quality.sweep import QUICK_QUERIES, Options, Progress, Report, run_quality
from hsc.store.dbfile import StoreError

CHOSEN_RUN = "evaluate:run"
# One benchmark at a time per server: runs share the corpus folder and its index.
RUNNING = threading.Lock()


@dataclass(frozen=True)
class Choice:
    """A corpus the user can run: what to pass to the benchmark and what it would give."""

    path: Path | None  # None: the standard library
    packages: tuple[str, ...]
    label: str
    survey: CorpusSurvey
    query_kind: str = "docstring"  # one of QUESTION_KINDS


# Parsing a large repository takes seconds: kept ten minutes, like a folder survey kept a minute.
@st.cache_data(ttl=600, max_entries=16, show_spinner="Counting the docstrings…")
def _survey(path: str | None, packages: tuple[str, ...], kind: str = "docstring") -> CorpusSurvey:
    sources = stdlib_sources(packages) if path is None else [(Path(path), "")]
    return survey_corpus(sources, kind)


# The benchmark's query kinds (hsc.quality.corpus.QUERY_KINDS) as the page names them.
QUESTION_KINDS = {
    "docstring": "functions (a docstring's first sentence)",
    "comment": "comments inside functions",
    "class": "classes (a class docstring's; regions scored)",
    "module": "modules (a module docstring's; regions and files scored)",
}


def choose_corpus(index: Index) -> Choice | None:
    """The corpus radio and its figures; None (with a one-line reason) when it cannot be run."""
    repository = active_repository(index)
    kinds = ["standard library"] + ([f"active repository: {repository['name']}"] if repository else [])
    kind = st.radio("Corpus", kinds, horizontal=True, key="evaluate:corpus")
    query_kind = st.radio(
        "Questions",
        list(QUESTION_KINDS),
        format_func=QUESTION_KINDS.get,
        horizontal=True,
        key="evaluate:kind",
        help="What the queries ask for: a function (its docstring's first sentence), a commented line, "
        "a class (the class's lines) or a module (its file). Class and module runs also score the "
        "answers above the leaves (docs/hierarchy.md).",
    )
    if kind == "standard library":
        packages = st.multiselect(
            "Standard-library packages",
            STDLIB_PACKAGES,
            default=QUICK_PACKAGES,
            key="evaluate:packages",
            help="Found with sysconfig on this machine; tests left out. The command-line benchmark "
            "uses all of them.",
        )
        if not packages:
            st.warning("Choose at least one package.")
            return None
        label = "standard library: " + ", ".join(packages)
        choice = Choice(None, tuple(packages), label, _survey(None, tuple(packages), query_kind), query_kind)
    else:
        assert repository is not None
        root = Path(repository["root"])
        if not root.is_dir():
            st.warning(f"The active repository's folder is gone: {md(root)}.")
            return None
        choice = Choice(root, (), str(repository["name"]), _survey(str(root), (), query_kind), query_kind)
    survey = choice.survey
    if survey.queries < MIN_QUERIES:
        st.warning(
            f"{md(choice.label)} has {survey.queries} usable questions of this kind "
            f"(at least {MIN_QUERIES} needed): choose another corpus."
        )
        return None
    st.caption(
        f"{survey.files} files, {survey.bytes / 1000:.0f} kB: {survey.queries} queries available "
        f"({QUESTION_KINDS[choice.query_kind]}: sentences of at least 4 words, on definitions of at "
        "least 5 lines; the corpus is a copy with every doc blanked)."
    )
    return choice


def choose_options(choice: Choice) -> Options:
    """How many queries, which systems, whether to sweep; with the time to expect."""
    left, right = st.columns([1, 3])
    queries = left.number_input(
        "Queries",
        min_value=MIN_QUERIES,
        max_value=choice.survey.queries,
        value=min(QUICK_QUERIES, choice.survey.queries),
        step=50,
        key=f"evaluate:queries:{choice.label}",  # each corpus has its own maximum
        help="Drawn at random (seed 0) from the available ones: the same corpus gives the same queries.",
    )
    systems = right.multiselect(
        "Systems",
        SYSTEM_NAMES,
        default=QUICK_SYSTEMS,
        key="evaluate:systems",
        help="; ".join(f"{name}: {SYSTEMS[name].about}" for name in SYSTEM_NAMES),
    )
    swept = st.checkbox(
        "Sweep threshold × window × stage 1 (about 100 more configurations, scored on the cached vectors)",
        value=True,
        key="evaluate:sweep",
    )
    first, rerun = expected_seconds(choice.survey.bytes, systems, int(queries), swept)
    embedding = sorted({SYSTEMS[n].embeds for n in systems} - {""})
    st.caption(
        f"Expect about {duration(first)} the first time this corpus is run (embedding dominates"
        + (f"; {', '.join(embedding)} are embedded as well" if embedding else "")
        + f"), about {duration(rerun)} afterwards: every vector is cached (a quiet 2-core machine; "
        "several times that while other work runs). Runs use the sidebar's parameters."
    )
    return Options(
        path=choice.path,
        packages=choice.packages or STDLIB_PACKAGES,
        queries=int(queries),
        out=database_path().parent / "quality",
        params=current_parameters(),
        sweep=swept,
        systems=tuple(systems),
        query_kind=choice.query_kind,
    )


def run(index: Index, options: Options) -> int | None:
    """Run the benchmark with a progress bar and save it; the new run's id, or None."""
    if not options.systems:
        st.warning("Choose at least one system.")
        return None
    return run_saved(index, lambda report, progress: run_quality(options, report, index.embedder, progress))


def run_saved(index: Index, benchmark: Callable[[Report, Progress], dict[str, Any]]) -> int | None:
    """Run ``benchmark(report, progress)`` with a progress bar, one at a time per server, and save
    its result; the new run's id, or None (with a one-line warning) when it could not run."""
    if not RUNNING.acquire(blocking=False):
        st.warning("Another evaluation is running on this server; try again when it has finished.")
        return None
    try:
        bar = st.progress(0.0, text="Starting…")
        done = [0.0]

        def progress(fraction: float, message: str) -> None:
            done[0] = max(done[0], min(fraction, 1.0))  # the indexing reports per batch of files
            bar.progress(done[0], text=md(message))

        try:
            result = benchmark(lambda message: progress(done[0], message), progress)
        except (OSError, ValueError, StoreError) as error:  # a folder gone, no queries, a busy index
            bar.empty()
            st.warning(f"The evaluation stopped: {md(error)}")
            return None
        bar.empty()
        return index.save_quality_run(result)
    finally:
        RUNNING.release()


def saved_runs(index: Index) -> None:
    """The saved quality runs: choose one, read it, delete it, compare two."""
    runs = index.quality_runs(suite="quality")
    st.header("Saved runs")
    if not runs:
        st.info("No run yet: choose a corpus and press Run.")
        return
    saved = choose_saved_run(index, runs, "Run", CHOSEN_RUN)
    if saved is not None:
        show_run(saved["result"], int(saved["id"]))
    compare(index, runs)


def choose_saved_run(index: Index, runs: list[dict[str, Any]], label: str, key: str) -> dict[str, Any] | None:
    """A selectbox over ``runs`` (one suite's, latest first) with a delete button; the chosen run
    with its result, or None (said in a caption) when it was deleted meanwhile."""
    ids = [int(r["id"]) for r in runs]
    labels = {int(r["id"]): run_label(r) for r in runs}
    if st.session_state.get(key) not in ids:
        st.session_state[key] = ids[0]
    shown, remove = st.columns([5, 1], vertical_alignment="bottom")
    run_id = shown.selectbox(label, ids, format_func=labels.get, key=key)
    if remove.button("Delete this run", key=f"{key}:delete"):
        index.delete_quality_run(int(run_id))
        del st.session_state[key]
        st.rerun()
    saved = index.quality_run(int(run_id))
    if saved is None or saved["suite"] != runs[0]["suite"]:
        st.caption("That run was deleted.")
        return None
    return saved


def run_label(run: dict[str, Any]) -> str:
    when = datetime.fromtimestamp(run["created_at"]).strftime("%Y-%m-%d %H:%M")
    return f"#{run['id']} · {when} · {run['corpus']}"


def systems_frame(result: dict[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame([{c: row.get(c) for c in TABLE_COLUMNS} for row in result["systems"]])
    return blank_missing(frame.rename(columns=column_name))


def column_name(key: str) -> str:
    """A result key as a column heading: "recall_at_10" -> "recall@10"."""
    return key.replace("_at_", "@").replace("_", " ")


def show_run(result: dict[str, Any], run_id: int) -> None:
    """A saved run: its table, the frontier, the sweep's heatmap and one query at a time."""
    corpus = result["corpus"]
    st.caption(
        f"{md(corpus['source'])}: {corpus['queries']} queries over {corpus['leaves']} leaves, "
        f"model {md(corpus['model'])}; indexing took {result['index_s']} s "
        f"({corpus.get('files_embedded', 0)} leaves embedded, the others cached)."
    )
    st.dataframe(systems_frame(result), hide_index=True)
    st.caption(
        "Recall@k: share of queries whose function is among the first k leaves. Leaves scored: exact "
        "scores computed per query, as a share of all leaves (none counted for the HNSW graph walk; "
        "above 1 when groups and files are scored too). Latency excludes embedding the query."
    )
    if result.get("regions"):
        st.subheader("Answers above the leaves")
        st.dataframe(regions_frame(result), hide_index=True)
        st.caption(
            "Strict: a region mostly inside the target that covers at least 30 % of it. Holds: a region "
            "holding at least half of it. File: the target's file. Against the baseline: strict@10 minus "
            "'outermost definition by best leaf', with its 95 % paired interval (docs/hierarchy.md)."
        )
    frontier(result, run_id)
    heatmap(result, run_id)
    one_query(result)


def regions_frame(result: dict[str, Any]) -> pd.DataFrame:
    """A run's region and file table (hsc.quality.regions), one row per way of answering."""
    rows = []
    for row in result["regions"]:
        shown = {column_name(c): row.get(c) for c in REGION_COLUMNS if not c.endswith("_ci")}
        interval = row.get("strict_vs_baseline_ci")
        shown["interval"] = f"[{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else ""
        rows.append(shown)
    return blank_missing(pd.DataFrame(rows))


def frontier(result: dict[str, Any], run_id: int) -> None:
    st.subheader("Recall against work")
    modes = [mode for mode in RETRIEVAL_MODES if mode in SYSTEMS]
    parameters = current_parameters()
    mode = st.selectbox(
        "Mark the current parameters as",
        modes,
        index=modes.index(parameters.retrieval_mode) if parameters.retrieval_mode in modes else 0,
        key="evaluate:mode",
        help="The retrieval mode to mark (at first the sidebar's).",
    )
    point = current_point(result, asdict(parameters), mode)
    figure = frontier_figure(result, point)
    figure.update_layout(width=None, height=560)
    st.plotly_chart(figure, config=chart_config(f"frontier-run-{run_id}"), key="evaluate:frontier")
    if point is None:
        st.caption(
            f"The star is missing: this run holds no {mode} point at the sidebar's current parameters "
            "(run again with them, or with the sweep)."
        )
    else:
        st.caption(f"The star: {mode} at the sidebar's current parameters, from {point['source']}.")


def heatmap(result: dict[str, Any], run_id: int) -> None:
    settings = stage1_settings(result)
    if not settings:
        return
    st.subheader("Recall@10 by threshold and window")
    chosen = st.selectbox(
        "Stage 1",
        range(len(settings)),
        format_func=lambda n: f"{settings[n][0]}, {settings[n][1]} = {settings[n][2]}",
        key="evaluate:stage1",
    )
    system, knob, value = settings[chosen or 0]
    st.plotly_chart(
        sweep_heatmap(result, system, knob, value),
        config=chart_config(f"recall-threshold-window-run-{run_id}"),
        key="evaluate:heatmap",
    )


def one_query(result: dict[str, Any]) -> None:
    st.subheader("One query across the systems")
    rows = query_table(result)
    names = [row["system"] for row in result["systems"]]
    frame = pd.DataFrame(rows)
    if st.toggle("Only queries some systems found and others missed", value=True, key="evaluate:split"):
        found = frame[names].notna()
        frame = frame[found.any(axis=1) & ~found.all(axis=1)]
    st.caption(f"{len(frame)} queries; each system's rank of the target (empty: not in its top 10).")
    st.dataframe(blank_missing(frame), hide_index=False)
    if frame.empty:
        return
    numbers = list(frame.index)
    number = st.selectbox(
        "Query",
        numbers,
        format_func=lambda n: f"#{n} · {rows[n]['query']}",
        key="evaluate:query",
    )
    if number is None or number not in numbers:
        return
    target = result["targets"][number]
    st.markdown(
        f"**{md(target['query'])}** → `{target['name']}` in {md(target['path'])}, "
        f"{line_range(target['start_line'], target['end_line'])}"
    )
    explained = explain_query(result, number)
    st.markdown("\n".join(f"- **{md(row['system'])}**: {md(row['why'])}" for row in explained))
    details = pd.DataFrame(explained)
    shown = [
        c
        for c in ("system", "rank", "scored", "groups_opened", "group_rank", "group_rank_exact", "top")
        if c in details
    ]
    details = details[shown].rename(
        columns={
            "groups_opened": "groups opened",
            "group_rank": "its group's stage-1 rank",
            "group_rank_exact": "its group's rank by cosine",
            "top": "ranked first",
            "scored": "leaves scored",
        }
    )
    st.dataframe(blank_missing(details), hide_index=True)
    source = Path(result["corpus"].get("root", "")) / target["path"]
    if source.is_file():
        lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
        with st.expander("The target function (as indexed: its docstring blanked)"):
            language = code_language(LANGUAGES.get(source.suffix, ""))
            st.code("\n".join(lines[target["start_line"] - 1 : target["end_line"]]), language=language)


def compare(index: Index, runs: list[dict[str, Any]]) -> None:
    """Two saved runs side by side, and the queries one found and the other missed."""
    st.subheader("Compare two runs")
    if len(runs) < 2:
        st.caption("Save two runs to compare them.")
        return
    ids = [int(r["id"]) for r in runs]
    labels = {int(r["id"]): run_label(r) for r in runs}
    left, right = st.columns(2)
    first = left.selectbox("Run 1", ids, index=1, format_func=labels.get, key="evaluate:first")
    second = right.selectbox("Run 2", ids, index=0, format_func=labels.get, key="evaluate:second")
    a, b = index.quality_run(int(first)), index.quality_run(int(second))
    if a is None or b is None:
        st.caption("That run was deleted.")
        return
    compared = compare_runs(a["result"], b["result"])
    if not compared["shared_systems"]:
        st.caption("The two runs have no system in common.")
        return
    st.dataframe(pd.DataFrame(compared["systems"]).rename(columns=column_name), hide_index=True)
    system = st.selectbox("System", compared["shared_systems"], key="evaluate:compare-system")
    compared = compare_runs(a["result"], b["result"], system)
    st.caption(f"{compared['shared_queries']} queries were asked in both runs. Δ: run 2 minus run 1.")
    found_first, found_second = st.columns(2)
    found_first.markdown(f"**Found by run 1 only** ({len(compared['only_first'])})")
    found_first.dataframe(pd.DataFrame(compared["only_first"]), hide_index=True)
    found_second.markdown(f"**Found by run 2 only** ({len(compared['only_second'])})")
    found_second.dataframe(pd.DataFrame(compared["only_second"]), hide_index=True)
