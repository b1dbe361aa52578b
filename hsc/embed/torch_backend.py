"""The ``torch`` backend: sentence-transformers on PyTorch (the seed's encoder).

Imported only when this backend is used: importing torch and
sentence-transformers takes seconds, which a cold query on an ONNX backend
never pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hsc.embed.base import EncoderSpec, OnBatch, embed_longest_first, offline_if_local, resolve_model_path
from hsc.embed.tuned import runnable_model
from hsc.params import DEFAULT_MODEL

# The lean install has neither: what to do instead, in one line.
_NEEDS_TORCH = (
    "the torch encoder backend needs sentence-transformers and torch: pip install 'hsc[torch]' "
    "({error}); the default backend, onnx-int8, runs without them"
)


def torch_device(device: str) -> str:
    """``auto``: CUDA, else Apple's MPS, else the CPU, whichever torch sees."""
    if device != "auto":
        return device
    try:
        import torch
    except ImportError as error:
        raise RuntimeError(_NEEDS_TORCH.format(error=error)) from None

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else "cpu"


def load_sentence_transformer(name: str, device: str = "cpu") -> Any:
    path = resolve_model_path(name)
    offline_if_local(path)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise RuntimeError(_NEEDS_TORCH.format(error=error)) from None

    try:
        return SentenceTransformer(path, device=device)
    except Exception as error:
        raise RuntimeError(
            f"could not load embedding model {name!r}: {error}. A model that is not on this "
            "machine must be downloaded once with network access, or given as a local folder."
        ) from error


class SentenceTransformerEmbedder:
    """A sentence-transformers model; ``window`` caps the word pieces read per
    text (None: the model's own ``max_seq_length``)."""

    def __init__(self, name: str = DEFAULT_MODEL, device: str = "auto", window: int | None = None) -> None:
        self.device = torch_device(device)
        name = runnable_model(name, "torch")
        self._model = load_sentence_transformer(name, self.device)
        self.name = name
        self.spec = EncoderSpec(name, "torch", window)
        # Renamed in sentence-transformers 6; keep working with older releases too.
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dimension = int(dimension())
        if window:
            self._model.max_seq_length = min(window, int(self._model.max_seq_length))
        self.max_seq_length = int(self._model.max_seq_length)

    def embed(
        self, texts: Sequence[str], batch_size: int = 32, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        """Embed in batches of ``batch_size``, longest first; rows in the given order."""

        def encode(batch: list[str]) -> np.ndarray:
            return self._model.encode(batch, batch_size=batch_size, show_progress_bar=False)

        return embed_longest_first(encode, texts, self.dimension, batch_size, on_batch)
