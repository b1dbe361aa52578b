"""Evaluate: retrieval quality and context at a budget on real code, runs saved and compared."""

from __future__ import annotations

import streamlit as st

from hsc.app import ui
from hsc.app.ui import evaluate, evaluate_context

index = ui.page_setup("Evaluate")
st.title("Evaluate")
quality, context = st.tabs(["Retrieval quality", "Context at a budget"])
with quality:
    st.caption(
        "**How well does the hierarchy retrieve?** Each query is the first sentence of a function's "
        "docstring; the corpus is the same code with every docstring blanked, so the answer cannot be "
        "found by copying words. A system finds a query when one of its first 10 leaves overlaps the "
        "function. The systems run over the same leaves, queries and model; the hierarchy's are built "
        "with the sidebar's parameters."
    )
    choice = evaluate.choose_corpus(index)
    if choice is not None:
        options = evaluate.choose_options(choice)
        if st.button("Run", type="primary", key="evaluate:start"):
            run_id = evaluate.run(index, options)
            if run_id is not None:
                st.session_state[evaluate.CHOSEN_RUN] = run_id
    evaluate.saved_runs(index)
with context:
    st.caption(
        "**How much of the code a model needs does a budget hold?** The same docstring queries; each "
        "system fills 1,024 / 2,048 / 4,096 tokens from its ranking, and each pack is scored against "
        "the target function and the code it depends on, as Python's ast finds it on the original "
        "sources. Runs use the default parameters."
    )
    run_id = evaluate_context.run_context(index)
    if run_id is not None:
        st.session_state[evaluate_context.CHOSEN_CONTEXT_RUN] = run_id
    evaluate_context.saved_context_runs(index)
