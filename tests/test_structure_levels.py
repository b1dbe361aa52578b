"""The structural tree the Hierarchy page draws (hsc.explore.structure), on a real index of the
bundled samples: every level is where the stored scopes, definitions and groups put it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from hsc import Parameters
from hsc.explore.stages import agreement_sentence, region_level_sentence, stage_agreement
from hsc.explore.structure import rule_count, structural_tree
from hsc.hierarchy.boundaries import container_keys


@pytest.fixture(scope="module")
def sample(indexed_samples):
    index, _, _ = indexed_samples
    repository = next(r for r in index.repositories() if r["name"] == "inventory_py")
    repository_id = int(repository["id"])
    plans = {
        rule: index.preview(repository_id, replace(Parameters(), boundary_rule=rule))
        for rule in ("valley", "structure")
    }
    return plans, index.store.definitions(repository_id)


@pytest.mark.parametrize("rule", ["valley", "structure"])
def test_every_level_is_drawn_and_every_group_sits_in_its_container(sample, rule) -> None:
    plans, definitions = sample
    plan = plans[rule]
    table = plan.table
    view = structural_tree("inventory_py", plan, definitions)
    assert view.deepest == "leaf"
    by_id = {node.id: node for node in view.nodes}
    assert len(by_id) == len(view.nodes)  # ids are unique
    kinds = Counter(node.kind for node in view.nodes)
    assert kinds["definition"] == view.containers > 0
    assert kinds["group"] == view.groups == plan.group_count
    assert kinds["leaf"] == view.leaves == len(table)
    # Every parent is drawn, and each holds exactly the tokens of what hangs under it.
    held = Counter()
    for node in view.nodes:
        if node.parent:
            assert node.parent in by_id
            held[node.parent] += node.tokens
    for node in view.nodes:
        if node.kind != "leaf":
            assert held[node.id] == node.tokens, node
    assert sum(n.tokens for n in view.nodes if not n.parent) == int(table.token_counts.sum())

    # A group under a container holds only that container's leaves; one under its file crosses
    # a container edge or lies at the file's top level.
    keys = container_keys(table.scopes, table.file_index)
    row_of = {f"leaf:{int(leaf_id)}": row for row, leaf_id in enumerate(table.leaf_ids)}
    crossing = 0
    for group in (n for n in view.nodes if n.kind == "group"):
        rows = [row_of[n.id] for n in view.nodes if n.parent == group.id]
        inside = {keys[row] for row in rows}
        parent = by_id[group.parent]
        if parent.kind == "definition":
            assert inside == {parent.id.rsplit(":", 1)[1]}
        else:
            assert parent.kind == "file" and (len(inside) > 1 or inside == {None})
            crossing += len(inside) > 1
    assert crossing == view.crossing == rule_count(plan).crossing


def test_structure_never_crosses_a_container_edge_and_valley_can(sample) -> None:
    plans, definitions = sample
    valley, structure = (rule_count(plans[rule]) for rule in ("valley", "structure"))
    assert structure.crossing == 0
    assert valley.crossing > 0  # the sample has a class whose edge no valley falls on
    assert structure.groups >= valley.groups  # structure only adds boundaries


def test_containers_take_their_kind_from_the_stored_definitions(sample) -> None:
    plans, definitions = sample
    view = structural_tree("inventory_py", plans["valley"], definitions)
    containers = [n for n in view.nodes if n.kind == "definition"]
    for node in containers:
        path, name = node.id.removeprefix("def:").rsplit(":", 1)
        stored = [d for d in definitions[path] if d.scope.endswith("." + name)]
        kind = min(stored, key=lambda d: d.scope.count(".")).kind
        assert node.label == f"{kind} {name}"
    assert any(n.label.startswith("class ") for n in containers)


def test_a_scope_and_a_node_limit_draw_less(sample) -> None:
    plans, definitions = sample
    plan = plans["valley"]
    one_file = structural_tree("inventory_py", plan, definitions, scope="inventory/models.py")
    assert {n.kind for n in one_file.nodes} == {"file", "definition", "group", "leaf"}
    assert [n.id for n in one_file.nodes if not n.parent] == ["file:inventory/models.py"]
    assert one_file.files == 1

    whole = structural_tree("inventory_py", plan, definitions)
    base = 1 + whole.folders + whole.files
    shallow = structural_tree("inventory_py", plan, definitions, max_nodes=base + whole.containers)
    assert shallow.deepest == "definition"
    assert {n.kind for n in shallow.nodes} == {"repository", "folder", "file", "definition"}
    # The totals still count everything in view.
    assert shallow.groups == whole.groups and shallow.leaves == whole.leaves
    left_out = structural_tree("inventory_py", plan, definitions, leave_out=["README.md"])
    assert "file:README.md" not in {n.id for n in left_out.nodes}


# -- the Query page's sentence on the two stages (hsc.explore.stages) ---------------------------------


def ask(indexed_samples, text: str, **values):
    index, _, _ = indexed_samples
    repository = next(r for r in index.repositories() if r["name"] == "inventory_py")
    return index.query(text, int(repository["id"]), params=values, record=False)


def test_stages_agree_when_stage_one_opens_every_group(indexed_samples) -> None:
    response = ask(
        indexed_samples, "apply a discount to a price", retrieval_mode="two-stage", stage1_leaf_share=1.0
    )
    agreement = stage_agreement(response)
    assert agreement.top == 10 and agreement.leaves_opened == agreement.leaves_total
    assert agreement.shared == agreement.same_rank == 10  # every leaf scored, as the flat search does
    sentence = agreement_sentence(agreement, Parameters(), response.mode)
    assert sentence.startswith("**The two stages agree") and "in the same order" in sentence
    assert f"{response.opened_leaves:,} of {response.flat_leaves_compared:,} leaves" in sentence


def test_stages_differ_when_stage_one_opens_one_group_and_the_sentence_says_why(indexed_samples) -> None:
    response = ask(
        indexed_samples,
        "parse a CSV row into an item",
        retrieval_mode="two-stage",
        stage1_leaf_share=0.0,
        mid_level_top_k=1,
    )
    agreement = stage_agreement(response)
    opened = set(response.opened_group_ids)
    outside = [r for r in response.flat[:10] if r.parent_id not in opened]
    assert len(opened) == 1 and outside
    assert agreement.not_opened == len(outside) and agreement.through_bm25 == 0
    assert agreement.shared == 10 - len(outside)
    sentence = agreement_sentence(agreement, Parameters(), response.mode)
    assert sentence.startswith("**The two stages differ") and f"of the other {len(outside)}" in sentence
    assert f"outside the 1 group opened in stage 1 ({response.opened_leaves} of" in sentence


def test_the_region_sentence_names_the_first_regions_level(indexed_samples) -> None:
    response = ask(indexed_samples, "class that holds stock levels for a warehouse")
    assert response.regions
    first = response.regions[0]
    sentence = region_level_sentence(response.regions, response.results)
    assert f"at the **{first.level}** level: {first.name}" in sentence
    leaf = response.results[0]
    holds = first.path == leaf.path and (
        first.start_line is None or first.start_line <= leaf.start_line <= (first.end_line or 0)
    )
    ending = ", which holds the first leaf." if holds else ", which does not hold the first leaf."
    assert sentence.endswith(ending)


def test_the_sentence_counts_the_leaves_bm25_brought_in(indexed_samples) -> None:
    response = ask(indexed_samples, "parse a CSV row into an item", retrieval_mode="hybrid")
    agreement = stage_agreement(response)
    opened = set(response.opened_group_ids)
    answered = {r.leaf_id for r in response.results}
    brought = [r for r in response.flat[:10] if r.parent_id not in opened and r.leaf_id in answered]
    # On the sample (run and checked), BM25 brings some of the flat top 10 in from unopened groups.
    assert brought and agreement.flat_through_bm25 == len(brought) and agreement.shared == agreement.top
    sentence = agreement_sentence(agreement, Parameters(), response.mode)
    inside = agreement.top - len(brought)
    assert f"{inside} inside the {len(opened)} groups opened in stage 1" in sentence
    assert f"and {len(brought)} brought in by BM25 from groups it did not open" in sentence
