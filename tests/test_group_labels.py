"""A query describes the groups it opened from labels stored with them, as
their leaves describe them; a database from before the labels is read the
old way; on real SQLite files."""

from __future__ import annotations

import numpy as np
from test_hnsw_file import turn_a_file_around

from hsc.api import Index
from hsc.bench.app import write_synthetic_index
from hsc.bench.scale import SyntheticQueries, _query_vectors
from hsc.hierarchy.summarize import DigestSummarizer
from hsc.params import Parameters
from hsc.search import searching

WIDE = Parameters(stage1_leaf_share=0.3)  # stage 1 opens many groups


def described_from_leaves(index: Index, node_id: str) -> tuple:
    view = index.node(node_id)
    return (view.path, view.start_line, view.end_line, view.scope, len(view.children), view.summary)


def shown(group) -> tuple:
    return (group.path, group.start_line, group.end_line, group.scope, group.leaf_count, group.summary)


def scoped_groups(index: Index) -> int:
    return int(index.store.conn.execute("SELECT COUNT(*) FROM group_scopes").fetchone()[0])


def test_opened_groups_are_shown_as_their_leaves_describe_them_before_and_after_an_update(tmp_path):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=500)
    with Index.open(database, summarizer=DigestSummarizer()) as index:
        hierarchy_id = index.default_hierarchy()
        assert scoped_groups(index) == index.hierarchy(hierarchy_id)["group_count"]
        path, _, _ = turn_a_file_around(index)  # one file rewritten, its groups replaced in place
        index._update(
            dict(index.store.hierarchy(hierarchy_id)), index.hierarchy_parameters(hierarchy_id), [path], None
        )
        assert scoped_groups(index) == index.hierarchy(hierarchy_id)["group_count"]
        model = index.repositories()[0]["embedding_model"]
        queries = _query_vectors(np.asarray(index.leaf_table().vectors), 6)
    with Index.open(database, embedder=SyntheticQueries(model, np.vstack([queries, queries]))) as index:
        labelled = [index.query("q", params=WIDE, record=False, mode="two-stage") for _ in queries]
        assert sum(len(response.groups) for response in labelled) > 60
        for response in labelled:
            for group in response.groups:
                assert shown(group) == described_from_leaves(index, group.node_id)
        # A database whose groups were made before their scopes were stored.
        index.store.conn.execute("DELETE FROM group_scopes")
        index.store.conn.commit()
        for before in labelled:
            again = index.query("q", params=WIDE, record=False, mode="two-stage")
            assert [(g.node_id, g.score, shown(g)) for g in again.groups] == [
                (g.node_id, g.score, shown(g)) for g in before.groups
            ]


def test_a_wide_stage_one_describes_its_best_groups_and_those_holding_a_result(tmp_path, monkeypatch):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=500)
    monkeypatch.setattr(searching, "GROUPS_DESCRIBED", 4)
    with Index.open(database) as index:
        model = index.repositories()[0]["embedding_model"]
        queries = _query_vectors(np.asarray(index.leaf_table().vectors), 3)
    with Index.open(database, embedder=SyntheticQueries(model, queries)) as index:
        for _ in queries:
            response = index.query("q", params=WIDE, mode="two-stage", compare=False)
            opened = response.opened_group_ids
            assert len(opened) > 4 + len(response.results)  # more than could all be described
            holding = {result.parent_id for result in response.results}
            assert {g.node_id for g in response.groups} == set(opened[:4]) | holding
            ranks = [g.rank for g in response.groups]  # each its place among all opened groups
            assert ranks == sorted(opened.index(g.node_id) + 1 for g in response.groups)
            assert response.groups_shown().startswith(f"{len(response.groups)} of the {len(opened)} groups")
            saved = index.store.conn.execute(
                "SELECT COUNT(*) FROM query_results WHERE query_id = ? AND stage = 'mid'",
                (response.query_id,),
            ).fetchone()[0]
            assert saved == len(response.groups)  # the history keeps what was shown
