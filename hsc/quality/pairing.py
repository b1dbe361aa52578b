"""Pair one quality run against an earlier one (``bench quality --against EARLIER``).

Two runs of the same corpus and query draw that differ in how they index (other ``--set``
values, a fresh database) cannot share a table, but their queries can be paired: this run's
default system against each system of the earlier run, McNemar's exact test on hit@10 over the
queries both runs asked (a query is its text and its target's place, as hsc.quality.runs keys it,
so a draw in another order or of another size still pairs on what it shares).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hsc.quality.metrics import K, mcnemar, recall_at
from hsc.quality.runs import ranks_by_target
from hsc.quality.sweep import DEFAULT_SYSTEMS


def load_run(path: Path) -> dict[str, Any]:
    """An earlier run's result: its ``quality.json``, or the ``--out`` folder holding ``run/quality.json``."""
    for candidate in (path, path / "quality.json", path / "run" / "quality.json"):
        if candidate.is_file():
            try:
                result = json.loads(candidate.read_text())
            except (OSError, ValueError) as error:
                raise ValueError(f"{candidate} is not a quality run's JSON: {error}") from None
            if not isinstance(result, dict) or result.get("suite") != "quality" or "targets" not in result:
                raise ValueError(f"{candidate} is not a quality run's JSON (no suite 'quality' with targets)")
            return result
    raise ValueError(f"no quality run at {path}: pass a bench quality --out folder or its run/quality.json")


def _ranks_by_query(result: dict[str, Any]) -> dict[str, dict[tuple[str, int, str], int | None]]:
    return {
        row["system"]: ranks_by_target(result, row["system"]) for row in result["systems"] if "ranks" in row
    }


def against_earlier(result: dict[str, Any], earlier: dict[str, Any]) -> dict[str, Any]:
    """This run's default system against every system of ``earlier`` on the queries both asked:
    Recall@10 of each on those queries, the queries only one finds, McNemar's p."""
    now = _ranks_by_query(result)
    default = next((name for name in DEFAULT_SYSTEMS if name in now), None)
    if default is None:
        raise ValueError(f"this run has no default system ({' or '.join(DEFAULT_SYSTEMS)}) to pair")
    before = _ranks_by_query(earlier)
    ours = now[default]
    rows = []
    for system, theirs in before.items():
        shared = [key for key in ours if key in theirs]
        first = [ours[key] for key in shared]
        second = [theirs[key] for key in shared]
        rows.append(
            {
                "default": default,
                "system": system,
                "queries": len(shared),
                "default_recall_at_10": round(recall_at(first, K), 4),
                "recall_at_10": round(recall_at(second, K), 4),
                **mcnemar(first, second, K),
            }
        )
    return {"queries": len(ours), "earlier_queries": len(earlier["targets"]), "systems": rows}


def format_against(paired: dict[str, Any]) -> str:
    """One line per earlier system."""
    lines = [f"against the earlier run ({paired['earlier_queries']} queries; this run {paired['queries']}):"]
    for row in paired["systems"]:
        p = "< 0.0001" if row["p"] < 0.0001 else row["p"]
        lines.append(
            f"{row['default']} {row['default_recall_at_10']:.3f} against earlier {row['system']} "
            f"{row['recall_at_10']:.3f} on {row['queries']} shared queries: only this run "
            f"{row['only_first']}, only earlier {row['only_second']}, McNemar p {p}"
        )
    return "\n".join(lines)
