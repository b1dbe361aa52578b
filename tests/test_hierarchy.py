import numpy as np
import pytest

from hsc.embed import normalise
from hsc.hierarchy.groups import LeafTable, mean_pool, plan_hierarchy
from hsc.params import Parameters


def synthetic_table(n: int = 300, files: int = 12, seed: int = 0) -> LeafTable:
    rng = np.random.default_rng(seed)
    topics = normalise(rng.normal(size=(6, 32)).astype(np.float32))
    # Runs of leaves share a topic, so real boundaries exist between runs.
    topic_of_leaf = np.repeat(rng.integers(0, 6, n // 5 + 1), 5)[:n]
    vectors = normalise(topics[topic_of_leaf] + 0.3 * rng.normal(size=(n, 32)).astype(np.float32))
    file_index = np.sort(rng.integers(0, files, n)).astype(np.int32)
    _, file_index = np.unique(file_index, return_inverse=True)
    starts = np.zeros(n, dtype=np.int32)
    for f in np.unique(file_index):
        rows = np.flatnonzero(file_index == f)
        starts[rows] = 1 + 10 * np.arange(len(rows))
    return LeafTable(
        leaf_ids=np.arange(100, 100 + n),
        file_index=file_index.astype(np.int32),
        paths=[f"pkg/file{i}.py" for i in range(file_index.max() + 1)],
        scopes=[f"s{i}" for i in range(n)],
        start_lines=starts,
        end_lines=starts + 8,
        token_counts=rng.integers(10, 200, n).astype(np.int32),
        vectors=vectors,
    )


@pytest.mark.parametrize("rule", ["valley", "threshold"])
@pytest.mark.parametrize("threshold,window", [(-1.0, 1), (0.5, 1), (0.7, 3), (1.0, 2), (0.3, 5)])
def test_every_leaf_in_exactly_one_contiguous_group_within_one_file(threshold, window, rule):
    table = synthetic_table()
    params = Parameters(similarity_drop_threshold=threshold, smoothing_window_size=window, boundary_rule=rule)
    plan = plan_hierarchy(table, params)
    owner = plan.group_of_leaf()
    assert len(owner) == len(table)
    assert (np.diff(owner) >= 0).all() and (np.diff(owner) <= 1).all()  # contiguous, in order
    for group in plan.groups():
        files = set(table.file_index[group.leaf_start : group.leaf_end].tolist())
        assert files == {group.file_index}
        assert group.start_line <= group.end_line
        assert group.token_count == int(table.token_counts[group.leaf_start : group.leaf_end].sum())
    for document in plan.documents():
        groups = plan.groups()[document.group_start : document.group_end]
        assert groups[0].leaf_start == document.leaf_start and groups[-1].leaf_end == document.leaf_end
        for group in groups:  # line ranges nest: leaf within group within document
            assert document.start_line <= group.start_line <= group.end_line <= document.end_line
            for row in range(group.leaf_start, group.leaf_end):
                assert group.start_line <= table.start_lines[row] <= table.end_lines[row] <= group.end_line
    assert plan.document_count == len(table.paths)


def test_extreme_thresholds():
    table = synthetic_table()
    one_group_per_file = plan_hierarchy(table, Parameters(similarity_drop_threshold=-1.0))
    assert one_group_per_file.group_count == len(table.paths)
    # The seed's rule cuts at every pair below the threshold; 1.0 is above every pair.
    one_group_per_leaf = plan_hierarchy(
        table, Parameters(similarity_drop_threshold=1.0, boundary_rule="threshold")
    )
    assert one_group_per_leaf.group_count == len(table)


def test_group_vectors_are_renormalised_means():
    table = synthetic_table()
    plan = plan_hierarchy(table, Parameters(similarity_drop_threshold=0.6))
    for ordinal in (0, plan.group_count // 2, plan.group_count - 1):
        group = plan.group(ordinal)
        mean = table.vectors[group.leaf_start : group.leaf_end].mean(axis=0)
        np.testing.assert_allclose(plan.group_vectors[ordinal], mean / np.linalg.norm(mean), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(plan.document_vectors, axis=1), 1.0, atol=1e-5)


def test_groups_over_the_merged_limit_need_a_summary():
    table = synthetic_table()
    plan = plan_hierarchy(
        table, Parameters(similarity_drop_threshold=0.3, maximum_merged_chunk_token_length=200)
    )
    assert plan.needs_summary.tolist() == [int(t) > 200 for t in plan.group_tokens]
    assert plan.needs_summary.any() and not plan.needs_summary.all()


def test_mean_pool_of_single_rows_is_the_rows():
    vectors = normalise(np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32))
    np.testing.assert_allclose(mean_pool(vectors, np.arange(5)), vectors, atol=1e-6)


def test_empty_table():
    empty = LeafTable(
        np.zeros(0, np.int64),
        np.zeros(0, np.int32),
        [],
        [],
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        np.zeros((0, 8), np.float32),
    )
    plan = plan_hierarchy(empty, Parameters())
    assert plan.group_count == 0 and plan.document_count == 0
