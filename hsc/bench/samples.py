"""``python -m hsc bench samples``: the labelled queries on the bundled samples.

A quick check of parameter choices on 31 hand-labelled queries; real code is
measured by the ``quality`` suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hsc.bench.perf import SAMPLE_REPOS
from hsc.hierarchy.groups import LeafTable, plan_hierarchy
from hsc.params import Parameters
from hsc.search.two_stage import MidLevelIndex, TwoStageRetriever, flat_search


def bench_samples(
    database: Path | None = None,
    thresholds: tuple[float, ...] = (0.3, 0.4, 0.45, 0.5, 0.6),
    windows: tuple[int, ...] = (1, 2, 3),
) -> dict[str, Any]:
    """Retrieval quality of parameter choices on the sample repositories,
    against the labelled queries in ``tests/data/sample_queries.json``.

    A hit is a result in the expected file whose scope ends with the expected
    name. Everything runs from cached vectors: one index, then numpy.
    """
    import tempfile

    from hsc.api import Index

    cases = json.loads((SAMPLE_REPOS.parent / "tests" / "data" / "sample_queries.json").read_text())
    database = database or Path(tempfile.mkdtemp()) / "quality.db"
    index = Index.open(database)
    tables, query_vectors = {}, {}
    for name in sorted({case["repo"] for case in cases}):
        index.index(SAMPLE_REPOS / name)
        tables[name] = index.leaf_table(index.repository_id(SAMPLE_REPOS / name))
    for case in cases:
        repository_id = index.repository_id(SAMPLE_REPOS / case["repo"])
        query_vectors[case["query"]] = index.embed_query(case["query"], repository_id)

    def hits(table: LeafTable, rows: list[int], case: dict[str, str]) -> list[bool]:
        return [
            table.paths[table.file_index[r]] == case["path"]
            and table.scopes[r].endswith(case["scope_suffix"])
            for r in rows
        ]

    base = Parameters()
    flat_at_1 = flat_at_k = 0
    for case in cases:
        table = tables[case["repo"]]
        found = hits(
            table, [h.row for h in flat_search(table.vectors, query_vectors[case["query"]], 10).leaves], case
        )
        flat_at_1 += found[0]
        flat_at_k += any(found)
    grid = []
    for rule in ("valley", "threshold"):
        for window in windows:
            for threshold in thresholds:
                params = Parameters(
                    **{
                        **base.__dict__,
                        "similarity_drop_threshold": threshold,
                        "smoothing_window_size": window,
                        "boundary_rule": rule,
                    }
                )
                at_1 = at_k = compared = groups = singletons = 0
                retrievers = {}
                for name, table in tables.items():
                    plan = plan_hierarchy(table, params)
                    groups += plan.group_count
                    singletons += int(np.count_nonzero(plan.group_ends - plan.group_starts == 1))
                    mid_index = MidLevelIndex.build(plan.group_vectors)
                    retrievers[name] = TwoStageRetriever(
                        table.vectors, plan.group_starts, plan.group_ends, mid_index
                    )
                for case in cases:
                    table = tables[case["repo"]]
                    staged = retrievers[case["repo"]].search(
                        query_vectors[case["query"]], params.mid_level_top_k, params.leaf_level_top_k
                    )
                    found = hits(table, [h.row for h in staged.leaves], case)
                    at_1 += bool(found and found[0])
                    at_k += any(found)
                    compared += staged.leaves_compared
                grid.append(
                    {
                        "boundary_rule": rule,
                        "smoothing_window_size": window,
                        "similarity_drop_threshold": threshold,
                        "groups": groups,
                        "singleton_groups": singletons,
                        "hit_at_1": round(at_1 / len(cases), 3),
                        "hit_at_10": round(at_k / len(cases), 3),
                        "leaves_compared_mean": round(compared / len(cases), 1),
                    }
                )
    index.close()
    return {
        "suite": "samples",
        "queries": len(cases),
        "leaves": {n: len(t) for n, t in tables.items()},
        "flat": {"hit_at_1": round(flat_at_1 / len(cases), 3), "hit_at_10": round(flat_at_k / len(cases), 3)},
        "grid": grid,
    }


def format_samples(result: dict[str, Any]) -> str:
    lines = [
        f"samples: {result['queries']} queries, leaves {result['leaves']}, flat {result['flat']}",
        "rule       window threshold groups singletons hit@1 hit@10 compared",
    ]
    for row in result["grid"]:
        lines.append(
            f"{row['boundary_rule']:<10} {row['smoothing_window_size']:>6} "
            f"{row['similarity_drop_threshold']:>9} {row['groups']:>6} {row['singleton_groups']:>10} "
            f"{row['hit_at_1']:>5} {row['hit_at_10']:>6} "
            f"{row['leaves_compared_mean']:>8}"
        )
    return "\n".join(lines)
