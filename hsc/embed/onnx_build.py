"""The ONNX graph of a BERT sentence encoder, written from its weights without torch.

A sentence-transformers folder of a BERT model (``config.json``,
``model.safetensors``, ``tokenizer.json``, a mean-pooling module) is read
with numpy and written node by node with ``onnx.helper``: embeddings,
``num_hidden_layers`` encoder layers, ``last_hidden_state`` out, with the
inputs the torch export has (``input_ids``, ``token_type_ids``,
``attention_mask``), so :class:`~hsc.embed.onnx_backend.OnnxEmbedder` runs
either. The same arithmetic as the transformers library's ``BertModel`` in
eager mode (exact GELU, ``(1 - mask) * float32 min`` added to the scores),
so its vectors are torch's (cosine >= 0.9999, tests/test_encoders.py).

This is what lets the lean install (no torch) run the default encoder; a
model this module does not know (:func:`unbuildable`) still goes through
``torch.onnx.export`` (``hsc.embed.onnx_export``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization is an operator from 17 on
INPUT_NAMES = ["input_ids", "token_type_ids", "attention_mask"]
_WEIGHTS = "model.safetensors"


@dataclass(frozen=True)
class BertFolder:
    """What the graph and its metadata need from a sentence-transformers folder."""

    folder: Path
    config: dict[str, Any]
    max_seq_length: int

    @property
    def tokenizer_file(self) -> Path:
        return self.folder / "tokenizer.json"

    def meta(self) -> dict[str, Any]:
        """The export metadata :class:`~hsc.embed.onnx_backend.OnnxEmbedder` reads."""
        padding = json.loads(self.tokenizer_file.read_text(encoding="utf-8")).get("padding") or {}
        return {
            "dimension": int(self.config["hidden_size"]),
            "max_seq_length": self.max_seq_length,
            "input_names": INPUT_NAMES,
            "pad_id": int(padding.get("pad_id", self.config.get("pad_token_id") or 0)),
            "pad_token": str(padding.get("pad_token", "[PAD]")),
        }


def _read_json(path: Path) -> Any:
    """The JSON in ``path``, or None when it is missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def unbuildable(folder: Path) -> str | None:
    """Why this module cannot write ``folder``'s graph (None: it can)."""
    if not folder.is_dir():
        return f"{folder} is not a local folder"
    missing = [
        n for n in ("config.json", _WEIGHTS, "tokenizer.json", "modules.json") if not (folder / n).exists()
    ]
    if missing:
        return f"it has no {', '.join(missing)}"
    config = _object(_read_json(folder / "config.json"))
    if config.get("model_type") != "bert":
        return "it is not a BERT model"
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        return "its BERT variant (activation or position embeddings) is not the original's"
    modules = [_object(m) for m in _read_json(folder / "modules.json") or []]
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or set(kinds[2:]) - {"Normalize"}:
        return f"its modules are {kinds}, not Transformer, Pooling (and Normalize)"
    pooling = _object(_read_json(folder / str(modules[1].get("path", "")) / "config.json"))
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True]
    if modes != ["pooling_mode_mean_tokens"]:
        return f"its pooling is {modes}, not the mean of the tokens"
    if _object(_read_json(folder / "sentence_bert_config.json")).get("do_lower_case"):
        return "it lower-cases texts before its tokenizer"
    return None


def read_folder(folder: Path) -> BertFolder:
    """``folder``'s configuration; call :func:`unbuildable` first."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    sentence = _object(_read_json(folder / "sentence_bert_config.json"))
    window = int(sentence.get("max_seq_length") or config["max_position_embeddings"])
    return BertFolder(folder, config, min(window, int(config["max_position_embeddings"])))


class _Graph:
    """Nodes and initialisers, named in order; each method returns its output's name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[Any] = []
        self.initialisers: list[Any] = []
        self._count = 0

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        name = f"const_{len(self.initialisers)}"
        self.initialisers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(self, key: str, transpose: bool = False) -> str:
        value = self.weights[key]
        return self.const(np.ascontiguousarray(value.T) if transpose else value)

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        self._count += 1
        output = f"{kind.lower()}_{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [output], **attributes))
        return output

    def linear(self, x: str, prefix: str) -> str:
        """``x @ W.T + b`` with W stored transposed, as torch's exporter writes it."""
        return self.op(
            "Add", self.op("MatMul", x, self.weight(f"{prefix}.weight", True)), self.weight(f"{prefix}.bias")
        )

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.weight(f"{prefix}.weight"),
            self.weight(f"{prefix}.bias"),
            axis=-1,
            epsilon=eps,
        )

    def gelu(self, x: str) -> str:
        """The exact GELU, 0.5 x (1 + erf(x / sqrt 2)), in the form ONNX Runtime fuses."""
        erf = self.op("Erf", self.op("Div", x, self.const(np.sqrt(2.0))))
        return self.op("Mul", self.op("Mul", x, self.op("Add", erf, self.const(1.0))), self.const(0.5))


