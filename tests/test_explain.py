"""The walkthrough's data: one real file of an indexed sample, real parses,
the real model."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from hsc import Parameters
from hsc.explore import explain
from hsc.explore.explain import (
    hierarchy_plan,
    hierarchy_stamp,
    leaf_map,
    leaf_size_flag,
    read_indexed_source,
    source_stamp,
    suggest_file,
    suggest_query,
    syntax_outline,
    trace_query,
    walk_file,
)
from tests.conftest import SAMPLE_REPOS


@pytest.fixture(scope="module")
def inventory(indexed_samples):
    index, root, _ = indexed_samples
    repository_id = index.repository_id(root / "inventory_py")
    return index, index.default_hierarchy(repository_id), root / "inventory_py"


def test_the_syntax_tree_stops_at_the_nodes_that_became_leaves(inventory):
    index, hierarchy_id, _ = inventory
    walk = walk_file(index, hierarchy_id, "inventory/pricing.py")
    assert walk.problems == [] and walk.outline_note == ""
    root = walk.outline[0]
    assert (root.depth, root.node_type, root.role) == (0, "module", "split")
    became = [node for node in walk.outline if node.role == "leaf"]
    # In document order, every leaf of the file is reached, each from the nodes inside it.
    assert [node.leaf for node in became] == sorted(node.leaf for node in became)
    assert {node.leaf for node in became} == set(range(len(walk.leaves)))
    for node in became:
        leaf = walk.leaves[node.leaf]
        inside = max(node.start_byte, leaf["start_byte"]) < min(node.end_byte, leaf["end_byte"])
        assert inside, (node, leaf["scope"])
    assert any(node.node_type == "function_definition" for node in became)


def test_a_node_split_across_leaves_is_opened_into_its_children():
    source = "def f():\n" + "".join(f"    x{i} = compute_value({i}, 'abcdefgh')\n" for i in range(60))
    middle = source.index("    x30")
    nodes, note = syntax_outline(source, "python", [(0, middle - 1), (middle, len(source) - 1)])
    assert note == ""
    assert [n.node_type for n in nodes if n.depth == 0] == ["module"]
    function = next(n for n in nodes if n.node_type == "function_definition")
    assert function.role == "split"
    statements = [n for n in nodes if n.role == "leaf"]
    assert {n.leaf for n in statements} == {0, 1}
    assert statements[-1].leaf == 1 and statements[-1].start_line == 61


def test_the_outline_is_cut_short_on_huge_trees(monkeypatch):
    monkeypatch.setattr(explain, "MAX_OUTLINE_NODES", 5)
    source = "".join(f"v{i} = {i}\n" for i in range(50))
    ranges = [(source.index(f"v{i} ="), source.index(f"v{i} =") + 6) for i in range(50)]
    nodes, note = syntax_outline(source, "python", ranges)
    assert len(nodes) == 5 and "cut short" in note


def test_a_file_changed_on_disk_is_said_so(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    leaf = {"start_byte": 0, "end_byte": 21, "text": "def f():\n    return 1"}
    assert read_indexed_source(str(tmp_path), "a.py", [leaf])[0] is not None
    (tmp_path / "a.py").write_text("def g():\n    return 2\n")
    source, problem = read_indexed_source(str(tmp_path), "a.py", [leaf])
    assert source is None and "changed on disk" in problem
    source, problem = read_indexed_source(str(tmp_path), "gone.py", [leaf])
    assert source is None and "cannot be read" in problem


def test_groups_cover_the_file_and_carry_their_summaries(inventory):
    index, hierarchy_id, _ = inventory
    walk = walk_file(index, hierarchy_id, "inventory/pricing.py")
    n = len(walk.leaves)
    assert len(walk.similarities) == len(walk.smoothed) == len(walk.boundaries) == n - 1
    assert walk.groups[0].first_leaf == 0 and walk.groups[-1].last_leaf == n - 1
    for before, after in zip(walk.groups, walk.groups[1:]):
        assert after.first_leaf == before.last_leaf + 1
        assert walk.boundaries[before.last_leaf]  # a boundary ends every group but the last
    assert np.count_nonzero(walk.boundaries) == len(walk.groups) - 1
    limit = walk.parameters.maximum_merged_chunk_token_length
    for group in walk.groups:
        assert group.node_id and group.node_id.startswith("mid:")
        assert group.needs_summary == (group.token_count > limit)
        assert bool(group.summary) == group.needs_summary
    assert walk.document_summary


def test_leaf_sizes_are_flagged_against_the_limits():
    params = Parameters(minimum_chunk_token_length=24, maximum_chunk_token_length=200)
    assert [leaf_size_flag(t, params) for t in (10, 24, 179, 180, 200, 201)] == [
        "under minimum",
        "",
        "",
        "at maximum",
        "at maximum",
        "over maximum",
    ]


def test_a_query_is_traced_through_both_stages(inventory):
    index, hierarchy_id, _ = inventory
    trace = trace_query(index, "take a percentage off a price", hierarchy_id)
    response = trace.response
    assert trace.opened == [g.node_id for g in response.groups]
    assert len(trace.opened) == Parameters().mid_level_top_k
    assert all(r.parent_id in trace.opened for r in response.results)
    for result in response.flat:
        assert trace.flat_reached[result.leaf_id] == (result.parent_id in trace.opened)
        # A leaf outside the opened groups has a group ranked below them.
        if not trace.flat_reached[result.leaf_id]:
            assert trace.flat_group_rank[result.leaf_id] > 1
    # The winner depends on the encoder (onnx-int8 ranks the Promotion class a hair above it).
    top_three = [r.scope for r in response.results[:3]]
    assert trace.same_winner and "inventory.pricing.apply_discount" in top_three
    assert trace.leaf_count == 95 and trace.group_count == len(
        hierarchy_plan(index, hierarchy_id).group_starts
    )
    # Traces are not recorded in the query history.
    assert all(
        q["text"] != "take a percentage off a price"
        for q in index.query_history(index.hierarchy(hierarchy_id)["repository_id"])
    )


def test_the_leaf_map_shows_groups_as_neighbourhoods(inventory, monkeypatch):
    index, hierarchy_id, _ = inventory
    plan = hierarchy_plan(index, hierarchy_id)
    mapped = leaf_map(plan)
    assert len(mapped.x) == len(plan.table) and not mapped.sampled
    assert 0 < mapped.explained[1] <= mapped.explained[0] < 1
    assert mapped.own_group_similarity > mapped.other_group_similarity + 0.1
    # Sampled when large, always keeping the rows asked for.
    monkeypatch.setattr(explain, "MAP_SAMPLE", 20)
    keep = np.arange(70, 80)
    sampled = leaf_map(plan, keep=keep)
    assert sampled.sampled and set(keep) <= set(sampled.rows.tolist()) and len(sampled.rows) <= 30


def test_a_readable_file_and_a_query_are_suggested(inventory):
    index, hierarchy_id, _ = inventory
    plan = hierarchy_plan(index, hierarchy_id)
    path = suggest_file(plan)
    assert path in plan.table.paths
    leaves = np.count_nonzero(plan.table.file_index == plan.table.paths.index(path))
    assert 5 <= leaves <= 60
    query = suggest_query(walk_file(index, hierarchy_id, path))
    assert query and "_" not in query


def test_the_map_axes_are_the_principal_axes_and_more_rows_land_on_them(inventory, monkeypatch):
    index, hierarchy_id, _ = inventory
    plan = hierarchy_plan(index, hierarchy_id)
    mapped = leaf_map(plan)
    vectors = np.asarray(plan.table.vectors, dtype=np.float64)
    centred = vectors - vectors.mean(axis=0)
    exact = np.linalg.eigh(centred.T @ centred)[1][:, ::-1][:, :2]
    assert np.allclose(np.abs(np.sum(mapped.axes * exact, axis=0)), 1.0, atol=1e-6)
    # A sample's map is the same whichever rows are added to it: they land on the sample's axes.
    monkeypatch.setattr(explain, "MAP_SAMPLE", 40)
    sample = leaf_map(plan)
    keep = np.setdiff1d(np.arange(60, 75), sample.rows)
    widened = sample.including(plan, keep)
    assert len(widened.rows) == len(sample.rows) + len(keep) and widened.sample_size == 40
    at = np.searchsorted(widened.rows, keep)
    expected = (vectors[keep] - sample.mean) @ sample.axes
    assert np.allclose(widened.x[at], expected[:, 0]) and np.allclose(widened.y[at], expected[:, 1])
    shared = np.searchsorted(widened.rows, sample.rows)
    assert np.array_equal(widened.x[shared], sample.x)
    assert np.array_equal(widened.group[at], plan.group_of_leaf()[keep])


@pytest.fixture
def inventory_copy(tmp_path, embedder):
    """A copy of the inventory sample indexed on its own (the tests edit it)."""
    from hsc import Index

    root = tmp_path / "inventory"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", root)
    index = Index.open(tmp_path / "index.db", embedder=embedder)
    index.index(root)
    yield index, root
    index.close()


def test_the_stamps_change_with_the_set_the_leaves_and_the_file(inventory_copy, embedder):
    index, root = inventory_copy
    hierarchy_id = index.default_hierarchy()
    stamp = hierarchy_stamp(index, hierarchy_id)
    source = source_stamp(index, hierarchy_id, "inventory/pricing.py")
    assert stamp == hierarchy_stamp(index, hierarchy_id) and source
    pricing = root / "inventory" / "pricing.py"
    pricing.write_text(pricing.read_text().replace("apply_discount", "apply_price_reduction"))
    assert source_stamp(index, hierarchy_id, "inventory/pricing.py") != source
    assert hierarchy_stamp(index, hierarchy_id) == stamp  # nothing indexed yet
    # Re-indexed by another connection (as a command line run beside the app would):
    # the set is updated in place, under the same id, and the stamp says so.
    from hsc import Index

    with Index.open(index.store.path, embedder=embedder) as other:
        other.index(root)
    assert index.default_hierarchy() == hierarchy_id
    assert hierarchy_stamp(index, hierarchy_id) != stamp
    assert source_stamp(index, hierarchy_id, "missing.py") == ""


def test_a_trace_after_another_connection_reindexed_sees_the_new_leaves(inventory_copy, embedder):
    index, root = inventory_copy
    hierarchy_id = index.default_hierarchy()
    query = "apply a percentage discount to a price"
    assert trace_query(index, query, hierarchy_id).response.results[0].scope.endswith("apply_discount")
    pricing = root / "inventory" / "pricing.py"
    pricing.write_text(pricing.read_text().replace("apply_discount", "apply_price_reduction"))
    from hsc import Index

    with Index.open(index.store.path, embedder=embedder) as other:
        other.index(root)
    scopes = [r.scope for r in trace_query(index, query, hierarchy_id).response.results]
    assert "inventory.pricing.apply_price_reduction" in scopes
