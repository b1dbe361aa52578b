"""Evaluate: retrieval quality on real code, every system side by side, runs saved and compared."""

from __future__ import annotations

import streamlit as st

import ui
from ui import evaluate

index = ui.page_setup("Evaluate")
st.title("Evaluate")
st.caption(
    "**How well does the hierarchy retrieve?** Each query is the first sentence of a function's "
    "docstring; the corpus is the same code with every docstring blanked, so the answer cannot be found "
    "by copying words. A system finds a query when one of its first 10 leaves overlaps the function. "
    "The systems run over the same leaves, queries and model; the hierarchy's are built with the "
    "sidebar's parameters."
)

choice = evaluate.choose_corpus(index)
if choice is not None:
    options = evaluate.choose_options(choice)
    if st.button("Run", type="primary", key="evaluate:start"):
        run_id = evaluate.run(index, options)
        if run_id is not None:
            st.session_state[evaluate.CHOSEN_RUN] = run_id

runs = index.quality_runs()
st.header("Saved runs")
if not runs:
    st.info("No run yet: choose a corpus and press Run.")
    st.stop()
ids = [int(r["id"]) for r in runs]
labels = {int(r["id"]): evaluate.run_label(r) for r in runs}
if st.session_state.get(evaluate.CHOSEN_RUN) not in ids:
    st.session_state[evaluate.CHOSEN_RUN] = ids[0]
shown, remove = st.columns([5, 1], vertical_alignment="bottom")
run_id = shown.selectbox("Run", ids, format_func=labels.get, key=evaluate.CHOSEN_RUN)
if remove.button("Delete this run", key="evaluate:delete"):
    index.delete_quality_run(int(run_id))
    del st.session_state[evaluate.CHOSEN_RUN]
    st.rerun()
saved = index.quality_run(int(run_id))
if saved is None:
    st.caption("That run was deleted.")
else:
    evaluate.show_run(saved["result"], int(run_id))
evaluate.compare(index, runs)
