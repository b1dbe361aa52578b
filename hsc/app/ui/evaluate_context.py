"""The Evaluate page's "Context at a budget" tab: a quick ``bench context`` run, and the saved
context runs read back. The benchmark is :mod:`hsc.bench.context`, the shaping
:mod:`hsc.quality.context_report`; this module only draws them."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from hsc import Index
from hsc.app.ui.context import database_path
from hsc.app.ui.evaluate import choose_saved_run, run_saved
from hsc.app.ui.text import blank_missing, md
from hsc.bench.context import bench_context
from hsc.explore.figures import chart_config
from hsc.quality.context_metrics import PACK, SHIPPED
from hsc.quality.context_report import (
    context_figure,
    context_intervals,
    context_table,
)
from hsc.quality.corpus import STDLIB_PACKAGES

CHOSEN_CONTEXT_RUN = "evaluate:context-run"
QUICK_CONTEXT_PACKAGES = ("json",)  # 14 queries, 49 leaves: a few seconds


def run_context(index: Index) -> int | None:
    """A quick context benchmark on the chosen standard-library packages, saved; its id, or None."""
    packages = st.multiselect(
        "Standard-library packages",
        STDLIB_PACKAGES,
        default=QUICK_CONTEXT_PACKAGES,
        key="evaluate:context-packages",
        help="The command line (`python -m hsc bench context --db FILE`) runs all of them.",
    )
    if not st.button("Run the context benchmark", key="evaluate:context-start", disabled=not packages):
        return None
    out = database_path().parent / "context"  # the corpus and its index: a rerun finds them cached
    return run_saved(
        index,
        lambda report, progress: bench_context(
            tuple(packages), out=out, report=report, embedder=index.embedder, progress=progress
        ),
    )


def saved_context_runs(index: Index) -> None:
    """The saved context runs: choose one, read it, or delete it."""
    runs = index.quality_runs(suite="context")
    if not runs:
        st.info(
            "No context run saved yet: press the button above, or run "
            "`python -m hsc bench context --db FILE` on this app's database."
        )
        return
    saved = choose_saved_run(index, runs, "Context run", CHOSEN_CONTEXT_RUN)
    if saved is not None:
        show_context_run(saved["result"], int(saved["id"]))


def show_context_run(result: dict[str, Any], run_id: int) -> None:
    """A context run: its table, the pack-minus-leaves intervals and full context by budget."""
    corpus = result["corpus"]
    st.caption(
        f"{md(corpus['source'])}: {corpus['queries']} queries ({corpus['with_dependencies']} with "
        f"dependencies) over {corpus['leaves']} leaves, model {md(corpus['model'])}."
    )
    st.dataframe(blank_missing(pd.DataFrame(context_table(result))), hide_index=True)
    st.caption(
        "Hit: the target function is in the pack. Dependency coverage: the share of the lines it "
        "depends on (found by Python's ast on the original sources) that the pack holds. Full "
        "context: a hit with the dependencies covered. Precision: the share of the pack's lines "
        "that are the target or its dependencies. Tokens: cl100k tokens used, on average."
    )
    st.markdown(f"**{md(PACK)} minus {md(SHIPPED)}**, over the same queries (95 % paired bootstrap)")
    st.dataframe(pd.DataFrame(context_intervals(result)), hide_index=True)
    st.plotly_chart(
        context_figure(result), config=chart_config(f"context-run-{run_id}"), key="evaluate:context-chart"
    )
