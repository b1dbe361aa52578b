"""A tuned encoder's folder: what ``python -m hsc encoder train`` writes and what
``embedding_model`` may name.

The folder holds the ONNX int8 file, its tokenizer and ``encoder.json`` (the
export's metadata plus the recipe: data, seed, steps, versions), and, when it
was kept, the fp32 sentence-transformers model in ``model/`` (which the
``torch`` and ``onnx`` backends run). Setting ``embedding_model`` to the
folder's path switches to it; its vectors are cached under that name, apart
from the base model's. Nothing here imports torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ENCODER_FILE = "encoder-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "encoder.json"
# Word pieces a tuned encoder is trained on and reads by default.
TUNED_WINDOW = 128


def tuned_folder(model: str) -> Path | None:
    """The tuned-encoder folder ``model`` names, or None for any other model."""
    folder = Path(model)
    return folder if (folder / META_FILE).is_file() else None


def tuned_meta(folder: Path) -> dict[str, Any]:
    return json.loads((folder / META_FILE).read_text())


def fp32_model(folder: Path) -> str:
    """The sentence-transformers folder inside a tuned encoder, for the torch and onnx backends."""
    model = folder / "model"
    if not (model / "config.json").is_file():
        raise RuntimeError(
            f"{folder} keeps only the int8 encoder (no model/ folder): use embedding_backend=onnx-int8"
        )
    return str(model)
