"""Stages 3 and 4, boundaries and hierarchy: the cosine similarity of adjacent leaves,
smoothed over ``smoothing_window_size``, marks a boundary where it drops below
``similarity_drop_threshold`` (:mod:`~hsc.hierarchy.boundaries`); the leaves between
boundaries form mid-level groups with mean-pooled vectors, and one document node per
file (:mod:`~hsc.hierarchy.groups`); groups over ``maximum_merged_chunk_token_length``
get a summary (:mod:`~hsc.hierarchy.summarize`).
"""

from hsc.hierarchy.boundaries import Segmentation, segment
from hsc.hierarchy.groups import DocumentNode, HierarchyPlan, LeafTable, MidGroup, mean_pool, plan_hierarchy

__all__ = [
    "DocumentNode",
    "HierarchyPlan",
    "LeafTable",
    "MidGroup",
    "Segmentation",
    "mean_pool",
    "plan_hierarchy",
    "segment",
]
