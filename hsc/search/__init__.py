"""Stage 5, two-stage retrieval: stage 1 ranks the mid-level groups with HNSW and keeps
``mid_level_top_k`` (widened to ``stage1_leaf_share`` of the leaves), stage 2 re-ranks
only their leaves to ``leaf_level_top_k``, each result with its parent group
(:mod:`~hsc.search.two_stage`); ``retrieval_mode`` picks it, flat search, or either fused
with BM25 (:mod:`~hsc.search.lexical`). :mod:`~hsc.search.searching` is the query half of
:class:`hsc.Index`.
"""
