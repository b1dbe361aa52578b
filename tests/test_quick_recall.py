"""The Similarity page's quick Recall@10 (hsc.quality.quick): real index of the samples,
the real model; the docstring queries are a fixed sample and the hierarchy changes the score."""

from __future__ import annotations

import dataclasses

from hsc import Parameters
from hsc.quality.quick import docstring_queries, quick_recall


def test_quick_recall_scores_the_setting_against_flat_search(indexed_samples) -> None:
    index, root, reports = indexed_samples
    repository_id = reports["inventory_py"].repository_id
    queries = docstring_queries(index.store, repository_id)
    assert queries == docstring_queries(index.store, repository_id)  # the same sample every time
    assert len(queries) >= 10 and all(len(q.query.split()) >= 4 for q in queries)
    vectors = index.query_encoder(repository_id).embed([q.query for q in queries])
    shipped = Parameters()
    found = quick_recall(index.preview(repository_id, shipped), queries, vectors, shipped)
    assert found.queries == len(queries) and found.flat >= 0.8  # the docstrings are in the code
    assert found.two_stage <= found.flat
    # One group opened, no leaf share: stage 1 keeps out most answers that flat search finds.
    narrow = dataclasses.replace(shipped, mid_level_top_k=1, stage1_leaf_share=0.0)
    tight = quick_recall(index.preview(repository_id, narrow), queries, vectors, narrow)
    assert tight.flat == found.flat and tight.two_stage < found.two_stage
