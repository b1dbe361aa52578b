"""Stage 3: where does the topic change between adjacent leaves?

Pure numpy. Similarities are taken between neighbours in document order
*within* a file; a pair that straddles two files has no similarity (NaN) and
is always a boundary, so groups never cross files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hsc.params import BOUNDARY_RULES


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


def valley_boundaries(
    similarities: np.ndarray, smoothed: np.ndarray, threshold: float, window: int = 1
) -> np.ndarray:
    """One boundary per run of consecutive below-threshold pairs, at the
    lowest raw similarity that the run's averages saw.

    Smoothing spreads one sharp drop over its neighbours, so the plain rule
    cuts two or three times around a single topic change and leaves one-leaf
    groups behind; here the smoothed curve says *that* the topic changes and
    the raw one says *where*.
    """
    below = ~np.isnan(smoothed) & (smoothed < threshold)
    boundaries = np.isnan(smoothed).copy()
    if not below.any():
        return boundaries
    # A run ends at a file edge too, since edge pairs are never "below".
    edges = np.diff(np.concatenate(([0], below.astype(np.int8), [0])))
    run_starts, run_ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    # The dip that pulled an average down may lie up to half a window outside
    # the run, so look there too, but never across a file edge (NaN).
    before, after = (window - 1) // 2, window // 2
    for start, end in zip(run_starts.tolist(), run_ends.tolist()):
        lo, hi = start, end
        while lo > start - before and lo > 0 and not np.isnan(similarities[lo - 1]):
            lo -= 1
        while hi < end + after and hi < len(similarities) and not np.isnan(similarities[hi]):
            hi += 1
        boundaries[lo + int(np.argmin(similarities[lo:hi]))] = True
    return boundaries


def container_keys(scopes: list[str], file_index: np.ndarray) -> list[str | None]:
    """Per leaf, the top-level container of its file it lies in (None: the file's top level).

    A leaf's container is the first name of its scope below its file's (the shortest scope of the
    file, the module's) when that name holds other names in the file (``Class`` of
    ``Class.method``, and the class's header beside them). The chunker's scopes say this; nothing
    is parsed again.
    """
    n = len(scopes)
    keys: list[str | None] = [None] * n
    if n == 0:
        return keys
    starts = np.flatnonzero(np.diff(file_index, prepend=-1))
    ends = np.append(starts[1:], n)
    for start, end in zip(starts.tolist(), ends.tolist()):
        module = min(scopes[start:end], key=len)
        parts = [
            scope[len(module) + 1 :].split(".") if scope.startswith(module + ".") else []
            for scope in scopes[start:end]
        ]
        holders = {names[0] for names in parts if len(names) > 1}
        for offset, names in enumerate(parts):
            if names and names[0] in holders:
                keys[start + offset] = names[0]
    return keys


def container_edges(scopes: list[str], file_index: np.ndarray) -> np.ndarray:
    """Per adjacent pair, whether the two leaves lie in different top-level containers of one file
    (:func:`container_keys`); leaves of a file's top level outside any container share one run,
    which only valleys cut."""
    n = len(scopes)
    if n < 2:
        return np.zeros(max(n - 1, 0), dtype=bool)
    keys = container_keys(scopes, file_index)
    same_file = file_index[:-1] == file_index[1:]
    return np.array([keys[i] != keys[i + 1] for i in range(n - 1)], dtype=bool) & same_file


def segment(
    vectors: np.ndarray,
    file_index: np.ndarray,
    similarity_drop_threshold: float,
    smoothing_window_size: int,
    boundary_rule: str = "valley",
    scopes: list[str] | None = None,
) -> Segmentation:
    """Boundaries where the smoothed similarity falls below the threshold, and
    at every file edge.

    ``boundary_rule="threshold"`` is the seed's rule: every pair below the
    threshold is a boundary. ``"valley"`` (the default) keeps one boundary per
    below-threshold run, at its deepest point; see :func:`valley_boundaries`.
    ``"structure"``: the valleys, and the edges of top-level containers that
    :func:`container_edges` reads from the leaves' ``scopes`` (without them: the valleys).
    """
    similarities = adjacent_similarities(vectors, file_index)
    smoothed = smooth(similarities, smoothing_window_size)
    if boundary_rule == "threshold":
        boundaries = np.isnan(smoothed) | (smoothed < similarity_drop_threshold)
    elif boundary_rule in ("valley", "structure"):
        boundaries = valley_boundaries(
            similarities, smoothed, similarity_drop_threshold, smoothing_window_size
        )
        if boundary_rule == "structure" and scopes is not None:
            boundaries = boundaries | container_edges(scopes, file_index)
    else:
        raise ValueError(f"boundary_rule must be one of {BOUNDARY_RULES}, got {boundary_rule!r}")
    return Segmentation(similarities, smoothed, boundaries)
