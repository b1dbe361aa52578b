"""Region and file answers measured: does an answer above the leaves hold what the question asks for?

A region (a folder, file, definition or group; hsc.search.regions) answers a target *strictly*
when it lies mostly inside the target (at least ``INSIDE`` of its lines) and covers at least
``COVER`` of the target's lines: a class question wants the class, not one method nor the whole
file. It *holds* the target when it holds at least ``HOLDS`` of the target's lines (the lenient
rule: the file holds every function in it). A file ranking answers when it names the target's file.

The systems each turn the same ranked leaves (the run's hybrid: stage 1 widened, fused with BM25)
into regions: the leaves themselves; the structural baseline, each leaf's enclosing definition
(outermost or innermost) in leaf order; the hierarchy's own levels ranked by best leaf, by pooled
vector or by both; and files ranked the same ways. Paired intervals compare each with the leaves
and with the outermost enclosing definition, which the hierarchy must beat to claim anything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from hsc.params import Parameters
from hsc.quality.catalog import Prepared
from hsc.quality.corpus import Target
from hsc.quality.metrics import first_hit, paired_bootstrap, recall_at
from hsc.quality.outline_variants import ALL, every_outline_variants, outline_variants, region_outlines
from hsc.quality.systems import TwoStage
from hsc.search.region_names import name_evidence
from hsc.search.region_outlines import outline_evidence
from hsc.search.region_table import DEFINITION, FILE, RegionTable, build_regions
from hsc.search.region_terms import RegionTerms, bm25, listed_region_lexical, stored_region_terms
from hsc.search.regions import OUTLINE_WEIGHT, answer_regions, rank_files, rank_regions
from hsc.search.two_stage import top_k

INSIDE, COVER, HOLDS = 0.5, 0.3, 0.5
K = 10
# The leaves' best-leaf shares tried for a region's and a file's score (1 = its best leaf alone).
BEST_SHARES = (1.0, 0.75, 0.5, 0.25, 0.0)
LEAVES, BASELINE = "leaves (hybrid)", "outermost definition by best leaf"
SHIPPED = "regions (hsc defaults)"
WITHOUT_OUTLINES = "regions (hsc defaults, region_outlines off)"  # the shipped regions before outlines
WITHOUT_NAMES = "regions (hsc defaults, region_names off)"  # the shipped regions before name evidence
DEFINITIONS_ONLY = "regions (hsc defaults, region_levels definition)"  # asked at the definition level
# The shipped regions with a type scored by the leaves inside its lines alone, before members declared
# outside it (Go methods, Rust impl blocks) counted as its own; and so asked at the definition level.
MEMBERS_INSIDE = "regions (hsc defaults, region_members inside)"
MEMBERS_INSIDE_DEFINITIONS = "regions (hsc defaults, region_levels definition, region_members inside)"
TYPES_ONLY = "regions (hsc defaults, region_levels type)"  # asked at the type level
# Why a question the shipped regions miss is missed (hsc.quality.regions.miss_cause), in this order.
MISS_CAUSES = (
    "no file or definition is the target",
    "the target is inside another definition",
    "no candidate leaf in the target",
    f"ranked {K + 1}-{2 * K}",
    f"ranked below {2 * K}",
)
# The query-complexity rule for the level of the first answer (docs/hierarchy.md, "Query
# complexity"): its file when at least FILE_SPREAD of the top K leaves lie in the top leaf's file,
# else its outermost definition when at least CLASS_SPREAD of them lie in that definition, else the
# leaf. Measured against each fixed level; it does not beat the fixed "outermost definition".
FILE_SPREAD, CLASS_SPREAD = 0.9, 0.3
Span = tuple[str, int | None, int | None]  # path, first line, last line (None: a folder)


def _overlap(target: Target, span: Span) -> int:
    path, start, end = span
    if path != target.path or start is None or end is None:
        return 0
    return max(0, min(end, target.end_line) - max(start, target.start_line) + 1)


def strict_hit(target: Target, span: Span) -> bool:
    overlap = _overlap(target, span)
    if not overlap:
        return False
    _, start, end = span
    inside = overlap / (int(end) - int(start) + 1)  # type: ignore[arg-type]
    return inside >= INSIDE and overlap / (target.end_line - target.start_line + 1) >= COVER


def holds(target: Target, span: Span) -> bool:
    return _overlap(target, span) >= HOLDS * (target.end_line - target.start_line + 1)


def _enclosing(regions: RegionTable, outermost: bool) -> np.ndarray:
    """For every leaf row, the definition region holding it with the most (or fewest) lines; -1: none."""
    indptr, held = regions.leaf_regions
    out = np.full(len(indptr) - 1, -1, dtype=np.int64)
    sizes = regions.end_lines - regions.start_lines
    for row in range(len(out)):
        found = [int(r) for r in held[indptr[row] : indptr[row + 1]] if regions.levels[r] == DEFINITION]
        if found:
            out[row] = (max if outermost else min)(found, key=lambda r: (sizes[r], -r))
    return out


def _by_best_leaf(regions: RegionTable, enclosing: np.ndarray, rows: list[int], table: Any) -> list[Span]:
    """Each leaf's enclosing definition (the leaf itself outside any), in leaf order, once each."""
    out: list[Span] = []
    seen: set[Span] = set()
    for row in rows:
        region = int(enclosing[row])
        if region >= 0:
            span = (regions.paths[region], int(regions.start_lines[region]), int(regions.end_lines[region]))
        else:
            path = table.paths[int(table.file_index[row])]
            span = (path, int(table.start_lines[row]), int(table.end_lines[row]))
        if span not in seen:
            seen.add(span)
            out.append(span)
        if len(out) >= K:
            break
    return out