def _load_weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    weights = load_file(str(folder / _WEIGHTS))
    # Checkpoints saved from BertForX carry a "bert." prefix on the encoder's names.
    return {k.removeprefix("bert."): v for k, v in weights.items()}


def _embeddings(g: _Graph, eps: float) -> str:
    # Positions gathered from the table as torch's export does (not sliced), so the int8
    # quantiser treats the three tables alike and the int8 vectors match that export's.
    length = g.op("Gather", g.op("Shape", "input_ids"), g.const(1, np.int64), axis=0)
    positions = g.op("Range", g.const(0, np.int64), length, g.const(1, np.int64))
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    types = g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
    where = g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions)
    return g.layer_norm(g.op("Add", g.op("Add", words, types), where), "embeddings.LayerNorm", eps)


def _attention_bias(g: _Graph) -> str:
    """(1 - mask) * float32 min, shaped (batch, 1, 1, sequence) to add to every head's scores."""
    mask = g.op("Cast", "attention_mask", to=1)  # 1 = FLOAT
    hidden = g.op("Mul", g.op("Sub", g.const(1.0), mask), g.const(np.finfo(np.float32).min))
    return g.op("Unsqueeze", hidden, g.const([1, 2], np.int64))


def _layer(g: _Graph, x: str, bias: str, prefix: str, heads: int, head_size: int, eps: float) -> str:
    split = g.const([0, 0, heads, head_size], np.int64)

    def heads_of(name: str, perm: list[int]) -> str:
        return g.op(
            "Transpose", g.op("Reshape", g.linear(x, f"{prefix}.attention.self.{name}"), split), perm=perm
        )

    # Query and key each scaled by head_size ** -0.25, as torch's scaled dot-product attention
    # is exported: the same scores as dividing them by sqrt(head_size), rounded alike.
    root = g.const(head_size**-0.25)
    query = g.op("Mul", heads_of("query", [0, 2, 1, 3]), root)
    key = g.op("Mul", heads_of("key", [0, 2, 3, 1]), root)
    value = heads_of("value", [0, 2, 1, 3])
    scores = g.op("MatMul", query, key)
    weights = g.op("Softmax", g.op("Add", scores, bias), axis=-1)
    context = g.op("Transpose", g.op("MatMul", weights, value), perm=[0, 2, 1, 3])
    merged = g.op("Reshape", context, g.const([0, 0, heads * head_size], np.int64))
    attended = g.op("Add", g.linear(merged, f"{prefix}.attention.output.dense"), x)
    attended = g.layer_norm(attended, f"{prefix}.attention.output.LayerNorm", eps)
    inner = g.gelu(g.linear(attended, f"{prefix}.intermediate.dense"))
    out = g.op("Add", g.linear(inner, f"{prefix}.output.dense"), attended)
    return g.layer_norm(out, f"{prefix}.output.LayerNorm", eps)


def build_graph(bert: BertFolder) -> Any:
    """The ONNX model (fp32) that maps the three inputs to ``last_hidden_state``."""
    from onnx import TensorProto, checker, helper

    config = bert.config
    heads = int(config["num_attention_heads"])
    head_size = int(config["hidden_size"]) // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    g = _Graph(_load_weights(bert.folder))
    x = _embeddings(g, eps)
    bias = _attention_bias(g)
    for number in range(int(config["num_hidden_layers"])):
        x = _layer(g, x, bias, f"encoder.layer.{number}", heads, head_size, eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in INPUT_NAMES]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", int(config["hidden_size"])]
    )
    graph = helper.make_graph(g.nodes, "bert", inputs, [output], g.initialisers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hsc")
    model.ir_version = 8  # readable by every onnxruntime hsc allows
    checker.check_model(model)
    return model
