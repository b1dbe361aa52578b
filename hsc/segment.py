"""Stage 3: where does the topic change between adjacent leaves?

Pure numpy. Similarities are taken between neighbours in document order
*within* a file; a pair that straddles two files has no similarity (NaN) and
is always a boundary, so groups never cross files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Segmentation:
    """Per adjacent pair ``(i, i + 1)`` of leaves, ``n - 1`` entries each."""

    similarities: np.ndarray  # raw cosine similarity; NaN across files
    smoothed: np.ndarray  # moving average within each file; NaN across files
    boundaries: np.ndarray  # bool: a group ends after leaf i

    @property
    def topic_boundary_count(self) -> int:
        """Boundaries that came from a similarity drop, not from a file edge."""
        return int(np.count_nonzero(self.boundaries & ~np.isnan(self.similarities)))


def adjacent_similarities(vectors: np.ndarray, file_index: np.ndarray) -> np.ndarray:
    """Cosine similarity of each leaf with the next; vectors are L2-normalised,
    so the dot product is the cosine."""
    if len(vectors) < 2:
        return np.zeros(0, dtype=np.float64)
    sims = np.einsum("ij,ij->i", vectors[:-1], vectors[1:]).astype(np.float64)
    sims[file_index[:-1] != file_index[1:]] = np.nan
    return sims


def smooth(similarities: np.ndarray, window: int) -> np.ndarray:
    """Centred moving average of width ``window`` that never reaches across a
    NaN (a file edge); near an edge the window shrinks instead of padding.

    Centred rather than trailing so that a valley stays where the topic changes.
    """
    if window <= 1 or len(similarities) == 0:
        return similarities.copy()
    n = len(similarities)
    valid = ~np.isnan(similarities)
    # Each run of valid entries is one file; find every position's run limits.
    run_id = np.cumsum(~valid)  # increments at each NaN, constant inside a run
    positions = np.arange(n)
    change = np.flatnonzero(np.diff(run_id)) + 1  # first index of each new run id
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change - 1, [n - 1]))
    lengths = ends - starts + 1
    run_start = np.repeat(starts, lengths)
    run_end = np.repeat(ends, lengths)
    before, after = (window - 1) // 2, window // 2
    lo = np.maximum(run_start, positions - before)
    hi = np.minimum(run_end, positions + after)
    values = np.where(valid, similarities, 0.0)
    cumulative = np.concatenate(([0.0], np.cumsum(values)))
    counts = np.concatenate(([0], np.cumsum(valid)))
    total = cumulative[hi + 1] - cumulative[lo]
    count = counts[hi + 1] - counts[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        smoothed = total / count
    smoothed[~valid] = np.nan
    return smoothed


def segment(
    vectors: np.ndarray, file_index: np.ndarray, similarity_drop_threshold: float, smoothing_window_size: int
) -> Segmentation:
    """Boundary wherever the smoothed similarity falls below the threshold,
    and at every file edge."""
    similarities = adjacent_similarities(vectors, file_index)
    smoothed = smooth(similarities, smoothing_window_size)
    boundaries = np.isnan(smoothed) | (smoothed < similarity_drop_threshold)
    return Segmentation(similarities, smoothed, boundaries)