def _leaf_span(table: Any, row: int) -> Span:
    return (table.paths[int(table.file_index[row])], int(table.start_lines[row]), int(table.end_lines[row]))


def _region_span(regions: RegionTable, region: int) -> Span:
    return (regions.paths[region], int(regions.start_lines[region]), int(regions.end_lines[region]))


def first_answers(
    regions: RegionTable, enclosing: np.ndarray, rows: list[int], table: Any
) -> dict[str, Span]:
    """The first answer at each fixed level (the top leaf, its outermost definition, its file) and
    at the level the spread of the top ``K`` leaves picks (:data:`FILE_SPREAD`, :data:`CLASS_SPREAD`)."""
    top = rows[0]
    leaf = _leaf_span(table, top)
    outer = int(enclosing[top])
    definition = _region_span(regions, outer) if outer >= 0 else leaf
    file_region = next(int(r) for r in regions.files if regions.paths[r] == leaf[0])
    answers = {"top leaf": leaf, "its outermost definition": definition}
    answers["its file"] = _region_span(regions, file_region)
    in_file = np.mean([table.paths[int(table.file_index[r])] == leaf[0] for r in rows[:K]])
    in_definition = np.mean([int(enclosing[r]) == outer for r in rows[:K]]) if outer >= 0 else 0.0
    if in_file >= FILE_SPREAD:
        answers["by the spread of the top leaves"] = answers["its file"]
    elif in_definition >= CLASS_SPREAD:
        answers["by the spread of the top leaves"] = definition
    else:
        answers["by the spread of the top leaves"] = leaf
    return answers


def miss_cause(
    regions: RegionTable,
    table: Any,
    target: Target,
    rows: np.ndarray,
    ranked: list[Span],
) -> str | None:
    """Why the shipped regions ``ranked`` (best first, deeper than ``K``) miss ``target`` strictly
    in their top ``K`` (None: they do not): one of :data:`MISS_CAUSES`."""
    place = next((i for i, span in enumerate(ranked) if strict_hit(target, span)), None)
    if place is not None and place < K:
        return None
    levels = np.isin(regions.levels, (FILE, DEFINITION)) & np.array([p == target.path for p in regions.paths])
    matching = [r for r in np.flatnonzero(levels) if strict_hit(target, _region_span(regions, int(r)))]
    if not matching:
        return MISS_CAUSES[0]
    if not any(regions.outermost[r] for r in matching):  # a file counts as outermost
        return MISS_CAUSES[1]
    if not any(_overlap(target, _leaf_span(table, int(r))) for r in rows):
        return MISS_CAUSES[2]
    return MISS_CAUSES[3] if place is not None and place < 2 * K else MISS_CAUSES[4]


