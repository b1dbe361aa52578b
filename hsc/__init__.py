"""hsc: Hierarchical Semantic Chunking for code.

Leaves from the AST, embeddings, topic boundaries, a three-level hierarchy,
and two-stage retrieval over it. Start with :class:`hsc.Index`.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# Names are imported on first use, so `import hsc.hierarchy.boundaries` stays light.
_EXPORTS = {
    "Index": "hsc.api",
    "ContextPack": "hsc.search.context",
    "ContextSpan": "hsc.search.context",
    "GroupResult": "hsc.api",
    "NodeView": "hsc.api",
    "QueryResponse": "hsc.api",
    "QueryResult": "hsc.api",
    "Parameters": "hsc.params",
    "Settings": "hsc.params",
    "IndexReport": "hsc.index.pipeline",
    "Progress": "hsc.index.pipeline",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'hsc' has no attribute {name!r}")
