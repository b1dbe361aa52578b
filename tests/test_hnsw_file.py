"""The HNSW file over a hierarchy's groups belongs to one state of the
database: a hierarchy updated in place (same id, same number of groups) is
never searched with the graph of its older state, by a later process or by
another Index that had it loaded; on real SQLite files."""

from __future__ import annotations

import numpy as np

from hsc.api import Index
from hsc.bench.app import synthetic_leaf, write_synthetic_index
from hsc.bench.scale import SyntheticQueries
from hsc.hierarchy.summarize import DigestSummarizer
from hsc.index.pipeline import update_hierarchy
from hsc.model import FileReport
from hsc.params import Parameters

# Stage 1 opens one group: the query's leaf is found only if its group's vector is the current one.
NARROW = Parameters(mid_level_top_k=1, stage1_leaf_share=0.0)


def turn_a_file_around(index: Index) -> tuple[str, np.ndarray, np.ndarray]:
    """Rewrite the largest file with new leaves whose vectors are its old ones negated:
    adjacent similarities are unchanged, so the file's groups (and their number) stay,
    but every group of it now points the other way. (path, old vectors, new leaf ids)."""
    table = index.leaf_table()
    counts = np.bincount(table.file_index)
    file_number = int(np.argmax(counts))
    rows = np.flatnonzero(table.file_index == file_number)
    path = table.paths[file_number]
    old = np.array(table.vectors[rows])
    repository = index.repositories()[0]
    repository_id, model = int(repository["id"]), repository["embedding_model"]
    new_leaves = [
        synthetic_leaf(
            path, f"turned.f{i}", int(table.start_lines[row]), int(table.token_counts[row]), 90_000 + i
        )
        for i, row in enumerate(rows)
    ]
    index.store.save_vectors(model, {leaf.content_hash: -v for leaf, v in zip(new_leaves, old)})
    index.store.replace_file(repository_id, FileReport(path, "python", "indexed"), new_leaves, "k", model)
    new_ids = index.store.leaf_table(repository_id, model, [path]).leaf_ids
    return path, old, new_ids


def test_a_later_process_never_searches_the_graph_of_an_older_state(tmp_path):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=400)
    with Index.open(database) as index:
        hierarchy_id = index.default_hierarchy()
        assert index._load(hierarchy_id).retriever.mid_index.count  # builds and saves this state's graph
        groups_before = index.hierarchy(hierarchy_id)["group_count"]
    # An index run rewrites one file and updates the hierarchy in place, and is killed after
    # its commit, before it could remove the old HNSW file (what _update does next).
    with Index.open(database, summarizer=DigestSummarizer()) as index:
        path, old, new_ids = turn_a_file_around(index)
        repository_id = int(index.repositories()[0]["id"])
        model = index.repositories()[0]["embedding_model"]
        changed = index.store.leaf_table(repository_id, model, [path])
        params = index.hierarchy_parameters(hierarchy_id)
        update_hierarchy(index.store, hierarchy_id, repository_id, changed, [path], params, index.summarizer)
        assert index.hierarchy(hierarchy_id)["group_count"] == groups_before  # same id, same count
    graphs = tmp_path / "hnsw"
    (graphs / f"index-h{hierarchy_id}.bin").write_bytes(b"a graph named as before it had a stamp")
    queries = -old[[0, len(old) // 2, -1]]
    with Index.open(database, embedder=SyntheticQueries(model, queries)) as index:
        for _ in queries:
            response = index.query(
                "q", hierarchy_id=hierarchy_id, params=NARROW, record=False, mode="two-stage"
            )
            assert response.flat[0].leaf_id in {f"leaf:{i}" for i in new_ids}
            assert response.results[0].leaf_id == response.flat[0].leaf_id
    # Saving this state's graph removed the older state's and the unnamed one.
    assert len(list(graphs.glob(f"index-h{hierarchy_id}-hnsw-*.bin"))) == 1
    assert not (graphs / f"index-h{hierarchy_id}.bin").exists()


def test_an_index_that_had_the_hierarchy_loaded_sees_another_index_s_update(tmp_path):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=400)
    with Index.open(database) as index:
        model = index.repositories()[0]["embedding_model"]
        hierarchy_id = index.default_hierarchy()
        old_table = index.leaf_table()
        probe = np.array(old_table.vectors[:1])
    reader = Index.open(database, embedder=SyntheticQueries(model, probe))
    try:
        with Index.open(database, summarizer=DigestSummarizer()) as writer:
            reader.query(
                "q", hierarchy_id=hierarchy_id, params=NARROW, record=False, mode="two-stage"
            )  # loaded
            path, old, new_ids = turn_a_file_around(writer)
            row = writer.store.hierarchy(hierarchy_id)
            writer._update(dict(row), writer.hierarchy_parameters(hierarchy_id), [path], None)
        reader.use_embedder(SyntheticQueries(model, -old[:1]))  # the query: a turned leaf
        response = reader.query("q", hierarchy_id=hierarchy_id, params=NARROW, record=False, mode="two-stage")
        assert response.flat and response.flat[0].leaf_id == f"leaf:{new_ids[0]}"
        assert response.results[0].leaf_id == f"leaf:{new_ids[0]}"
    finally:
        reader.close()


def test_the_graph_is_made_only_when_stage_one_walks_it(tmp_path):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=400)
    with Index.open(database) as index:
        model = index.repositories()[0]["embedding_model"]
        probe = np.array(index.leaf_table().vectors[:3])
    graphs = tmp_path / "hnsw"
    with Index.open(database, embedder=SyntheticQueries(model, probe)) as index:
        hierarchy_id = index.default_hierarchy()
        # The shipped stage 1 (a tenth of the leaves) scores every group: no graph is needed.
        shipped = index.query("q", hierarchy_id=hierarchy_id, record=False, mode="two-stage")
        assert shipped.results and not list(graphs.glob("*-hnsw-*.bin"))
        # The seed's stage 1 (the five nearest groups) walks it: built once, saved for the next process.
        seed = Parameters(stage1_leaf_share=0.0)
        narrow = index.query("q", hierarchy_id=hierarchy_id, params=seed, record=False, mode="two-stage")
        assert narrow.results and len(list(graphs.glob("*-hnsw-*.bin"))) == 1
    with Index.open(database, embedder=SyntheticQueries(model, probe[2:])) as index:
        again = index.query("q", hierarchy_id=hierarchy_id, params=seed, record=False, mode="two-stage")
        assert [r.leaf_id for r in again.results] and len(list(graphs.glob("*-hnsw-*.bin"))) == 1
