"""``python -m hsc bench localize --git PATH``: find the code a change needs, as a coding agent asks.

Each question is a commit of a repository's history (:mod:`hsc.quality.history`): the query is
its subject, the corpus the whole tree at its parent (docs, tests and all, as an agent sees it),
indexed incrementally into one database per repository (the vector cache makes the next parent
cheap), and the gold the functions the commit changed, read from the parent's definitions as the
chunker stored them. Every system answers the same questions:

- ``hsc``: :meth:`hsc.api.Index.query` as an agent's tools call it, at the parameters (``--set``
  changes them; ``--set tool_roles=`` searches every file, as hsc did before roles);
- ``flat``: dense cosine over every leaf, no BM25 (``mode="flat"``);
- ``bm25-leaves``: BM25 over hsc's leaves alone (its FTS5 table, every query term);
- ``bm25-files``: BM25 over whole files (files only), the peer of a file ranking.

Measured: function hit@k (a leaf overlapping a changed function in the top k), file hit@k (a file
holding one, through :func:`file_order`), and pack coverage (a changed function whole in the
2,048-token :meth:`~hsc.api.Index.context` pack), each paired against the others.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hsc.chunk.roles import file_role
from hsc.quality.history import (
    Commit,
    Gold,
    commit_changes,
    draw,
    git,
    git_dir_of,
    gold_definitions,
    history,
    write_tree,
)
from hsc.quality.metrics import first_hit, paired_bootstrap
from hsc.search.context import ContextPack
from hsc.search.lexical import match_expression, term_text
from hsc.search.results import QueryResponse

K = 10
PACK_BUDGET = 2048
# Leaves a query returns, so that its first K distinct files are there to rank.
RANKED_LEAVES = 60
# The newest usable commits a draw is made from (older parents are further apart to index).
SPAN = 400
SYSTEMS = ("hsc", "flat", "bm25-leaves", "bm25-files")
Report = Callable[[str], None]


def file_order(response: QueryResponse) -> list[str]:
    """The files a query answers with, best first: its file ranking (:attr:`QueryResponse.files`,
    hsc.search.regions), else the order of each file's best leaf. The one place the benchmark
    reads a file ranking from a response."""
    if response.files:
        return [region.path for region in response.files]
    return list(dict.fromkeys(result.path for result in response.results))


@dataclass(frozen=True)
class Answer:
    """One system's answer to one question: (path, first line, last line) of its ranked leaves and
    its ranked files."""

    leaves: list[tuple[str, int, int]]
    files: list[str]


def function_rank(answer: Answer, gold: Gold) -> int | None:
    """1-based rank of the first leaf overlapping a changed function (None: not in the top K)."""
    hits = [
        any(p == path and s <= end and e >= start for p, start, end, _ in gold.functions)
        for path, s, e in answer.leaves[:K]
    ]
    return first_hit(hits)


def file_rank(answer: Answer, gold: Gold) -> int | None:
    return first_hit([path in gold.files for path in answer.files[:K]])


def pack_holds(pack: ContextPack, gold: Gold) -> bool:
    """Whether some changed function's every line is in the pack as code (an outline is not)."""
    shown: dict[str, set[int]] = {}
    for span in pack.spans:
        if span.role != "outline":
            shown.setdefault(span.path, set()).update(range(span.start_line, span.end_line + 1))
    return any(set(range(s, e + 1)) <= shown.get(p, set()) for p, s, e, _ in gold.functions)


