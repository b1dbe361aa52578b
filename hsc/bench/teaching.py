"""``bench teaching``: the Walkthrough page's and the report's library calls
on an existing index (``--db``), each timed once after the model is loaded."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hsc.api import Index
from hsc.explore.explain import hierarchy_plan, leaf_map, suggest_file, suggest_query, trace_query, walk_file
from hsc.explore.report import build_report


def _ms(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = work()
    return result, round((time.perf_counter() - started) * 1000, 1)


def bench_teaching(database: Path) -> dict[str, Any]:
    with Index.open(database) as index:
        _ = index.embedder
        hierarchy_id = index.default_hierarchy()
        plan, plan_ms = _ms(lambda: hierarchy_plan(index, hierarchy_id))
        table = plan.table
        largest = table.paths[int(np.argmax(np.bincount(table.file_index)))]
        path = suggest_file(plan) or largest
        walk, walk_ms = _ms(lambda: walk_file(index, hierarchy_id, path, plan))
        _, largest_ms = _ms(lambda: walk_file(index, hierarchy_id, largest, plan))
        query = suggest_query(walk)
        _, trace_ms = _ms(lambda: trace_query(index, query, hierarchy_id, plan))
        mapped, map_ms = _ms(lambda: leaf_map(plan))
        page, report_ms = _ms(lambda: build_report(index, hierarchy_id))
    return {
        "suite": "teaching",
        "leaves": len(table),
        "groups": plan.group_count,
        "plan_ms": plan_ms,
        "walk_file_ms": walk_ms,
        "walk_largest_file_ms": largest_ms,
        "largest_file_leaves": int(np.count_nonzero(table.file_index == table.paths.index(largest))),
        "trace_query_ms": trace_ms,
        "leaf_map_ms": map_ms,
        "own_group_similarity": round(mapped.own_group_similarity, 3),
        "other_group_similarity": round(mapped.other_group_similarity, 3),
        "report_ms": report_ms,
        "report_mb": round(len(page) / 1e6, 1),
    }
