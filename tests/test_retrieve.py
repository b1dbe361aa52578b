import numpy as np

from hsc.embed import normalise
from hsc.hierarchy.groups import mean_pool
from hsc.search.two_stage import GroupHit, GroupHits, MidLevelIndex, TwoStageRetriever, flat_search, top_k


def clustered(n_groups: int = 200, per_group: int = 6, dim: int = 48, seed: int = 3):
    rng = np.random.default_rng(seed)
    centres = normalise(rng.normal(size=(n_groups, dim)).astype(np.float32))
    vectors = normalise(
        np.repeat(centres, per_group, axis=0) + 0.25 * rng.normal(size=(n_groups * per_group, dim))
    )
    starts = np.arange(0, n_groups * per_group, per_group)
    ends = starts + per_group
    return vectors.astype(np.float32), starts, ends


def test_top_k_orders_by_score_then_index():
    scores = np.array([0.1, 0.9, 0.5, 0.9, 0.2])
    assert top_k(scores, 3).tolist() == [1, 3, 2]
    assert top_k(scores, 10).tolist() == [1, 3, 2, 4, 0]
    assert top_k(scores, 0).tolist() == []


def test_two_stage_compares_only_the_selected_groups_leaves():
    vectors, starts, ends = clustered()
    retriever = TwoStageRetriever(vectors, starts, ends, MidLevelIndex.build(mean_pool(vectors, starts)))
    query = vectors[601]
    result = retriever.search(query, mid_level_top_k=4, leaf_level_top_k=5)
    assert result.leaves_compared == 4 * 6
    assert result.leaves[0].row == 601 and abs(result.leaves[0].score - 1.0) < 1e-5
    selected = {g.ordinal for g in result.groups}
    assert all(hit.group in selected for hit in result.leaves)
    assert [h.score for h in result.leaves] == sorted((h.score for h in result.leaves), reverse=True)
    parent_scores = {g.ordinal: g.score for g in result.groups}
    assert all(abs(hit.group_score - parent_scores[hit.group]) < 1e-6 for hit in result.leaves)


def test_two_stage_agrees_with_flat_on_clustered_data():
    vectors, starts, ends = clustered()
    retriever = TwoStageRetriever(vectors, starts, ends, MidLevelIndex.build(mean_pool(vectors, starts)))
    rng = np.random.default_rng(0)
    agree = 0
    for row in rng.integers(0, len(vectors), 50):
        query = normalise(vectors[row] + 0.1 * rng.normal(size=vectors.shape[1]).astype(np.float32))
        staged = retriever.search(query, 3, 1).leaves[0].row
        exact = flat_search(vectors, query, 1).leaves[0].row
        agree += staged == exact
    assert agree >= 48


def test_the_same_group_vectors_always_build_the_same_graph(tmp_path):
    vectors, starts, _ = clustered(n_groups=300)
    groups = mean_pool(vectors, starts)
    for name in ("first.bin", "second.bin"):
        MidLevelIndex.build(groups).save(tmp_path / name)
    assert (tmp_path / "first.bin").read_bytes() == (tmp_path / "second.bin").read_bytes()


def test_hnsw_index_round_trips_through_a_file(tmp_path):
    vectors, starts, _ = clustered(n_groups=50)
    groups = mean_pool(vectors, starts)
    built = MidLevelIndex.build(groups)
    path = tmp_path / "mid.bin"
    built.save(path)
    loaded = MidLevelIndex.load(path, groups.shape[1], len(groups))
    assert loaded is not None
    assert [h.ordinal for h in loaded.search(groups[7], 3)] == [h.ordinal for h in built.search(groups[7], 3)]
    assert MidLevelIndex.load(path, groups.shape[1], len(groups) + 1) is None  # stale: rebuilt by the caller
    assert MidLevelIndex.load(tmp_path / "missing.bin", groups.shape[1], 1) is None


def test_k_larger_than_the_index_is_clamped():
    vectors, starts, ends = clustered(n_groups=3, per_group=2)
    retriever = TwoStageRetriever(vectors, starts, ends, MidLevelIndex.build(mean_pool(vectors, starts)))
    result = retriever.search(vectors[0], mid_level_top_k=10, leaf_level_top_k=50)
    assert len(result.groups) == 3 and len(result.leaves) == 6