def _spans(found: list[Any]) -> list[Span]:
    return [(r.path, r.start_line, r.end_line) for r in found]


def region_rankings(
    prepared: Prepared,
    plan: Any,
    params: Parameters,
    report: Callable[[str], None] = print,
    collect_misses: dict[str, int] | None = None,
) -> dict[str, list[list[Span]]]:
    """System name -> each query's top ``K`` spans; ``collect_misses``, when given, counts the
    shipped regions' strict misses by :func:`miss_cause` (and the files in their top ``K``)."""
    corpus = prepared.corpus
    table = corpus.table
    hybrid = TwoStage(
        corpus,
        plan,
        params.mid_level_top_k,
        "hybrid",
        params.stage1_leaf_share,
        lexical_weight=params.lexical_weight,
        lexical_candidates=params.lexical_candidates,
    )
    definitions = corpus.store.definitions(corpus.repository_id)
    regions = build_regions(table, definitions, plan.group_starts, plan.group_ends)
    report(f"regions: {len(regions)} ({int((regions.levels == DEFINITION).sum())} definitions)")
    outer, inner = _enclosing(regions, True), _enclosing(regions, False)
    stored = corpus.store.leaf_term_texts(corpus.repository_id)
    region_terms = stored_region_terms(regions, table.leaf_ids, stored)
    outlines = region_outlines(regions, table, definitions, corpus.embed_texts)
    outlined = [r for r in outlines.rows.tolist() if regions.levels[r] == DEFINITION]
    with_outline = sum(
        any(strict_hit(t, _region_span(regions, r)) for r in outlined if regions.paths[r] == t.path)
        for t in prepared.targets
    )
    report(
        f"outline vectors: {len(outlines)} ({len(outlined)} definitions spanning several leaves, the rest"
        f" files); targets answered strictly by an outlined definition: {with_outline}"
        f" of {len(prepared.targets)}"
    )
    every_outline = region_outlines(regions, table, definitions, corpus.embed_texts, min_leaves=1)
    report(f"outline vectors of every outermost definition with members, and files: {len(every_outline)}")
    all_outline = region_outlines(regions, table, definitions, corpus.embed_texts, min_leaves=0)
    report(f"outline vectors of every outermost definition, and files: {len(all_outline)}")
    out: dict[str, list[list[Span]]] = {}

    def put(name: str, spans: list[Span]) -> None:
        out.setdefault(name, []).append(spans[:K])

    for target, vector in zip(prepared.targets, prepared.query_vectors):
        found, _ = hybrid.retrieve(vector, target.query, params.region_candidates)
        rows = np.array([h.row for h in found.leaves], dtype=np.int64)
        scores = np.array([h.score for h in found.leaves])
        top = rows[:K].tolist()
        put(
            LEAVES,
            [
                (table.paths[int(table.file_index[r])], int(table.start_lines[r]), int(table.end_lines[r]))
                for r in top
            ],
        )
        put(BASELINE, _by_best_leaf(regions, outer, rows.tolist(), table))
        put("innermost definition by best leaf", _by_best_leaf(regions, inner, rows.tolist(), table))
        for share in BEST_SHARES:
            put(
                f"groups, best share {share}",
                _spans(rank_regions(regions, rows, scores, vector, K, share, "all", ("group",))),
            )
            put(
                f"definitions, best share {share}",
                _spans(rank_regions(regions, rows, scores, vector, K, share, "all", ("definition",))),
            )
            put(f"files, best share {share}", _spans(rank_files(regions, rows, scores, vector, K, share)))
            put(
                f"outermost definitions, best share {share}",
                _spans(rank_regions(regions, rows, scores, vector, K, share, "all", ("definition",), True)),
            )
            for nesting in ("separate", "all"):
                put(
                    f"regions ({nesting}), best share {share}",
                    _spans(rank_regions(regions, rows, scores, vector, K, share, nesting)),
                )
                put(
                    f"files + outermost definitions ({nesting}), best share {share}",
                    _spans(
                        rank_regions(
                            regions, rows, scores, vector, K, share, nesting, ("file", "definition"), True
                        )
                    ),
                )
        for share, file_share in (
            (1.0, 0.5),
            (1.0, 0.75),
            (0.75, 0.5),
            (0.75, 0.75),
            (0.5, 0.5),
            (0.5, 0.75),
        ):
            put(
                f"files + outermost definitions, best share {share}, files {file_share}",
                _spans(
                    rank_regions(
                        regions,
                        rows,
                        scores,
                        vector,
                        K,
                        share,
                        "all",
                        ("file", "definition"),
                        True,
                        file_share,
                    )
                ),
            )
        lexical_variants(regions, region_terms, rows, scores, vector, target.query, put)
        outline_variants(regions, outlines, rows, scores, vector, put)
        every_outline_variants(regions, every_outline, rows, scores, vector, put)
        every_outline_variants(regions, all_outline, rows, scores, vector, put, ALL)
        lexical = None
        if params.region_lexical != "off":  # as hsc.search.searching gives it
            lexical = listed_region_lexical(region_terms, regions, target.query, params.region_lexical)
        # As hsc.search.searching gives it: the outlines of the definitions that hold others.
        evidence = (
            outline_evidence(every_outline, regions, vector) if params.region_outlines != "off" else None
        )
        names = name_evidence(regions, target.query) if params.region_names != "off" else None
        at_k = dataclasses.replace(params, region_count=K)
        shipped, files = answer_regions(regions, rows, scores, vector, at_k, lexical, evidence, names)
        put(SHIPPED, _spans(shipped))
        without_outlines = answer_regions(regions, rows, scores, vector, at_k, lexical, None, names)
        put(WITHOUT_OUTLINES, _spans(without_outlines[0]))
        without_names = answer_regions(regions, rows, scores, vector, at_k, lexical, evidence)
        put(WITHOUT_NAMES, _spans(without_names[0]))
        # Asked at the definition level (`--set region_levels=definition`, the MCP locate tool's level).
        definitions_only = dataclasses.replace(at_k, region_levels="definition")
        only = answer_regions(regions, rows, scores, vector, definitions_only, lexical, evidence, names)
        put(DEFINITIONS_ONLY, _spans(only[0]))
        # Asked at the type level (`--level type`, `--set region_levels=type`).
        types_only = dataclasses.replace(at_k, region_levels="type")
        typed = answer_regions(regions, rows, scores, vector, types_only, lexical, evidence, names)
        put(TYPES_ONLY, _spans(typed[0]))
        for label, asked in ((MEMBERS_INSIDE, at_k), (MEMBERS_INSIDE_DEFINITIONS, definitions_only)):
            inside = dataclasses.replace(asked, region_members="inside")
            found = answer_regions(regions, rows, scores, vector, inside, lexical, evidence, names)[0]
            put(label, _spans(found))
        name_variants(regions, rows, scores, vector, target.query, evidence, put)
        put("files (hsc defaults)", _spans(files))
        for level, span in first_answers(regions, outer, rows.tolist(), table).items():
            put(f"first answer: {level}", [span])
        if collect_misses is not None:
            deeper = answer_regions(
                regions,
                rows,
                scores,
                vector,
                dataclasses.replace(params, region_count=2 * K),
                lexical,
                evidence,
                names,
            )
            cause = miss_cause(regions, table, target, rows, _spans(deeper[0]))
            if cause is not None:
                collect_misses[cause] = collect_misses.get(cause, 0) + 1
                # What takes the slots of a miss: files, and definitions of other files.
                collect_misses["files among the top 10 of a miss"] = collect_misses.get(
                    "files among the top 10 of a miss", 0
                ) + sum(r.level == "file" for r in shipped)
    return out


