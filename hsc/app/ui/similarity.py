"""The Similarity page's readings of a setting: what the threshold does under the active
rule (from this repository's own counts), and what the setting does to retrieval (a quick
Recall@10 on the repository's docstrings, :mod:`hsc.quality.quick`)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import streamlit as st

from hsc import Index, Parameters
from hsc.app.ui.context import database_path, index_lock
from hsc.hierarchy.groups import HierarchyPlan
from hsc.quality.quick import DocQuery, K, QuickRecall, docstring_queries, flat_recall, quick_recall

STEP = 0.1  # the neighbouring thresholds the caption compares


@st.cache_data(max_entries=64, show_spinner=False)
def _boundaries(
    _index: Index, database: str, repository_id: int, indexed_at: float, params: Parameters
) -> int:
    return int(_index.preview(repository_id, params).segmentation.topic_boundary_count)


def threshold_effect(index: Index, repository: dict[str, Any], params: Parameters, boundaries: int) -> str:
    """One line beside the threshold: what raising it does under the active rule, with this
    repository's boundary counts a step below and above the current value."""
    key = (str(database_path()), int(repository["id"]), float(repository.get("indexed_at") or 0.0))
    now = params.similarity_drop_threshold
    around = []
    for value in (round(now - STEP, 2), round(now + STEP, 2)):
        if -1.0 <= value <= 1.0:
            counted = _boundaries(index, *key, dataclasses.replace(params, similarity_drop_threshold=value))
            around.append((value, counted))
    counts = ", ".join(f"{v:.2f} → {c}" for v, c in sorted([*around, (now, boundaries)]))
    if params.boundary_rule == "valley":
        rule = (
            "Under the valley rule a boundary falls once per dip below the threshold: raising it first "
            "adds boundaries (new dips), then removes them (dips that were apart join into one run), so "
            "past that point a higher threshold gives fewer, larger groups."
        )
    else:
        rule = (
            "Under the threshold rule every pair below it is a boundary: raising it always gives more, "
            "smaller groups."
        )
    return f"{rule} Here: {counts} boundaries."


@st.cache_resource(max_entries=4, show_spinner="Embedding the repository's docstring queries, once…")
def _queries(
    _index: Index, _plan: HierarchyPlan, database: str, repository_id: int, indexed_at: float
) -> tuple[list[DocQuery], np.ndarray, float, float]:
    """The fixed sample of queries, their vectors, the seconds that took, and flat search's
    Recall@10 on them (no setting changes it: measured once)."""
    started = time.perf_counter()
    with index_lock():
        queries = docstring_queries(_index.store, repository_id)
        if not queries:
            return [], np.zeros((0, 1), np.float32), 0.0, 0.0
        vectors = np.asarray(
            _index.query_encoder(repository_id).embed([q.query for q in queries]), np.float32
        )
    return queries, vectors, time.perf_counter() - started, flat_recall(_plan, queries, vectors)


@st.cache_data(max_entries=64, show_spinner=False)
def _recall(
    _plan: HierarchyPlan,
    database: str,
    repository_id: int,
    indexed_at: float,
    params: Parameters,
    _index: Index,
) -> tuple[QuickRecall, float]:
    queries, vectors, _, flat = _queries(_index, _plan, database, repository_id, indexed_at)
    started = time.perf_counter()
    found = quick_recall(_plan, queries, vectors, params, flat)
    return found, time.perf_counter() - started


def retrieval_effect(
    index: Index, repository: dict[str, Any], plan: HierarchyPlan, params: Parameters
) -> None:
    """The current setting's Recall@10 beside flat search, and what measuring it cost."""
    key = (str(database_path()), int(repository["id"]), float(repository.get("indexed_at") or 0.0))
    queries, _, embed_seconds, _ = _queries(index, plan, *key)
    if not queries:
        st.caption(
            "No documented definitions here, so no quick retrieval check (the Evaluate page can build one)."
        )
        return
    found, seconds = _recall(plan, *key, params, index)
    columns = st.columns([1, 1, 3])
    columns[0].metric(
        f"Recall@{K}, two stages", f"{found.two_stage:.0%}", help="Dense two stages with these groups."
    )
    columns[1].metric(
        f"Recall@{K}, flat", f"{found.flat:.0%}", help="Every leaf compared: the settings do not change it."
    )
    cost = f"Measured in {seconds * 1000:.0f} ms and kept for this setting (one seen before costs nothing)"
    columns[2].caption(
        f"Retrieval at this setting: {found.queries} of the repository's own docstrings as queries (a fixed "
        f"sample), answered when one of the {K} leaves found overlaps the documented definition; the dense "
        f"two stages over these {found.groups} groups (the shipped hybrid mode adds BM25 on top of them). "
        f"{cost}; the queries were embedded once ({embed_seconds:.1f} s). The docstrings are "
        "still in the code here, so the figures run higher than the Evaluate page's: compare settings with "
        "them, not systems."
    )