def test_a_widened_stage_one_scores_every_group_exactly(monkeypatch):
    vectors, starts, ends = clustered(n_groups=400, per_group=5)
    groups = mean_pool(vectors, starts)
    retriever = TwoStageRetriever(vectors, starts, ends, MidLevelIndex.build(groups))
    rng = np.random.default_rng(3)
    budget = 200  # 40 groups of 400: above the exact share, so no HNSW walk
    walk = retriever.mid_index.search

    def no_walk(*args):
        raise AssertionError("stage 1 walked the HNSW graph for a widened request")

    for row in rng.integers(0, len(vectors), 20):
        query = normalise(vectors[row] + 0.2 * rng.normal(size=vectors.shape[1]).astype(np.float32))
        monkeypatch.setattr(retriever.mid_index, "search", no_walk)
        chosen = retriever.stage_one(query, mid_level_top_k=5, leaf_budget=budget)
        monkeypatch.setattr(retriever.mid_index, "search", walk)
        order = np.argsort(-(groups @ query), kind="stable")
        assert [g.ordinal for g in chosen] == order[: budget // 5].tolist()
        assert np.allclose([g.score for g in chosen], (groups @ query)[order[: budget // 5]], atol=1e-6)
        # HNSW asked for the same share (it is exact at this size) names the same groups.
        monkeypatch.setattr("hsc.search.two_stage.EXACT_STAGE1_SHARE", 1.0)
        walked = retriever.stage_one(query, mid_level_top_k=5, leaf_budget=budget)
        monkeypatch.setattr("hsc.search.two_stage.EXACT_STAGE1_SHARE", 0.02)
        assert {g.ordinal for g in walked} == {g.ordinal for g in chosen}


def test_stage_two_scores_in_blocks_as_one_product_would(monkeypatch):
    # Groups of uneven sizes; a budget wide enough that stage 2 gathers many blocks, the last one short.
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 9, 300)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    vectors = normalise(rng.normal(size=(int(sizes.sum()), 32)).astype(np.float32))
    retriever = TwoStageRetriever(
        vectors, starts, starts + sizes, MidLevelIndex.build(mean_pool(vectors, starts))
    )
    monkeypatch.setattr("hsc.search.two_stage.ROWS_PER_BLOCK", 7)
    for row in rng.integers(0, len(vectors), 10):
        query = vectors[row]
        staged = retriever.search(query, mid_level_top_k=5, leaf_level_top_k=20, leaf_budget=400)
        assert staged.leaves_compared >= 400 and staged.leaves_compared % 7  # several blocks, one short
        opened = np.concatenate([np.arange(starts[g], starts[g] + sizes[g]) for g in staged.groups.ordinals])
        assert staged.leaves_compared == len(opened)
        expected = top_k(vectors[opened] @ query, 20)
        assert [hit.row for hit in staged.leaves] == opened[expected].tolist()
        assert np.allclose(
            [hit.score for hit in staged.leaves], (vectors[opened] @ query)[expected], atol=1e-6
        )
        owner = np.searchsorted(starts, [hit.row for hit in staged.leaves], side="right") - 1
        assert [hit.group for hit in staged.leaves] == owner.tolist()
        assert staged.leaves[0].row == row


def test_group_hits_read_as_a_sequence_of_hits():
    hits = GroupHits(np.array([4, 1, 9], dtype=np.int64), np.array([0.9, 0.5, 0.25], dtype=np.float32))
    assert len(hits) == 3 and hits[1] == GroupHit(1, 0.5)
    assert list(hits) == [GroupHit(4, float(np.float32(0.9))), GroupHit(1, 0.5), GroupHit(9, 0.25)]
    assert all(type(hit.ordinal) is int and type(hit.score) is float for hit in [*hits, hits[0]])
    assert list(hits.first(2)) == list(hits)[:2] and not GroupHits()


def test_lexical_candidates_join_stage_two_and_their_scores_fuse():
    vectors, starts, ends = clustered()
    retriever = TwoStageRetriever(vectors, starts, ends, MidLevelIndex.build(mean_pool(vectors, starts)))
    query = vectors[601]
    opened_rows = {
        int(row) for g in retriever.stage_one(query, 4) for row in range(starts[g.ordinal], ends[g.ordinal])
    }
    outside = [row for row in (5, 77, 1100) if row not in opened_rows]
    inside = sorted(opened_rows)[:2]
    lexical = {outside[0]: 9.0, outside[1]: 3.0, inside[0]: 6.0, inside[1]: 1.5}
    staged = retriever.search(query, 4, 30, lexical=lexical, lexical_weight=0.5)
    candidates = sorted(opened_rows | set(lexical))
    assert staged.leaves_compared == len(candidates)
    fused = vectors[candidates] @ query + 0.5 * np.array([lexical.get(r, 0.0) for r in candidates]) / 9.0
    expected = [candidates[i] for i in np.argsort(-fused, kind="stable")[:30]]
    assert sorted(hit.row for hit in staged.leaves) == sorted(expected)
    by_row = {hit.row: hit.score for hit in staged.leaves}
    assert all(
        abs(by_row[candidates[i]] - fused[i]) < 1e-5
        for i in range(len(candidates))
        if candidates[i] in by_row
    )
    assert outside[0] in by_row  # a leaf only BM25 found, lifted by its score
