"""Comparing parameter sets: group diffs, flags, dual rankings, guarded saves."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hsc import Parameters
from hsc.explore.tuning import (
    SetExists,
    block_rows,
    compare_rankings,
    diff_plans,
    diff_sets,
    leaves_at_maximum,
    oversized_groups,
    save_set,
)
from hsc.hierarchy.groups import LeafTable, plan_hierarchy


def table_of(vectors: list[list[float]], files: list[int]) -> LeafTable:
    n = len(vectors)
    matrix = np.array(vectors, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return LeafTable(
        leaf_ids=np.arange(1, n + 1, dtype=np.int64),
        file_index=np.array(files, dtype=np.int32),
        paths=[f"f{i}.py" for i in range(max(files) + 1)],
        scopes=[f"s{i}" for i in range(n)],
        start_lines=np.arange(1, 10 * n, 10, dtype=np.int32),
        end_lines=np.arange(5, 10 * n, 10, dtype=np.int32),
        token_counts=np.array([50, 240, 30, 100, 90, 10, 255, 60][:n], dtype=np.int32),
        vectors=matrix,
    )


# Three topics in one file (x, y, z axes; leaves 0-2, 3-5, 6-7), sharpest change between 2 and 3.
TABLE = table_of(
    [
        [1, 0.1, 0],
        [1, 0.2, 0],
        [0.8, 0.6, 0],
        [0, 1, 0.3],
        [0, 1, 0.1],
        [0.1, 0.9, 0.6],
        [0, 0.1, 1],
        [0, 0, 1],
    ],
    [0] * 8,
)


def plan(threshold: float, window: int = 1, rule: str = "threshold"):
    params = Parameters(
        similarity_drop_threshold=threshold,
        smoothing_window_size=window,
        boundary_rule=rule,
        maximum_merged_chunk_token_length=300,
    )
    return plan_hierarchy(TABLE, params)


def test_identical_plans_are_unchanged_everywhere():
    diff = diff_plans(plan(0.5), plan(0.5))
    assert set(diff.kinds) == {"unchanged"} and diff.changed_leaves == 0
    assert diff.count("unchanged") == plan(0.5).group_count


def test_a_higher_threshold_splits_groups_and_a_lower_one_merges_them():
    coarse, fine = plan(0.0), plan(0.95)
    assert coarse.group_count < fine.group_count
    split = diff_plans(coarse, fine)
    assert split.count("split") >= 1 and split.count("merged") == 0 and split.count("moved") == 0
    merged = diff_plans(fine, coarse)
    assert merged.count("merged") == split.count("split")
    # Blocks tile the leaves, and each block's group counts add up to both totals.
    assert split.block_starts[0] == 0 and split.block_ends[-1] == len(TABLE)
    assert np.array_equal(split.block_starts[1:], split.block_ends[:-1])
    assert split.first_groups.sum() == coarse.group_count and split.second_groups.sum() == fine.group_count


def with_starts(starts: list[int]):
    """A plan of TABLE with these groups (the arrays a diff reads)."""
    group_starts = np.array(starts, dtype=np.int64)
    return dataclasses.replace(
        plan(0.5), group_starts=group_starts, group_ends=np.append(group_starts[1:], len(TABLE))
    )


def test_a_boundary_that_moves_is_told_apart_from_splits_and_merges():
    # Boundaries after leaf 2 in one plan, after leaf 3 in the other: neither nests in the other.
    diff = diff_plans(with_starts([0, 3, 6, 7]), with_starts([0, 4, 6, 7]))
    assert diff.kinds.tolist() == ["moved", "unchanged", "unchanged"]
    assert diff.changed_leaves == 6
    (row,) = block_rows(diff, TABLE, diff.changed_blocks())
    assert row == {
        "change": "moved",
        "path": "f0.py",
        "start_line": 1,
        "end_line": 55,
        "leaves": 6,
        "groups before": 2,
        "groups after": 2,
        "first_row": 0,
    }
    split = diff_plans(with_starts([0, 6]), with_starts([0, 2, 6, 7]))
    assert split.kinds.tolist() == ["split", "split"]


def test_plans_of_different_leaves_are_refused():
    other = table_of([[1, 0, 0], [0, 1, 0]], [0, 0])
    with pytest.raises(ValueError, match="same leaves"):
        diff_plans(plan(0.5), plan_hierarchy(other, Parameters()))


def test_oversized_groups_and_leaves_at_the_maximum_are_flagged():
    whole = plan(-1.0)  # one group of 835 tokens
    assert oversized_groups(whole).tolist() == [0]
    alone = plan(1.0)  # every leaf alone, each under 300
    assert alone.group_count == len(TABLE) and oversized_groups(alone).tolist() == []
    assert leaves_at_maximum(TABLE, 256).tolist() == [1, 6]  # 240 and 255 tokens: within 10% of 256


def test_saved_sets_are_diffed_and_a_query_runs_against_both(indexed_samples):
    index, root, _ = indexed_samples
    repository_id = index.repository_id(root / "inventory_py")
    default_id = index.default_hierarchy(repository_id)
    strict = save_set(
        index,
        repository_id,
        Parameters(
            similarity_drop_threshold=0.8, boundary_rule="threshold", mid_level_top_k=2, stage1_leaf_share=0.0
        ),
        "strict-tuning-test",
    )
    diff, first, second = diff_sets(index, default_id, int(strict["id"]))
    assert diff.first_group_count == first.group_count < diff.second_group_count == second.group_count
    assert diff.count("split") > 0 and diff.changed_leaves > 0

    ranking = compare_rankings(index, "take a percentage off a price", default_id, int(strict["id"]))
    # Stage 1 keeps at least mid_level_top_k groups (more when they hold under stage1_leaf_share).
    assert len(ranking.first.groups) >= Parameters().mid_level_top_k and len(ranking.second.groups) == 2
    assert ranking.first.leaves_compared > ranking.second.leaves_compared
    rows = ranking.rows()
    assert rows[0]["first"].startswith("inventory.pricing.apply_discount")
    assert 1 <= ranking.overlap <= len(ranking.first.results)
    assert all(q["text"] != "take a percentage off a price" for q in index.query_history(repository_id))

    # Saving over it asks first; "default" keeps the defaults.
    with pytest.raises(SetExists, match="exists already"):
        save_set(index, repository_id, Parameters(), "strict-tuning-test")
    replaced = save_set(index, repository_id, Parameters(), "strict-tuning-test", replace=True)
    assert replaced["group_count"] == diff.first_group_count
    with pytest.raises(ValueError, match="holds the default parameters"):
        save_set(index, repository_id, Parameters(similarity_drop_threshold=0.7), "default", replace=True)
    index.delete_hierarchy(int(replaced["id"]))


def test_the_first_default_set_is_built_from_the_defaults(tmp_path, embedder):
    from hsc.api import Index

    repository = tmp_path / "repo"
    repository.mkdir()
    (repository / "a.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        report = index.index(
            repository, Parameters(similarity_drop_threshold=0.9, minimum_chunk_token_length=4)
        )
        (default,) = index.hierarchies(report.repository_id)
        assert default["name"] == "default"
        assert default["parameters"]["similarity_drop_threshold"] == Parameters().similarity_drop_threshold
        assert default["parameters"]["minimum_chunk_token_length"] == 4  # the leaves were cut with this