class FileBM25:
    """BM25 over whole files, in an in-memory SQLite FTS5 table of their identifier-split terms
    (the same terms hsc's leaves are matched by)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE files USING fts5(path UNINDEXED, terms)")
        self.conn.executemany(
            "INSERT INTO files (path, terms) VALUES (?, ?)",
            [(path, term_text(text)) for path, text in files.items()],
        )

    def search(self, text: str, limit: int = K) -> list[str]:
        match = match_expression(text)
        if not match:
            return []
        rows = self.conn.execute(
            "SELECT path FROM files WHERE files MATCH ? ORDER BY bm25(files) LIMIT ?", (match, limit)
        )
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        self.conn.close()


def _hsc_answer(
    index: Any,
    repository_id: int,
    text: str,
    overrides: dict[str, Any],
    mode: str | None = None,
    roles: Any = None,
) -> Answer:
    response = index.query(
        text,
        repository_id=repository_id,
        params={**overrides, "leaf_level_top_k": RANKED_LEAVES},
        record=False,
        compare=False,
        mode=mode,
        roles=roles,
    )
    return Answer([(r.path, r.start_line, r.end_line) for r in response.results], file_order(response))


def _bm25_leaves(index: Any, repository_id: int, text: str) -> Answer:
    from hsc.params import Parameters

    found = index.store.lexical_search(
        repository_id, match_expression(text), RANKED_LEAVES, Parameters().lexical_name_weight
    )
    rows = index.store.leaves_by_id([leaf_id for leaf_id, _ in found])
    leaves = [(rows[i]["path"], rows[i]["start_line"], rows[i]["end_line"]) for i, _ in found if i in rows]
    return Answer(leaves, list(dict.fromkeys(path for path, _, _ in leaves)))


def _indexed_texts(index: Any, repository_id: int, folder: Path) -> dict[str, str]:
    out = {}
    for row in index.store.files(repository_id):
        if row["status"] == "indexed":
            out[row["path"]] = (folder / row["path"]).read_text("utf-8", errors="replace")
    return out


def ask(
    index: Any,
    repository_id: int,
    folder: Path,
    commit: Commit,
    gold: Gold,
    variants: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Every system's ranks for one question, the top result's role, and whether packs hold a
    changed function. ``variants``: label -> query parameters of each hsc system ("hsc" first)."""
    from hsc.params import Parameters, with_values

    text = commit.subject
    answers, packs = {}, {}
    for label, values in variants.items():
        # As an agent's tools ask (hsc.integrations.tools): the files of the parameters' tool_roles.
        roles = index.tool_roles(None, repository_id, with_values(Parameters(), values))
        answers[label] = _hsc_answer(index, repository_id, text, values, roles=roles)
        pack = index.context(text, PACK_BUDGET, repository_id=repository_id, roles=roles, **values)
        packs[label] = pack_holds(pack, gold)
    answers["flat"] = _hsc_answer(index, repository_id, text, {}, "flat")
    flat = index.context(text, PACK_BUDGET, mode="flat", repository_id=repository_id)
    packs["flat"] = pack_holds(flat, gold)
    answers["bm25-leaves"] = _bm25_leaves(index, repository_id, text)
    files = FileBM25(_indexed_texts(index, repository_id, folder))
    try:
        answers["bm25-files"] = Answer([], files.search(text))
    finally:
        files.close()
    row: dict[str, Any] = {
        "commit": commit.sha[:12],
        "subject": text,
        "gold": [f"{path}:{start}-{end} {scope}" for path, start, end, scope in gold.functions],
        "function_rank": {
            name: function_rank(a, gold) for name, a in answers.items() if name != "bm25-files"
        },
        "file_rank": {name: file_rank(a, gold) for name, a in answers.items()},
        "top_role": {
            name: file_role(a.leaves[0][0]) if a.leaves else None
            for name, a in answers.items()
            if name != "bm25-files"
        },
        "top": {name: (a.files[:1] or [None])[0] for name, a in answers.items()},
    }
    row["pack"] = packs
    return row


