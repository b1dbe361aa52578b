"""Reading a quality run (the dict :func:`hsc.quality.sweep.run_quality` returns):
one query across the systems, two runs side by side, the current parameters'
point on the frontier. Pure functions of the run's data.
"""

from __future__ import annotations

from typing import Any

from hsc.quality.metrics import K

# The main table's figures two runs are compared on (the quality ones: higher is better).
COMPARED = ("recall_at_1", "recall_at_10", "mrr_at_10")
# Parameters that decide where a two-stage row lands (chunking, hierarchy, stage 1).
PLACING = (
    "minimum_chunk_token_length",
    "maximum_chunk_token_length",
    "similarity_drop_threshold",
    "smoothing_window_size",
    "boundary_rule",
    "mid_level_top_k",
    "stage1_leaf_share",
    "group_score_weight",
    "lexical_weight",
    "lexical_candidates",
)


def target_key(target: dict[str, Any]) -> tuple[str, int, str]:
    """A query's identity across runs: its function's place and its text."""
    return target["path"], int(target["start_line"]), target["query"]


def where(target: dict[str, Any]) -> str:
    return f"{target['path']}:{target['start_line']}-{target['end_line']}"


def query_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per query: its text, its target and each system's rank of it (None: missed)."""
    rows = []
    for number, target in enumerate(result["targets"]):
        row: dict[str, Any] = {"query": target["query"], "target": f"{target['name']} · {where(target)}"}
        for system in result["systems"]:
            row[system["system"]] = system["ranks"][number]
        rows.append(row)
    return rows


def explain_query(result: dict[str, Any], number: int) -> list[dict[str, Any]]:
    """Where each system ranked query ``number``'s target, and why, one row per system."""
    out = []
    for system in result["systems"]:
        detail = dict((system.get("queries") or [{}] * len(result["targets"]))[number])
        detail.setdefault("rank", system["ranks"][number])
        out.append({"system": system["system"], **detail, "why": _why(detail)})
    return out


def _why(detail: dict[str, Any]) -> str:
    rank, opened = detail.get("rank"), detail.get("groups_opened")
    group_rank, exact = detail.get("group_rank"), detail.get("group_rank_exact")
    if opened is None:  # no stage 1
        if rank is not None:
            return f"found at rank {rank}"
        return f"not in the top {K}" + (f"; ranked first: {detail['top']}" if detail.get("top") else "")
    if exact is None:
        return "the target's lines are in no leaf of this index"
    if group_rank is None:
        return (
            f"stage 1 opened {opened} of {detail.get('groups')} groups; the target's group ranks "
            f"#{exact} by cosine, so stage 2 never scored the target"
        )
    if rank is None:
        return (
            f"stage 1 opened the target's group (#{group_rank} of {opened}), but stage 2 ranked "
            f"{K} other leaves above it"
        )
    return f"found at rank {rank}; its group was stage 1's #{group_rank} of {opened}"


def compare_runs(first: dict[str, Any], second: dict[str, Any], system: str | None = None) -> dict[str, Any]:
    """Two runs side by side: each shared system's figures and their change
    (second minus first), and for ``system`` (default: the first shared one) the
    queries both runs asked that one found in its top 10 and the other missed."""
    second_rows = {row["system"]: row for row in second["systems"]}
    shared = [row["system"] for row in first["systems"] if row["system"] in second_rows]
    table = []
    for row in first["systems"]:
        other = second_rows.get(row["system"])
        if other is None:
            continue
        line: dict[str, Any] = {"system": row["system"]}
        for key in (*COMPARED, "leaves_scored_share"):
            a, b = row.get(key), other.get(key)
            line[f"{key} (1)"], line[f"{key} (2)"] = a, b
            line[f"{key} Δ"] = None if a is None or b is None else round(b - a, 4)
        table.append(line)
    system = system or (shared[0] if shared else None)
    found_first, found_second = ranks_by_target(first, system), ranks_by_target(second, system)
    both = [key for key in found_first if key in found_second]
    targets = {target_key(t): t for t in first["targets"]}
    return {
        "systems": table,
        "shared_systems": shared,
        "system": system,
        "shared_queries": len(both),
        "only_first": [
            _missed(targets[k], found_first[k], found_second[k])
            for k in both
            if _only(found_first, found_second, k)
        ],
        "only_second": [
            _missed(targets[k], found_second[k], found_first[k])
            for k in both
            if _only(found_second, found_first, k)
        ],
    }


def ranks_by_target(result: dict[str, Any], system: str | None) -> dict[tuple[str, int, str], int | None]:
    """Query key -> the system's rank of its target (None: missed); empty without the system."""
    row = next((r for r in result["systems"] if r["system"] == system), None)
    if row is None:
        return {}
    return {target_key(t): rank for t, rank in zip(result["targets"], row["ranks"])}


def _only(this: dict[Any, int | None], other: dict[Any, int | None], key: Any) -> bool:
    return this[key] is not None and other[key] is None


def _missed(target: dict[str, Any], rank: int | None, other_rank: int | None) -> dict[str, Any]:
    return {"query": target["query"], "target": f"{target['name']} · {where(target)}", "rank": rank}


def current_point(result: dict[str, Any], params: dict[str, Any], system: str) -> dict[str, Any] | None:
    """Recall@10 and share of leaves scored of ``system`` at the parameters ``params``
    (a dict of :class:`hsc.params.Parameters` fields), read from the run: its main
    table when the run used those parameters, else a sweep row of the same
    configuration (two-stage only); None when the run holds no such point."""
    ran = result.get("parameters", {})
    if all(ran.get(key) == params.get(key) for key in PLACING):
        row = next((r for r in result["systems"] if r["system"] == system), None)
        if row is not None and row.get("leaves_scored_share") is not None:
            return {**_point(row), "source": "this run's table"}
    if system != "two-stage" or any(
        ran.get(key) != params.get(key)
        for key in ("minimum_chunk_token_length", "maximum_chunk_token_length", "group_score_weight")
    ):
        return None
    share = params.get("stage1_leaf_share") or 0.0
    for row in result.get("sweep", []):
        same_hierarchy = all(row.get(key) == params.get(key) for key in _HIERARCHY)
        seed_stage1 = row["system"] == "two-stage" and share == 0.0
        widened = row["system"] == "two-stage+share" and row.get("leaf_share") == share
        if (
            same_hierarchy
            and row.get("mid_level_top_k") == params.get("mid_level_top_k")
            and (seed_stage1 or widened)
        ):
            return {**_point(row), "source": "the sweep"}
    return None


_HIERARCHY = ("similarity_drop_threshold", "smoothing_window_size", "boundary_rule")


def _point(row: dict[str, Any]) -> dict[str, Any]:
    return {"recall_at_10": row["recall_at_10"], "leaves_scored_share": row["leaves_scored_share"]}