# Name evidence (hsc.search.region_names) tried at other weights on the shipped regions (outline
# evidence as shipped): (label, definitions' weight, files' weight, the least share of its name a
# region without a candidate leaf must match to be listed too (0: none is)).
NAME_VARIANTS = (
    ("name evidence 0.05", 0.05, 0.05, 0.0),
    ("name evidence 0.1, definitions only", 0.1, 0.0, 0.0),
    ("name evidence 0.15", 0.15, 0.15, 0.0),
    ("name evidence 0.15, files 0.1", 0.15, 0.1, 0.0),
    ("name evidence 0.2, files 0.1", 0.2, 0.1, 0.0),
    ("name evidence 0.1, + regions named wholly", 0.1, 0.1, 1.0),
    ("name evidence 0.1, + regions named half", 0.1, 0.1, 0.5),
)


def name_variants(
    regions: RegionTable,
    rows: np.ndarray,
    scores: np.ndarray,
    vector: np.ndarray,
    query: str,
    evidence: Callable[[np.ndarray], np.ndarray] | None,
    put: Callable[[str, list[Span]], None],
) -> None:
    """One query's shipped regions with name evidence at each of :data:`NAME_VARIANTS`' weights."""
    share = name_evidence(regions, query)
    listable = np.flatnonzero((regions.levels == FILE) | ((regions.levels == DEFINITION) & regions.outermost))
    shares = share(listable)
    for label, definition_weight, file_weight, least in NAME_VARIANTS:
        extra = listable[shares >= least] if least else None

        def weighted(ids: np.ndarray, d: float = definition_weight, f: float = file_weight) -> np.ndarray:
            return share(ids) * np.where(regions.levels[ids] == FILE, f, d)

        found = rank_regions(
            regions,
            rows,
            scores,
            vector,
            K,
            best_share=0.75,
            nesting="all",
            levels=("file", "definition"),
            outermost_only=True,
            file_best_share=0.75,
            outline_evidence=evidence,
            outline_weight=OUTLINE_WEIGHT if evidence is not None else 0.0,
            extra=extra,
            name_evidence=weighted,
            name_weight=1.0,
        )
        put(f"regions + {label}", _spans(found))