def run_repository(
    path: Path,
    commits: int,
    seed: int,
    out: Path,
    variants: dict[str, dict[str, Any]],
    report: Report,
    span: int = SPAN,
    indexing: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every question drawn from one repository's history, answered (see the module's doc);
    ``indexing``: parameters of the index stages (chunk, group, ...) every parent is indexed with."""
    from hsc import Index
    from hsc.params import Parameters, with_values

    index_params = with_values(Parameters(), dict(indexing or {}))
    git_dir = git_dir_of(path)
    name = (path.name if path.name not in (".git", "repo") else path.parent.name) or "repository"
    drawn = draw(history(git_dir), commits, seed, span)
    if not drawn:
        raise ValueError(
            f"no usable commit in {path} (merges, version bumps and docs/test-only changes left out)"
        )
    folder = out / name / "tree"
    rows, skipped = [], []
    started = time.perf_counter()
    with Index.open(out / name / "index.db") as index:
        for number, commit in enumerate(drawn, start=1):
            began = time.perf_counter()
            write_tree(git_dir, commit.parent, folder)
            indexed = index.index(folder, index_params)
            index_seconds = time.perf_counter() - began
            repository_id = indexed.repository_id
            changes = commit_changes(git_dir, commit)
            facts = index.store.files_facts(repository_id, sorted(changes))
            gold = gold_definitions(changes, {path: found[1] for path, found in facts.items()})
            if not gold.functions:
                skipped.append(commit.sha[:12])
                continue
            began = time.perf_counter()
            rows.append(ask(index, repository_id, folder, commit, gold, variants))
            hit = rows[-1]["function_rank"]["hsc"]
            report(
                f"{name} {number}/{len(drawn)} {commit.sha[:10]} (index {index_seconds:.1f} s, asked "
                f"{time.perf_counter() - began:.1f} s) rank {hit}: {commit.subject[:60]}"
            )
    return {
        "repository": name,
        "head": str(git(git_dir, "rev-parse", "HEAD")).strip()[:12],
        "commits_drawn": len(drawn),
        "skipped_no_function": skipped,
        "first": drawn[0].sha[:12],
        "last": drawn[-1].sha[:12],
        "seconds": round(time.perf_counter() - started, 1),
        "questions": rows,
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Hit rates per system, and the paired differences that matter, over ``rows``."""
    n = max(len(rows), 1)

    def rate(ranks: list[int | None], k: int) -> float:
        return round(sum(1 for r in ranks if r is not None and r <= k) / n, 4)

    table = {}
    systems = list(rows[0]["file_rank"]) if rows else list(SYSTEMS)
    for system in systems:
        function = [row["function_rank"].get(system) for row in rows]
        files = [row["file_rank"][system] for row in rows]
        entry: dict[str, Any] = {}
        if system != "bm25-files":
            entry.update({f"function_hit_at_{k}": rate(function, k) for k in (1, 5, 10)})
            roles = [row["top_role"][system] for row in rows]
            entry["top_is_code"] = round(sum(1 for r in roles if r == "code") / n, 4)
        entry.update({f"file_hit_at_{k}": rate(files, k) for k in (1, 5, 10)})
        if system in (rows[0]["pack"] if rows else ()):
            entry["pack_holds_function"] = round(sum(row["pack"][system] for row in rows) / n, 4)
        table[system] = entry
    paired = {}
    for other in ("flat", "bm25-leaves"):
        paired[f"function hsc - {other}"] = _paired(rows, "function_rank", "hsc", other)
    for other in ("bm25-files", "bm25-leaves"):
        paired[f"file hsc - {other}"] = _paired(rows, "file_rank", "hsc", other)
    paired["pack hsc - flat"] = _paired(rows, "pack", "hsc", "flat")
    for variant in [name for name in (rows[0]["pack"] if rows else ()) if name not in ("hsc", "flat")]:
        for key in ("function_rank", "file_rank", "pack"):
            paired[f"{key.split('_')[0]} {variant} - hsc"] = _paired(rows, key, variant, "hsc")
    return {"questions": len(rows), "systems": table, "paired": paired}


def _paired(rows: list[dict[str, Any]], key: str, a: str, b: str) -> dict[str, Any]:
    """Hit@10 and hit@1 of ``a`` minus ``b`` with 95 % bootstrap intervals, and an exact McNemar
    test of hit@10 (the questions only one of them answers)."""
    from scipy.stats import binomtest

    first = [_as_rank(row[key][b]) for row in rows]
    second = [_as_rank(row[key][a]) for row in rows]
    out = {
        "at_10": paired_bootstrap(first, second, k=10)["recall_at_10"],
        "at_10_ci": paired_bootstrap(first, second, k=10)["recall_at_10_ci"],
        "at_1": paired_bootstrap(first, second, k=1)["recall_at_1"],
        "at_1_ci": paired_bootstrap(first, second, k=1)["recall_at_1_ci"],
    }
    only_a = sum(
        1 for x, y in zip(first, second) if (y is not None and y <= K) and not (x is not None and x <= K)
    )
    only_b = sum(
        1 for x, y in zip(first, second) if (x is not None and x <= K) and not (y is not None and y <= K)
    )
    out["only_" + a], out["only_" + b] = only_a, only_b
    out["p_at_10"] = round(float(binomtest(only_a, only_a + only_b).pvalue), 4) if only_a + only_b else 1.0
    return out


def _as_rank(value: int | bool | None) -> int | None:
    """A rank as it is; a pack's yes or no as rank 1 or a miss."""
    if isinstance(value, bool):
        return 1 if value else None
    return value


