"""The one-off export behind the ONNX backends, written once per model and
backend into the encoder cache, and for ``onnx-int8`` quantised with ONNX
Runtime's ``quantize_dynamic``.

Two ways to write the fp32 graph:

- a BERT sentence encoder in a local folder (the default model is one) is
  written from its weights by :mod:`hsc.embed.onnx_build`: numpy, onnx and
  safetensors, no torch, so the lean install runs the default encoder;
- any other model is exported from sentence-transformers with
  ``torch.onnx.export`` (the ``torch`` extra), and checked against torch
  before it is kept (fp32: cosine >= 0.9999 on texts of several lengths).

The int8 file is checked against the fp32 vectors it came from (mean cosine
>= 0.95). No download and no extra package: ``sentence-transformers[onnx]``
needs optimum, whose pins do not fit hsc's transformers. Files are written
under a temporary name and renamed, so a killed export never leaves a half
file behind.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed.base import EncoderSpec, resolve_model_path
from hsc.embed.onnx_backend import OnnxEmbedder
from hsc.embed.onnx_build import BertFolder, build_graph, read_folder, unbuildable
from hsc.embed.tuned import ENCODER_FILE, tuned_folder, tuned_meta

# Texts of several lengths, padded together, to check an export against its reference.
_CHECK_TEXTS = [
    "def add(a, b):\n    return a + b",
    "class Cache:\n    '''A least-recently-used cache.'''\n" + "    def get(self, key):\n        pass\n" * 20,
    "x",
    "import os\n" + "value = os.environ.get('HOME', '/')  # where to start\n" * 60,
]


# Part of every export's file name: a change to how exports are made makes new files.
EXPORT_VERSION = 1
# The same for the graph that hsc.embed.onnx_build writes, under names of its own: its
# int8 vectors are not bit for bit those of torch's int8 export (mean cosine 0.998).
GRAPH_VERSION = 1
_TORCH_MADE, _GRAPH_MADE = f"v{EXPORT_VERSION}", f"graph-v{GRAPH_VERSION}"
# A tuned build stores its int8 weights in 7 bits (``reduce_range``), as ONNX Runtime's
# quantisation notes advise where its x86 kernels' 16-bit sums of uint8 x int8 products may
# saturate. For the tuned encoder the 8-bit file lost 0.011 Recall@10 to fp32 in hybrid search,
# the 7-bit one 0.005, at the same speed and size (unsigned weights: 0.004, but 1.5x slower).
# Exports of base models keep 8 bits, so the vectors cached for them stay comparable with new
# ones (README, Encoders).
REDUCE_RANGE_TUNED = True


def buildable_reason(spec: EncoderSpec) -> str | None:
    """Why ``spec``'s graph cannot be written without torch (None: it can)."""
    return unbuildable(Path(resolve_model_path(spec.model)))


def buildable(spec: EncoderSpec) -> BertFolder | None:
    """``spec``'s model folder when :mod:`hsc.embed.onnx_build` can write its graph."""
    if buildable_reason(spec) is not None:
        return None
    return read_folder(Path(resolve_model_path(spec.model)))


def export_files(spec: EncoderSpec, cache_dir: Path) -> tuple[Path, Path]:
    """(model file, metadata file) of ``spec``'s export, keyed by model and backend:
    an export torch wrote into ``cache_dir`` before stays in use (the vectors made
    with it stay comparable with new ones), else the built graph where the model
    is one :mod:`hsc.embed.onnx_build` knows, else torch's export."""
    torch_made = _files(spec, cache_dir, _TORCH_MADE)
    if torch_made[1].exists() or buildable_reason(spec) is not None:
        return torch_made
    return _files(spec, cache_dir, _GRAPH_MADE)


def _files(spec: EncoderSpec, cache_dir: Path, made: str) -> tuple[Path, Path]:
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", spec.model)[-48:]
    digest = hashlib.sha1(spec.model.encode()).hexdigest()[:8]
    stem = f"{readable}-{digest}-{spec.backend}-{made}"
    return cache_dir / f"{stem}.onnx", cache_dir / f"{stem}.json"


