"""Stage 2, embeddings: each leaf's scope-prefixed text is embedded in batches of
``embedding_batch_size``, L2-normalised and cached by content hash. One interface
(:mod:`hsc.embed.base`), backends behind it (ONNX Runtime fp32 or int8, torch),
made by name in :mod:`hsc.embed.factory`; the setting ``encoder_backend`` picks one.
"""

from typing import Any

from hsc.embed.base import (
    BACKEND_WINDOW,
    BACKENDS,
    DEFAULT_BACKEND,
    Embedder,
    EncoderSpec,
    OnBatch,
    embed_longest_first,
    encoder_cache_dir,
    longest_first,
    normalise,
    offline_if_local,
    resolve_model_path,
    resolve_spec,
    spec_for,
    spec_of,
)
from hsc.embed.factory import make_embedder

__all__ = [
    "BACKENDS",
    "BACKEND_WINDOW",
    "DEFAULT_BACKEND",
    "Embedder",
    "EncoderSpec",
    "OnBatch",
    "SentenceTransformerEmbedder",
    "embed_longest_first",
    "encoder_cache_dir",
    "longest_first",
    "make_embedder",
    "normalise",
    "offline_if_local",
    "resolve_model_path",
    "resolve_spec",
    "spec_for",
    "spec_of",
]


def __getattr__(name: str) -> Any:
    # The torch backend's class, imported on first use so an ONNX run never loads torch.
    if name == "SentenceTransformerEmbedder":
        from hsc.embed.torch_backend import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder
    raise AttributeError(f"module 'hsc.embed' has no attribute {name!r}")
