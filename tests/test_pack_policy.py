"""The context pack's policy as a reader checks it against the Query page: a hit has the rank and
the reason the page's table gives the same result (hsc.search.reasons makes both), and an outline
stands in for a definition only when the whole does not fit, naming the hit it stands beside."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import SAMPLE_REPOS

from hsc import Index, Parameters
from hsc.app.ui.pack import query_parameters
from hsc.app.ui.query_view import staged_table
from hsc.search.reasons import hit_reason

QUERIES = (
    "reserve units of stock for an order",
    "render the stock report as a table",
    "take a percentage off a price",
    "save the inventory to a JSON file",
    "parse the command line arguments",
    "look up an item by its SKU",
)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("pack-policy")
    for sample in ("inventory_py", "shortlink_go"):
        shutil.copytree(SAMPLE_REPOS / sample, root / sample)
    with Index.open(root / "index.db") as index:
        for sample in ("inventory_py", "shortlink_go"):
            index.index(root / sample)
        yield index


def _table_rows(index: Index, query: str, repository_id: int, roles, params: Parameters) -> dict[str, tuple]:
    """Leaf id -> (rank, why) as the Query page's table shows them (each piece of a joined result)."""
    response = index.query(query, repository_id=repository_id, params=params, roles=roles, record=False)
    frame = staged_table(response, {r.leaf_id: r.scope for r in response.results}, "", params.mid_level_top_k)
    rows = {}
    for result, (_, row) in zip(response.results, frame.data.iterrows(), strict=True):
        for leaf in [result.leaf_id, *(piece[0] for piece in result.pieces)]:
            rows[leaf] = (int(row["rank"]), row.get("why", ""))
    return rows


@pytest.mark.parametrize("roles", [None, ("code",)])
def test_the_pack_gives_each_hit_the_rank_and_reason_of_the_query_table(index, roles) -> None:
    params = Parameters()
    compared = 0
    for repository in index.repositories():
        repository_id = int(repository["id"])
        for query in QUERIES:
            table = _table_rows(index, query, repository_id, roles, params)
            pack = index.context(
                query, 2048, repository_id=repository_id, roles=roles, **dict(query_parameters(params))
            )
            for span in pack.spans:
                if span.role != "hit":
                    continue
                shown = [table[leaf] for leaf in span.leaf_ids if leaf in table]
                for rank, why in shown:
                    assert span.reason == hit_reason(rank, why), (query, span)
                    compared += 1
    # Most of the tables' results are in the packs: the comparison is not an empty one.
    assert compared >= 40


OUTLINE = re.compile(
    r"\(([\d,]+) tokens whole, ([\d,]+) allowed\)|the rest takes ([\d,]+) tokens, ([\d,]+) allowed"
)


@pytest.mark.parametrize("budget", [300, 700, 2048])
def test_an_outline_stands_in_only_for_what_does_not_fit_and_names_its_hit(index, budget) -> None:
    outlines = 0
    for repository in index.repositories():
        repository_id = int(repository["id"])
        for query in QUERIES:
            pack = index.context(query, budget, repository_id=repository_id, context_enclosing_tokens=1)
            hit_ranks = {
                int(m) for s in pack.spans if s.role == "hit" for m in re.findall(r"rank (\d+)", s.reason)
            }
            for span in pack.spans:
                # A module question's file outline is no stand-in (tests/test_module_rule.py).
                if span.role != "outline" or "a module question" in span.reason:
                    continue
                outlines += 1
                found = OUTLINE.search(span.reason)
                assert found, span.reason
                numbers = [int(n.replace(",", "")) for n in found.groups() if n]
                whole, allowed = numbers
                assert whole > allowed, span.reason
                if "which holds rank" in span.reason:  # a class a hit lies in: the hit is named
                    named = re.search(
                        r"which holds rank (\d+) \(hit ([\w./]+) lines (\d+)-(\d+)\)", span.reason
                    )
                    assert named and int(named.group(1)) in hit_ranks, span.reason
                    assert span.reason.startswith("outline of ")
    assert outlines >= 3


def test_a_class_outline_names_the_method_that_brought_it(index) -> None:
    (inventory,) = [r for r in index.repositories() if r["root"].endswith("inventory_py")]
    query = "reserve units of stock for an order"
    pack = index.context(query, 2048, repository_id=int(inventory["id"]), context_enclosing_tokens=1)
    [outline] = [s for s in pack.spans if s.role == "outline" and "which holds" in s.reason]
    assert outline.text.startswith("class StockLevel")
    assert outline.reason.startswith(
        "outline of class inventory.models.StockLevel, which holds rank 1 "
        "(hit inventory.models.StockLevel.reserve lines 94-106)"
    )
    # Whole when the limit lets it in: no outline then.
    whole = index.context(query, 2048, repository_id=int(inventory["id"]), context_enclosing_tokens=400)
    assert not any(s.role == "outline" and "which holds" in s.reason for s in whole.spans)


def test_a_module_question_keeps_room_for_its_file_outline_when_asked(index) -> None:
    from hsc.search.assemble import Hit, top_level
    from hsc.search.module_rule import module_question

    (inventory,) = [r for r in index.repositories() if r["root"].endswith("inventory_py")]
    repository_id = int(inventory["id"])
    query = "price calculations: discounts, tax, bulk tiers and currency handling"  # pricing.py's doc
    before = index.context(query, 2048, repository_id=repository_id, context_file_outline_tokens=0)
    after = index.context(query, 2048, repository_id=repository_id, context_file_outline_tokens=300)
    assert not [s for s in before.spans if "a module question" in s.reason]
    outlines = [s for s in after.spans if "a module question" in s.reason]
    assert outlines and all(s.role == "outline" and s.path == "inventory/pricing.py" for s in outlines)
    assert sum(s.tokens for s in outlines) <= 300 and after.tokens <= 2048
    # Each stands for a top-level definition of the file that no other span shows.
    definitions = {
        (d.start_line, d.end_line)
        for d in top_level(
            index.store.definitions(repository_id, "inventory/pricing.py")["inventory/pricing.py"]
        )
    }
    for outline in outlines:
        assert (outline.start_line, outline.end_line) in definitions
        others = [s for s in after.spans if s is not outline and s.path == outline.path]
        assert all(s.end_line < outline.start_line or s.start_line > outline.end_line for s in others)
    # The first rule (context_module_rule top-hits): 3 of the top 5 hits in the best hit's file.
    hits = [Hit(i, path, 1, 2, 1.0, i) for i, path in enumerate(["a.py", "b.py", "a.py", "c.py", "a.py"], 1)]
    assert module_question(hits).path == "a.py" and module_question(hits[:4]) is None