# Class-level lexical evidence tried on the mixed list (files + outermost definitions, shares as
# shipped): (label, definitions' field, weight, fusion, files' field ("": none), definitions
# reached by BM25 added; "best": a file's is its best definition's; "rest": its own less its best
# definition's). Each level's lexical score
# counts as a share of its best listed one.
LEXICAL_VARIANTS = (
    ("text 0.1", "text", 0.1, "sum", "", 0),
    ("text 0.25", "text", 0.25, "sum", "", 0),
    ("text rrf", "text", 1.0, "rrf", "", 0),
    ("names 0.1", "names", 0.1, "sum", "", 0),
    ("names 0.25", "names", 0.25, "sum", "", 0),
    ("names 0.5", "names", 0.5, "sum", "", 0),
    ("names rrf", "names", 1.0, "rrf", "", 0),
    ("text+names 0.1", "both", 0.1, "sum", "", 0),
    ("text+names 0.25", "both", 0.25, "sum", "", 0),
    ("text+names 0.25, +10 by BM25", "both", 0.25, "sum", "", 10),
    ("text 0.1, files text", "text", 0.1, "sum", "text", 0),
    ("text 0.25, files text", "text", 0.25, "sum", "text", 0),
    ("names 0.25, files names", "names", 0.25, "sum", "names", 0),
    ("text+names 0.1, files text+names", "both", 0.1, "sum", "both", 0),
    ("text+names 0.25, files text+names", "both", 0.25, "sum", "both", 0),
    ("text+names 0.5, files text+names", "both", 0.5, "sum", "both", 0),
    ("names 0.1, files their best definition's", "names", 0.1, "sum", "best", 0),
    ("names 0.25, files their best definition's", "names", 0.25, "sum", "best", 0),
    ("names 0.5, files their best definition's", "names", 0.5, "sum", "best", 0),
    ("text+names 0.1, files their best definition's", "both", 0.1, "sum", "best", 0),
    ("text+names 0.25, files their best definition's", "both", 0.25, "sum", "best", 0),
    ("text+names 0.5, files their best definition's", "both", 0.5, "sum", "best", 0),
    ("text+names 1.0, files their best definition's", "both", 1.0, "sum", "best", 0),
    ("text+names 0.1, files what their best definition lacks", "both", 0.1, "sum", "rest", 0),
    ("text+names 0.25, files what their best definition lacks", "both", 0.25, "sum", "rest", 0),
    ("text+names 0.5, files what their best definition lacks", "both", 0.5, "sum", "rest", 0),
)