class _LastHiddenState:
    """Wraps the transformer so the export takes keyword inputs and returns one tensor."""

    @staticmethod
    def make(transformer: Any, input_names: list[str]) -> Any:
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = transformer

            def forward(self, *inputs: Any) -> Any:
                return self.inner(**dict(zip(input_names, inputs))).last_hidden_state

        return Wrapped().eval()


def _check_model(model: Any) -> None:
    kinds = [type(module).__name__ for module in model]
    pooling = getattr(model[1], "pooling_mode", None) if len(kinds) > 1 else None
    if kinds[:2] != ["Transformer", "Pooling"] or pooling not in ("mean", None):
        raise RuntimeError(
            f"the ONNX backends run mean-pooled transformer models; this one is {kinds} "
            f"(pooling {pooling!r}): use embedding_backend=torch"
        )
    if pooling is None and not getattr(model[1], "pooling_mode_mean_tokens", False):
        raise RuntimeError("the ONNX backends run mean-pooled models only: use embedding_backend=torch")


def export(spec: EncoderSpec, cache_dir: Path, reduce_range: bool = False) -> tuple[Path, Path]:
    """Write ``spec``'s ONNX file and metadata into ``cache_dir``; return their paths.
    ``reduce_range``: ``onnx-int8`` weights in 7 bits (see :data:`REDUCE_RANGE_TUNED`)."""
    # The tracer's and the quantiser's advice is about other models; the self-check decides.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            bert = buildable(spec)
            if bert:
                return _build(spec, cache_dir, bert, reduce_range)
            return export_with_torch(spec, cache_dir, reduce_range)
        finally:
            logging.disable(logging.NOTSET)


def _build(spec: EncoderSpec, cache_dir: Path, bert: BertFolder, reduce_range: bool) -> tuple[Path, Path]:
    """The graph written from the weights (no torch); int8 is checked against it."""
    import onnx

    cache_dir.mkdir(parents=True, exist_ok=True)
    meta = {"model": spec.model, "backend": spec.backend, "made_by": "onnx.helper", **bert.meta()}
    with tempfile.TemporaryDirectory(dir=cache_dir) as scratch:
        fp32 = Path(scratch) / "model.onnx"
        onnx.save(build_graph(bert), str(fp32))
        tokenizer_file = Path(scratch) / "tokenizer.json"
        shutil.copyfile(bert.tokenizer_file, tokenizer_file)
        reference = None
        if spec.backend == "onnx-int8":
            full = OnnxEmbedder(replace(spec, window=None), fp32, tokenizer_file, meta, "cpu")
            reference = full.embed(_CHECK_TEXTS, batch_size=4)
        files = _files(spec, cache_dir, _GRAPH_MADE)
        return _keep(spec, files, fp32, tokenizer_file, meta, reference, reduce_range)


def export_with_torch(spec: EncoderSpec, cache_dir: Path, reduce_range: bool = False) -> tuple[Path, Path]:
    """``torch.onnx.export`` of the sentence-transformers model, checked against torch."""
    try:
        import torch

        from hsc.embed.torch_backend import load_sentence_transformer
    except ImportError as error:
        raise RuntimeError(
            f"the ONNX backends write the graph of {spec.model} without torch only for BERT "
            f"sentence encoders ({buildable_reason(spec)}); exporting it needs torch: "
            f"pip install 'hsc[torch]' ({error})"
        ) from None

    model = load_sentence_transformer(spec.model, "cpu")
    _check_model(model)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = model.tokenizer
    sample = tokenizer(_CHECK_TEXTS[:2], padding=True, truncation=True, return_tensors="pt")
    input_names = [name for name in tokenizer.model_input_names if name in sample]
    axes = {0: "batch", 1: "sequence"}
    with tempfile.TemporaryDirectory(dir=cache_dir) as scratch:
        fp32 = Path(scratch) / "model.onnx"
        with torch.no_grad():
            torch.onnx.export(
                _LastHiddenState.make(model[0].auto_model, input_names),
                tuple(sample[name] for name in input_names),
                str(fp32),
                input_names=input_names,
                output_names=["last_hidden_state"],
                dynamic_axes={name: axes for name in [*input_names, "last_hidden_state"]},
                opset_version=17,
                dynamo=False,
            )
        reference = model.encode(_CHECK_TEXTS, normalize_embeddings=True)
        tokenizer_file = Path(scratch) / "tokenizer.json"
        tokenizer.backend_tokenizer.save(str(tokenizer_file))
        meta = {
            "model": spec.model,
            "backend": spec.backend,
            "made_by": "torch.onnx.export",
            "dimension": int(reference.shape[1]),
            "max_seq_length": int(model.max_seq_length),
            "input_names": input_names,
            "pad_id": int(tokenizer.pad_token_id or 0),
            "pad_token": str(tokenizer.pad_token or "[PAD]"),
        }
        files = _files(spec, cache_dir, _TORCH_MADE)
        return _keep(spec, files, fp32, tokenizer_file, meta, reference, reduce_range)


