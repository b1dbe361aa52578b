"""A tuned encoder's folder: what ``python -m hsc encoder train`` writes and what
``embedding_model`` may name, and the tuned encoder that ships as the default.

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

from hsc.params import DEFAULT_ENCODER

ENCODER_FILE = "encoder-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "encoder.json"
# Word pieces a tuned encoder is trained on and reads by default.
TUNED_WINDOW = 128


# Tuned encoders that ship inside the package, by name (README, Encoders).
BUNDLED = {DEFAULT_ENCODER: Path(__file__).parent / "encoders" / DEFAULT_ENCODER}
# Bundled encoders an earlier version shipped, and what replaced them. Vectors are cached by the
# encoder's name, so new weights get a new name: a repository an old one indexed is re-embedded
# by its next index run, never mixed (README, Encoders).
RETIRED = {"hsc-code-minilm": DEFAULT_ENCODER, "hsc-code-minilm-2": DEFAULT_ENCODER}


def retired_note(model: str) -> str | None:
    """What to do about vectors a retired bundled encoder made (None: ``model`` is not one)."""
    if model not in RETIRED:
        return None
    return (
        f"{model} made this repository's vectors and this version of hsc ships {RETIRED[model]} "
        "in its place: index the repository again to re-make them"
    )


def tuned_folder(model: str) -> Path | None:
    """The tuned-encoder folder ``model`` names (a bundled name or a folder), or None."""
    folder = BUNDLED.get(model) or Path(model)
    return folder if (folder / META_FILE).is_file() else None


def runnable_model(model: str, backend: str) -> str:
    """The model a backend runs for ``model``: a tuned encoder kept only as int8 (the
    bundled one) is its base model under ``torch`` and ``onnx``, so those backends give
    the base model's vectors under the base model's key, never a mix."""
    folder = tuned_folder(model)
    if folder is None or backend == "onnx-int8" or (folder / "model" / "config.json").is_file():
        return model
    return str(tuned_meta(folder)["recipe"]["base_model"])


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
