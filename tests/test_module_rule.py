"""What tells a module question (hsc.search.module_rule, ``context_module_rule``) on real parts: the
inventory sample indexed with the bundled model in a real SQLite file, the file ranking and regions
the query makes, and the packs ``Index.context`` assembles from them."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLE_REPOS

from hsc import Index, Parameters
from hsc.search.module_rule import (
    MODULE_RULES,
    file_lead,
    file_over_leaf,
    module_question,
    top_hits_rule,
)
from hsc.search.region_table import Region

MODULE = "price calculations: discounts, tax, bulk tiers and currency handling"  # pricing.py's doc
FUNCTION = "reserve units of stock for an order"  # StockLevel.reserve, in models.py
DEFAULTS = Parameters()


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("module-rule")
    shutil.copytree(SAMPLE_REPOS / "inventory_py", root / "inventory_py")
    with Index.open(root / "index.db") as index:
        repository_id = index.index(root / "inventory_py").repository_id
        yield index, repository_id


def ranked(index: Index, repository_id: int, query: str):
    """The query as the pack asks it: its leaves unjoined, its files and regions ranked."""
    return index.query(
        query,
        repository_id=repository_id,
        record=False,
        compare=False,
        join_pieces=False,
        params={"leaf_level_top_k": DEFAULTS.context_candidates},
    )


def outline_spans(pack) -> list:
    return [s for s in pack.spans if "a module question" in s.reason]


def test_the_default_rule_tells_the_module_question_from_the_function_question(indexed) -> None:
    index, repository_id = indexed
    rule, margin = DEFAULTS.context_module_rule, DEFAULTS.context_module_margin
    assert rule == "file-over-leaf"
    module, function = ranked(index, repository_id, MODULE), ranked(index, repository_id, FUNCTION)
    told = module_question(module.results, rule, module.files, module.regions, margin)
    assert told is not None and told.path == "inventory/pricing.py"
    assert module_question(function.results, rule, function.files, function.regions, margin) is None
    # The first rule (where the top hits lie) calls both module questions: the function's file holds
    # most of its top hits too.
    assert top_hits_rule(module.results) is not None and top_hits_rule(function.results) is not None
    assert file_over_leaf(module.results, module.files) > file_over_leaf(function.results, function.files)


def test_the_pack_outlines_the_file_of_a_module_question_only(indexed) -> None:
    index, repository_id = indexed
    module = index.context(MODULE, 2048, repository_id=repository_id, context_file_outline_tokens=150)
    outlines = outline_spans(module)
    assert outlines and {s.path for s in outlines} == {"inventory/pricing.py"}
    assert all(s.role == "outline" for s in outlines) and sum(s.tokens for s in outlines) <= 150
    # The reason is the query's own file ranking (made once, by the query) read by the rule.
    asked = ranked(index, repository_id, MODULE)
    lead = file_over_leaf(asked.results, asked.files)
    assert outlines[0].reason.endswith(f"(the best-ranked file scores {lead:+.3f} over its best hit)")

    function = index.context(FUNCTION, 2048, repository_id=repository_id, context_file_outline_tokens=150)
    unchanged = index.context(FUNCTION, 2048, repository_id=repository_id)
    assert not outline_spans(function)
    assert [(s.path, s.start_line, s.end_line) for s in function.spans] == [
        (s.path, s.start_line, s.end_line) for s in unchanged.spans
    ]
    # The first rule stays one value away, and outlines the function question's file too.
    old = index.context(
        FUNCTION,
        2048,
        repository_id=repository_id,
        context_file_outline_tokens=150,
        context_module_rule="top-hits",
    )
    assert {s.path for s in outline_spans(old)} == {"inventory/models.py"}
    assert "of the top 5 hits in it" in outline_spans(old)[0].reason


def test_a_path_filter_keeps_the_outline_to_the_files_it_lets_in(indexed) -> None:
    index, repository_id = indexed
    pack = index.context(
        MODULE,
        2048,
        repository_id=repository_id,
        path_prefix="inventory/models",
        context_file_outline_tokens=150,
        context_module_rule="region-first",  # unfiltered, its list puts pricing.py first
        context_module_margin=0.0,
    )
    assert all(s.path.startswith("inventory/models") for s in pack.spans)


def region(level: str, path: str, score: float) -> Region:
    return Region(level, path, 1, 10, path, score)


def test_each_rule_reads_its_own_threshold() -> None:
    files = [region("file", "a.py", 0.75), region("file", "b.py", 0.5)]
    regions = [region("file", "a.py", 0.75), region("definition", "a.py", 0.625)]
    hits = [region("leaf", "a.py", 0.875), region("leaf", "b.py", 0.8)]
    assert module_question(hits, "file-margin", files, regions, 0.25).path == "a.py"
    assert module_question(hits, "file-margin", files, regions, 0.3) is None
    assert file_lead(regions) == 0.125
    assert module_question(hits, "region-first", files, regions, 0.125).path == "a.py"
    assert module_question(hits, "region-first", files, regions, 0.2) is None
    assert file_over_leaf(hits, files) == -0.125
    assert module_question(hits, "file-over-leaf", files, regions, -0.125).path == "a.py"
    assert module_question(hits, "file-over-leaf", files, regions, -0.1) is None
    # No hit in the best file, no file listed, no definition listed.
    assert file_over_leaf(hits[1:], files) is None
    assert module_question([], "file-over-leaf", [], [], -1.0) is None
    assert file_lead(regions[:1]) == 1.0 and file_lead(regions[1:]) == -1.0
    assert module_question(hits, "region-first", files, regions[1:], -1.0) is None
    with pytest.raises(ValueError, match="unknown module rule 'nearest'"):
        module_question(hits, "nearest", files, regions)
    for rule in MODULE_RULES:  # every rule the parameter offers is one the pack can ask
        module_question(hits, rule, files, regions)


def test_the_benchmark_reports_each_rule_from_the_signals_its_packs_read(tmp_path) -> None:
    from hsc.bench.context import bench_context
    from hsc.bench.context_modules import NO_OUTLINE

    run = bench_context(("json",), out=tmp_path, report=lambda _: None, query_kind="module")
    signals, rules = run["module_signals"], run["module_rules"]
    assert len(signals) == run["corpus"]["queries"] > 0
    # The run's own rule (file-over-leaf -0.04) fires as often as its signal says it does.
    margin = DEFAULTS.context_module_margin
    fired = [s["file_over_leaf"] is not None and s["file_over_leaf"] >= margin for s in signals]
    assert (
        run["module_rule_fires"]
        == rules["file-over-leaf -0.04"]["fires"]
        == round(sum(fired) / len(fired), 3)
    )
    # The shipped pack is measured against the pack without an outline, on the file's definitions.
    assert NO_OUTLINE in run["per_query"]["systems"]
    paired = run["file_outline_intervals"]["context pack (hybrid) @2048"]
    assert set(paired) == {"names", "target", "hit", "full"}
    # json/__init__.py's question fires it (json/tool.py's does not). What the outline adds depends on the
    # file ranked first (json/decoder.py for that question with hsc-code-minilm-3): never less than without
    # it here; the pack's outline of the right file is checked on a real index above.
    assert any(fired) and not all(fired)
    for measure in paired.values():
        assert measure["low"] <= measure["difference"] <= measure["high"] and measure["difference"] >= 0
