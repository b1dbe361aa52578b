import numpy as np
import pytest

from hsc.embed import normalise
from hsc.hierarchy.boundaries import adjacent_similarities, segment, smooth


def test_smooth_is_a_centred_mean_that_stops_at_file_edges():
    sims = np.array([1.0, 2.0, 3.0, np.nan, 4.0, 5.0, 6.0, 7.0, np.nan, 9.0])
    smoothed = smooth(sims, 3)
    np.testing.assert_allclose(smoothed[[0, 1, 2]], [1.5, 2.0, 2.5])
    np.testing.assert_allclose(smoothed[[4, 5, 6, 7]], [4.5, 5.0, 6.0, 6.5])
    assert np.isnan(smoothed[3]) and np.isnan(smoothed[8])
    assert smoothed[9] == 9.0


def test_window_of_one_leaves_values_alone():
    sims = np.array([0.1, 0.9, np.nan, 0.3])
    np.testing.assert_array_equal(np.isnan(smooth(sims, 1)), np.isnan(sims))
    np.testing.assert_allclose(smooth(sims, 1)[[0, 1, 3]], [0.1, 0.9, 0.3])


@pytest.mark.parametrize("window", [2, 3, 4, 7])
def test_smooth_matches_a_plain_loop(window):
    rng = np.random.default_rng(window)
    sims = rng.uniform(-1, 1, 40)
    sims[[5, 6, 20]] = np.nan
    expected = np.full_like(sims, np.nan)
    runs, start = [], 0
    for i in range(len(sims) + 1):
        if i == len(sims) or np.isnan(sims[i]):
            if i > start:
                runs.append((start, i))
            start = i + 1
    for a, b in runs:
        for i in range(a, b):
            lo, hi = max(a, i - (window - 1) // 2), min(b - 1, i + window // 2)
            expected[i] = sims[lo : hi + 1].mean()
    np.testing.assert_allclose(smooth(sims, window), expected)


def test_similarities_are_nan_across_files_and_boundaries_fall_there():
    vectors = normalise(np.array([[1, 0], [1, 0.1], [0, 1], [0.1, 1]], dtype=np.float32))
    file_index = np.array([0, 0, 1, 1])
    sims = adjacent_similarities(vectors, file_index)
    assert np.isnan(sims[1]) and sims[0] > 0.99
    seg = segment(vectors, file_index, similarity_drop_threshold=0.5, smoothing_window_size=1)
    assert seg.boundaries.tolist() == [False, True, False]
    assert seg.topic_boundary_count == 0


def test_a_drop_below_the_threshold_is_a_boundary():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    vectors = normalise(np.stack([a, a, a, b, b, b]).astype(np.float32))
    seg = segment(vectors, np.zeros(6, dtype=int), similarity_drop_threshold=0.5, smoothing_window_size=1)
    assert seg.boundaries.tolist() == [False, False, True, False, False]
    assert seg.topic_boundary_count == 1


def test_valley_rule_cuts_once_where_smoothing_spreads_one_drop():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    vectors = normalise(np.stack([a, a, a, a, b, b, b, b]).astype(np.float32))
    file_index = np.zeros(8, dtype=int)
    seed_rule = segment(vectors, file_index, 0.8, 3, boundary_rule="threshold")
    valley = segment(vectors, file_index, 0.8, 3, boundary_rule="valley")
    assert np.flatnonzero(seed_rule.boundaries).tolist() == [2, 3, 4]  # the drop, smeared
    assert np.flatnonzero(valley.boundaries).tolist() == [3]  # exactly where the topic changes


def test_valley_rule_keeps_one_cut_per_run_and_all_file_edges():
    sims_vectors = normalise(np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 0], [1, 0]], dtype=np.float32))
    file_index = np.array([0, 0, 0, 1, 1, 1])
    seg = segment(sims_vectors, file_index, 0.5, 1, boundary_rule="valley")
    assert np.flatnonzero(seg.boundaries).tolist() == [1, 2, 3]  # topic, file edge, topic
    with pytest.raises(ValueError):
        segment(sims_vectors, file_index, 0.5, 1, boundary_rule="nope")


def test_valley_rule_finds_a_dip_just_outside_the_run_it_pulled_down():
    from hsc.hierarchy.boundaries import valley_boundaries

    sims = np.array([0.9, 0.9, 0.9, 0.2, 0.95, 0.95, 0.95])
    smoothed = np.array([0.9, 0.9, 0.9, 0.9, 0.4, 0.9, 0.9])  # as if a wide window had shifted it
    boundaries = valley_boundaries(sims, smoothed, 0.5, window=3)
    assert np.flatnonzero(boundaries).tolist() == [3]
