"""Which backend runs an :class:`~hsc.embed.base.EncoderSpec`: the one place that
imports the backends, each on first use, so an ONNX run never loads torch."""

from __future__ import annotations

from pathlib import Path

from hsc.embed.base import Embedder, EncoderSpec


def make_embedder(spec: EncoderSpec, cache_dir: Path, device: str = "auto", processes: int = 1) -> Embedder:
    """The embedder for ``spec``; an ONNX backend exports the model into
    ``cache_dir`` the first time (hsc.embed.onnx_export), then loads it, and on
    the CPU with ``processes`` > 1 runs in that many worker processes."""
    if spec.backend == "torch":
        from hsc.embed.torch_backend import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(spec.model, device=device, window=spec.window)
    from hsc.embed.onnx_backend import PROVIDERS
    from hsc.embed.onnx_export import load_exported

    local = load_exported(spec, cache_dir, device=device)
    if processes < 2 or local.providers != [PROVIDERS["cpu"]]:
        return local
    from hsc.embed.pool import EncoderPool

    return EncoderPool(local, cache_dir, processes)