def lexical_variants(
    regions: RegionTable,
    region_terms: RegionTerms,
    rows: np.ndarray,
    scores: np.ndarray,
    vector: np.ndarray,
    query: str,
    put: Callable[[str, list[Span]], None],
) -> None:
    """One query's regions under each of :data:`LEXICAL_VARIANTS`."""
    by_field = {field: bm25(region_terms, query, field) for field in ("text", "names")}
    by_field["both"] = by_field["text"] + by_field["names"]
    definitions = (regions.levels == DEFINITION) & regions.outermost
    files = regions.levels == FILE
    # Each region's file region (files are listed before their definitions, paths in order).
    file_rows = np.flatnonzero(files)
    file_of = file_rows[np.searchsorted(regions.lo[file_rows], regions.lo, side="right") - 1]
    for label, field, weight, fusion, file_field, added in LEXICAL_VARIANTS:
        lexical = np.where(definitions, by_field[field], 0.0)
        if file_field in ("best", "rest"):  # "best": a class and its file rise together
            best = np.zeros(len(regions))
            np.maximum.at(best, file_of[definitions], lexical[definitions])
            # "rest": a file gains only what its best definition does not hold (words spread over it)
            own = np.maximum(by_field[field] - best, 0.0) if file_field == "rest" else best
            lexical = np.where(files, own, lexical)
        elif file_field:
            lexical = np.where(files, by_field[file_field], lexical)
        extra = None
        if added:
            reached = np.where(definitions, by_field[field], 0.0)
            extra = top_k(reached, added)
            extra = extra[reached[extra] > 0]
        for kind, levels in (("regions", ("file", "definition")), ("outermost definitions", ("definition",))):
            found = rank_regions(
                regions,
                rows,
                scores,
                vector,
                K,
                0.75,
                "all",
                levels,
                True,
                0.75,
                lexical,
                weight,
                fusion,
                extra,
            )
            put(f"{kind} + lexical {label}", _spans(found))


def score_regions(prepared: Prepared, rankings: dict[str, list[list[Span]]]) -> list[dict[str, Any]]:
    """One row per system: strict and lenient region hit@1/@10, file hit@1/@10 (the first span in
    the target's file), and paired intervals of strict hit@10 against the leaves and the baseline."""
    ranks: dict[str, dict[str, list[int | None]]] = {}
    for name, per_query in rankings.items():
        strict, lenient, files = [], [], []
        for target, spans in zip(prepared.targets, per_query):
            strict.append(first_hit([strict_hit(target, s) for s in spans]))
            lenient.append(first_hit([holds(target, s) for s in spans]))
            files.append(first_hit([s[0] == target.path and s[1] is not None for s in spans]))
        ranks[name] = {"strict": strict, "holds": lenient, "file": files}
    rows = []
    for name, found in ranks.items():
        row: dict[str, Any] = {"system": name}
        for metric, values in found.items():
            row[f"{metric}_at_1"] = round(recall_at(values, 1), 4)
            row[f"{metric}_at_10"] = round(recall_at(values, K), 4)
        for label, other in (("vs_leaves", LEAVES), ("vs_baseline", BASELINE)):
            if other in ranks and other != name:
                paired = paired_bootstrap(ranks[other]["strict"], found["strict"], K)
                row[f"strict_{label}"] = paired[f"recall_at_{K}"]
                row[f"strict_{label}_ci"] = paired[f"recall_at_{K}_ci"]
        row["strict_ranks"] = found["strict"]
        row["holds_ranks"] = found["holds"]
        row["file_ranks"] = found["file"]
        rows.append(row)
    return rows


REGION_COLUMNS = (
    "system",
    "strict_at_1",
    "strict_at_10",
    "holds_at_10",
    "file_at_1",
    "file_at_10",
    "strict_vs_baseline",
    "strict_vs_baseline_ci",
)


def format_regions(rows: list[dict[str, Any]]) -> str:
    """The region table as Markdown."""
    lines = ["| " + " | ".join(REGION_COLUMNS) + " |", "|" + "---|" * len(REGION_COLUMNS)]
    for row in rows:
        cells = []
        for column in REGION_COLUMNS:
            value = row.get(column)
            if isinstance(value, list):
                cells.append(f"[{value[0]:+.3f}, {value[1]:+.3f}]")
            elif isinstance(value, float):
                cells.append(f"{value:+.3f}" if column.startswith("strict_vs") else f"{value:.3f}")
            else:
                cells.append("-" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
