"""What the app's charts and tables are given at scale (hsc.explore.views): pure functions, checked."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hsc.api import NodeView
from hsc.chunk.ingest import walk_repository
from hsc.explore.views import (
    file_rows,
    hierarchy_tree,
    keep_end,
    leaf_window,
    min_max_envelope,
    pair_at,
    pair_label,
    place_counts,
    survey_folder,
)

SAMPLE = Path(__file__).resolve().parent.parent / "hsc" / "samples" / "inventory_py"


def test_the_envelope_keeps_every_dip_of_a_long_series_in_few_points() -> None:
    values = np.full(20_000, 0.6)
    values[12_345] = -0.2  # one sharp valley
    values[::500] = np.nan  # file edges
    envelope = min_max_envelope(values, buckets=800)
    assert len(envelope.starts) == 800
    assert np.nanmin(envelope.low) == -0.2 and np.nanmax(envelope.high) == 0.6
    bucket = int(np.searchsorted(envelope.starts, 12_345, side="right")) - 1
    assert envelope.low[bucket] == -0.2


def test_windows_stay_inside_the_repository_and_files_are_contiguous_rows() -> None:
    assert leaf_window(1000, 900, 400) == (600, 1000)
    assert leaf_window(1000, -5, 400) == (0, 400)
    assert leaf_window(10, 3, 400) == (0, 10)

    class Table:
        file_index = np.array([0, 0, 1, 1, 1, 2])

    assert file_rows(Table(), 1) == (2, 5)  # type: ignore[arg-type]

    # A click on a chart of rows 100..500 at x = 3.5 is the pair (103, 104); off the pairs, nothing.
    assert pair_at(100, 500, 3.5) == 103
    assert pair_at(100, 500, 399.5) is None and pair_at(100, 500, "a") is None


def test_a_clicked_pair_is_labelled_with_the_chart_axis_positions_it_sits_between() -> None:
    # Issue 32: a window of rows 1975..2027 drew its leaves at 0..51 but labelled a pair "1975–1976".
    from hsc.explore.figures.similarity import similarity_curve

    start, end = 1975, 2027
    rng = np.random.default_rng(0)
    similarities = rng.uniform(0.1, 0.9, end - start - 1)
    view = similarity_curve(similarities, similarities, similarities < 0.2, 0.2, 1, "valley")
    low, high = view.figure.layout.xaxis.range
    (raw,) = [trace for trace in view.figure.data if trace.name == "raw similarity"]
    assert len(raw.x) == end - start - 1
    for x in raw.x:
        pair = pair_at(start, end, x)
        assert pair is not None and start <= pair < end - 1
        first, second = pair_label(pair, start)
        assert (first, second) == (x - 0.5, x + 0.5)  # the axis positions either side of the point
        assert low < first < second < high and second <= end - start - 1
    assert pair_label(pair_at(start, end, 0.5), start) == (0, 1)
    assert pair_label(pair_at(start, end, 50.5), start) == (50, 51)


def test_long_scopes_keep_their_informative_end() -> None:
    shown = keep_end("package.module.SomeClass.some_method", 20)
    assert len(shown) == 20 and shown.endswith("some_method") and shown.startswith("…")
    assert keep_end("short", 20) == "short"


def _node(
    node_id: str, level: str, path: str, tokens: int, parent: str | None, children: list[str]
) -> NodeView:
    return NodeView(node_id, level, path, "python", 1, 10, "scope", "group", tokens, parent, children)


def test_the_tree_has_a_folder_level_and_goes_only_as_deep_as_stays_legible() -> None:
    documents = [
        _node("top:1", "top", "src/pkg/a/one.py", 0, None, ["mid:1", "mid:2"]),
        _node("top:2", "top", "src/pkg/a/two.py", 0, None, ["mid:3"]),
        _node("top:3", "top", "src/pkg/b/three.py", 0, None, ["mid:4"]),
    ]
    groups = [
        _node("mid:1", "mid", "src/pkg/a/one.py", 30, "top:1", ["leaf:1", "leaf:2"]),
        _node("mid:2", "mid", "src/pkg/a/one.py", 20, "top:1", ["leaf:3"]),
        _node("mid:3", "mid", "src/pkg/a/two.py", 5, "top:2", ["leaf:4"]),
        _node("mid:4", "mid", "src/pkg/b/three.py", 7, "top:3", ["leaf:5"]),
    ]
    leaves = {f"leaf:{i}": (t, f"leaf {i}") for i, t in enumerate([0, 10, 20, 20, 5, 7])}
    whole = hierarchy_tree("repo", documents, groups, leaves)
    by_id = {n.id: n for n in whole.nodes}
    # "src/pkg" holds nothing but its two folders: it becomes the root instead of a ring of one.
    assert by_id["folder:src/pkg"].parent == "" and by_id["folder:src/pkg"].tokens == 62
    assert by_id["folder:src/pkg/a"].tokens == 55 and by_id["folder:src/pkg/a"].kind == "folder"
    assert by_id["top:1"].parent == "folder:src/pkg/a" and by_id["top:1"].tokens == 50
    assert whole.deepest == "leaf" and (whole.files, whole.groups, whole.leaves) == (3, 4, 5)

    # With room for fewer sectors, the groups and leaves are left for a drill-down.
    shallow = hierarchy_tree("repo", documents, groups, leaves, max_nodes=7)
    assert shallow.deepest == "file" and {n.kind for n in shallow.nodes} == {"folder", "file"}
    one_file = hierarchy_tree("repo", documents, groups, leaves, scope="src/pkg/a/one.py", max_nodes=7)
    assert one_file.deepest == "leaf" and [n.id for n in one_file.nodes if n.parent == ""] == ["top:1"]

    counts = place_counts([g.path for g in groups])
    assert counts["src/pkg/a"] == 3 and counts["src/pkg"] == 4 and counts["src/pkg/a/one.py"] == 2


def test_a_folder_is_counted_before_indexing_with_the_same_walk() -> None:
    survey = survey_folder(SAMPLE)
    assert survey.files == len(list(walk_repository(SAMPLE)))
    assert survey.bytes == sum((SAMPLE / p).stat().st_size for p in walk_repository(SAMPLE))
    assert survey.estimated_leaves > 0 and survey.estimated_seconds > 0