def _keep(
    spec: EncoderSpec,
    files: tuple[Path, Path],
    fp32: Path,
    tokenizer_file: Path,
    meta: dict[str, Any],
    reference: np.ndarray | None,
    reduce_range: bool = False,
) -> tuple[Path, Path]:
    """Quantise ``fp32`` for ``onnx-int8`` (weights in 7 bits with ``reduce_range``), check it
    against ``reference`` (the vectors of ``_CHECK_TEXTS``; None: nothing to check
    against) and move the files into place as ``files``, the metadata last."""
    final = fp32
    if spec.backend == "onnx-int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        final = fp32.with_name("model-int8.onnx")
        # Per-channel scales: mean cosine with fp32 0.993 here, against 0.944 per tensor.
        quantize_dynamic(
            str(fp32), str(final), weight_type=QuantType.QInt8, per_channel=True, reduce_range=reduce_range
        )
        if reduce_range:
            meta["int8_reduce_range"] = True
    if reference is not None:
        # Checked at the model's own window, as torch reads it.
        candidate = OnnxEmbedder(replace(spec, window=None), final, tokenizer_file, meta, "cpu")
        agreement = np.sum(candidate.embed(_CHECK_TEXTS, batch_size=4) * reference, axis=1)
        floor = 0.9999 if spec.backend == "onnx" else 0.95
        if float(agreement.min() if spec.backend == "onnx" else agreement.mean()) < floor:
            raise RuntimeError(
                f"the ONNX export of {spec.model} disagrees with its reference "
                f"(cosine {agreement.round(4).tolist()}); use embedding_backend=torch"
            )
    model_file, meta_file = files
    meta["tokenizer"] = model_file.with_suffix(".tokenizer.json").name
    shutil.move(str(tokenizer_file), model_file.with_suffix(".tokenizer.json"))
    os.replace(final, model_file)
    # The metadata last: its presence says the export is whole.
    meta_file.with_suffix(".tmp").write_text(json.dumps(meta, indent=1))
    os.replace(meta_file.with_suffix(".tmp"), meta_file)
    return model_file, meta_file


def own_int8_folder(spec: EncoderSpec) -> Path | None:
    """The tuned encoder's folder when ``spec`` runs the int8 file kept there: nothing to export."""
    folder = tuned_folder(spec.model)
    return folder if folder is not None and spec.backend == "onnx-int8" else None


def needs_export(spec: EncoderSpec, cache_dir: Path) -> bool:
    """Whether loading ``spec`` from ``cache_dir`` exports the model first (20-30 s, once);
    never for torch, nor for a tuned encoder's own int8 file."""
    if not spec.backend.startswith("onnx") or own_int8_folder(spec) is not None:
        return False
    model_file, meta_file = export_files(spec, cache_dir)
    return not (meta_file.exists() and model_file.exists())


def load_exported(
    spec: EncoderSpec, cache_dir: Path, device: str = "auto", threads: int | None = None
) -> OnnxEmbedder:
    """Load ``spec``'s export from ``cache_dir``, exporting it first if it is not there;
    a tuned encoder's own int8 file from its folder."""
    folder = own_int8_folder(spec)
    if folder is not None:
        meta = tuned_meta(folder)
        return OnnxEmbedder(spec, folder / ENCODER_FILE, folder / meta["tokenizer"], meta, device, threads)
    model_file, meta_file = export_files(spec, cache_dir)
    if not (meta_file.exists() and model_file.exists()):
        export(spec, cache_dir)
    meta = json.loads(meta_file.read_text())
    return OnnxEmbedder(spec, model_file, cache_dir / meta["tokenizer"], meta, device, threads)