def bench_localize(
    paths: list[Path],
    commits: int,
    seed: int,
    out: Path,
    overrides: dict[str, str] | None = None,
    report: Report = print,
    span: int = SPAN,
    variants: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The benchmark over each repository in ``paths`` (see the module's doc), pooled and per
    repository; written to ``out/localize.json`` too. ``variants``: more hsc systems, label ->
    query parameters on top of ``overrides``, each paired against ``hsc``. ``overrides`` of another
    stage (``leaf_minimums``, ...) are the indexing's: a run with them needs an ``out`` of its own,
    and :func:`paired_runs` pairs it against a run without them."""
    from hsc.params import Parameters, query_overrides, with_values

    # The query's own parameters, and the indexing's, checked before any work.
    stages = {name: f.metadata["stage"] for name, f in Parameters.__dataclass_fields__.items()}
    indexing = {k: v for k, v in (overrides or {}).items() if stages.get(k, "query") != "query"}
    with_values(Parameters(), indexing)
    values = query_overrides({k: v for k, v in (overrides or {}).items() if k not in indexing})
    systems = {"hsc": values}
    for label, extra in (variants or {}).items():
        if label in (*SYSTEMS, "hsc"):
            raise ValueError(f"a variant cannot be called {label!r}: that is a system's name")
        systems[label] = {**values, **query_overrides(dict(extra))}
    repositories = [run_repository(p, commits, seed, out, systems, report, span, indexing) for p in paths]
    pooled = [row for r in repositories for row in r["questions"]]
    result = {
        "suite": "localize",
        "commits": commits,
        "seed": seed,
        "span": span,
        "set": dict(overrides or {}),
        "variants": {label: dict(extra) for label, extra in (variants or {}).items()},
        "all": summarise(pooled),
        "repositories": [
            {**{k: v for k, v in r.items()}, "summary": summarise(r["questions"])} for r in repositories
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "localize.json").write_text(json.dumps(result, indent=1))
    return result


def paired_runs(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Each hsc system of ``after`` (a run indexed with other parameters) paired against the same
    system of ``before`` on the questions both asked (by repository and commit): hit@10 and hit@1
    differences with intervals, as :func:`summarise` pairs systems within one run."""
    asked = {(r["repository"], row["commit"]): row for r in before["repositories"] for row in r["questions"]}
    rows = []
    for repository in after["repositories"]:
        for row in repository["questions"]:
            earlier = asked.get((repository["repository"], row["commit"]))
            if earlier is None:
                continue
            pair: dict[str, Any] = {}
            for key in ("function_rank", "file_rank", "pack"):
                pair[key] = {f"{name}@after": value for name, value in row[key].items()}
                pair[key].update({f"{name}@before": value for name, value in earlier[key].items()})
            rows.append(pair)
    systems = [name for name in (after["repositories"][0]["questions"][0]["pack"] if rows else ())]
    paired = {}
    for system in systems:
        if system == "flat":
            continue
        for key in ("function_rank", "file_rank", "pack"):
            paired[f"{key.split('_')[0]} {system}: after - before"] = _paired(
                rows, key, f"{system}@after", f"{system}@before"
            )
    return {
        "questions": len(rows),
        "set_before": before.get("set"),
        "set_after": after.get("set"),
        "paired": paired,
    }


def parse_variants(specs: list[str]) -> dict[str, dict[str, str]]:
    """``["names:exact_name_weight=0.3;tool_roles=code,test"]`` -> {"names": {...}}; a clear error
    for a spec without a label or a pair without ``=``."""
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        label, sep, pairs = spec.partition(":")
        if not sep or not label.strip():
            raise ValueError(f"a variant is LABEL:NAME=VALUE[;NAME=VALUE], got {spec!r}")
        values: dict[str, str] = {}
        for pair in filter(None, (p.strip() for p in pairs.split(";"))):
            name, eq, value = pair.partition("=")
            if not eq:
                raise ValueError(f"expected NAME=VALUE in variant {label!r}, got {pair!r}")
            values[name.strip()] = value.strip()
        out[label.strip()] = values
    return out


def format_localize(result: dict[str, Any]) -> str:
    """The tables: per system, pooled and per repository; then the paired differences."""
    lines = []
    sections = [("all", result["all"])] + [(r["repository"], r["summary"]) for r in result["repositories"]]
    columns = (
        "function_hit_at_1",
        "function_hit_at_10",
        "file_hit_at_1",
        "file_hit_at_10",
        "pack_holds_function",
        "top_is_code",
    )
    for name, summary in sections:
        lines.append(f"{name}: {summary['questions']} questions")
        lines.append("  system        " + "  ".join(f"{c:>19}" for c in columns))
        for system, entry in summary["systems"].items():
            cells = "  ".join(f"{entry[c]:>19.3f}" if c in entry else f"{'':>19}" for c in columns)
            lines.append(f"  {system:<12}  {cells}")
    for label, p in result["all"]["paired"].items():
        lines.append(
            f"{label}: hit@10 {p['at_10']:+.3f} {p['at_10_ci']}, hit@1 {p['at_1']:+.3f} {p['at_1_ci']}, "
            f"p(hit@10) {p['p_at_10']}"
        )
    if "against" in result:
        lines.append(f"against an earlier run, {result['against']['questions']} questions in both:")
        for label, p in result["against"]["paired"].items():
            lines.append(
                f"{label}: hit@10 {p['at_10']:+.3f} {p['at_10_ci']}, hit@1 {p['at_1']:+.3f} "
                f"{p['at_1_ci']}, p(hit@10) {p['p_at_10']}"
            )
    return "\n".join(lines)
