"""Fine-tuning the encoder on doc → code pairs, and the folder a tuned encoder lives in.

A plain PyTorch loop over sentence-transformers' model and its
MultipleNegativesRankingLoss (in-batch negatives: every other pair's code in
the batch is a wrong answer), AdamW with a linear schedule after a warm-up,
gradients clipped at 1, as sentence-transformers' own trainer does by
default, without the trainer's extra packages. The tuned model is then
exported to ONNX int8 by :mod:`hsc.embed.onnx_export` and written with its
recipe (data, seed, steps, versions) beside it: see :mod:`hsc.embed.tuned`.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hsc.embed.base import EncoderSpec
from hsc.embed.tuned import ENCODER_FILE, META_FILE, TOKENIZER_FILE, TUNED_WINDOW
from hsc.encoder.pairs import Pair, split_by_file
from hsc.params import DEFAULT_MODEL

# How a pair's extra wrong answer is chosen: none (in-batch negatives only), or the best-ranked
# other code under the base encoder's hybrid score or its cosine alone (hsc.encoder.negatives).
NEGATIVES = ("none", "hybrid", "dense")

# on_step(step, steps, loss)
OnStep = Callable[[int, int, float], None]


@dataclass(frozen=True)
class Recipe:
    """Everything that decides the tuned weights besides the pairs themselves."""

    base_model: str = DEFAULT_MODEL
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 3e-5
    warmup: float = 0.1  # share of the steps with a rising learning rate
    max_seq_length: int = TUNED_WINDOW  # word pieces read of each side while training
    seed: int = 0
    held_out: float = 0.0  # share of the files kept out of training (scored, not learned)
    threads: int = 1  # two threads cost more CPU and gave no wall-clock gain on 2 shared cores
    max_steps: int = 0  # 0: all the epochs' steps
    negatives: str = "none"  # NEGATIVES: whether each pair also meets its hardest negative
    body_comments: bool = False  # pairs from prose comments in function bodies too (hsc.encoder.pairs)
    class_pairs: bool = False  # Python class docstrings paired with their classes' outlines too
    # Registry packages of other languages mined besides the Python (hsc.encoder.sources), and at
    # most how many pairs of each of them (0: all), so no language outweighs the rest by size alone.
    languages: tuple[str, ...] = ()
    pairs_per_language: int = 0


def batches(pairs: list[Pair], recipe: Recipe, epoch: int) -> list[list[Pair]]:
    """The epoch's pairs shuffled with the recipe's seed, cut into full-size batches
    with no code text twice in a batch (the pairs are deduplicated, so none is)."""
    order = list(pairs)
    random.Random(recipe.seed * 1000 + epoch).shuffle(order)
    size = recipe.batch_size
    return [order[start : start + size] for start in range(0, len(order) - size + 1, size)]


def _loss_class() -> Any:
    try:
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers.losses import MultipleNegativesRankingLoss
    return MultipleNegativesRankingLoss


def train_model(pairs: list[Pair], recipe: Recipe, on_step: OnStep | None = None) -> tuple[Any, int, float]:
    """The base model tuned on ``pairs``: (model, steps taken, mean loss of the last tenth)."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    from hsc.embed.torch_backend import load_sentence_transformer

    torch.manual_seed(recipe.seed)
    torch.set_num_threads(recipe.threads)
    model = load_sentence_transformer(recipe.base_model, "cpu")
    model.max_seq_length = recipe.max_seq_length
    loss_of = _loss_class()(model)
    plan = [batch for epoch in range(recipe.epochs) for batch in batches(pairs, recipe, epoch)]
    if recipe.max_steps:
        plan = plan[: recipe.max_steps]
    if not plan:
        raise ValueError(
            f"{len(pairs)} pairs make no batch of {recipe.batch_size}: mine more or lower --batch"
        )
    optimiser = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate)
    schedule = get_linear_schedule_with_warmup(optimiser, math.ceil(recipe.warmup * len(plan)), len(plan))
    model.train()
    losses = []
    for step, batch in enumerate(plan, start=1):
        columns = [[p.query for p in batch], [p.code for p in batch]]
        if all(p.negative for p in batch):
            # MultipleNegativesRankingLoss scores each query against every code and negative of the
            # batch; a batch with a pair that has none (every other code passed over) keeps two columns.
            columns.append([p.negative for p in batch])
        features = [_features(model, texts) for texts in columns]
        loss = loss_of(features, None)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(loss.item())
        if on_step:
            on_step(step, len(plan), losses[-1])
    model.eval()
    tail = losses[-max(1, len(losses) // 10) :]
    return model, len(plan), sum(tail) / len(tail)


def _features(model: Any, texts: list[str]) -> dict[str, Any]:
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    features = preprocess(texts)
    # sentence-transformers 6 adds a "modality" string beside the tensors.
    return {
        name: value.to(model.device) if hasattr(value, "to") else value for name, value in features.items()
    }


def build_encoder(
    pairs: list[Pair],
    recipe: Recipe,
    out: Path,
    sources: list[str],
    on_step: OnStep | None = None,
    keep_model: bool = True,
) -> dict[str, Any]:
    """Train on ``pairs`` (less the recipe's held-out files), export to ONNX int8 and
    write a tuned-encoder folder at ``out``; return its recipe record. ``keep_model``
    also keeps the fp32 sentence-transformers folder (``out/model``, about 90 MB)."""
    from hsc.embed.onnx_export import REDUCE_RANGE_TUNED, export

    train, held_out = split_by_file(pairs, recipe.held_out, recipe.seed)
    started, cpu_started = time.time(), time.process_time()
    model, steps, final_loss = train_model(train, recipe, on_step)
    train_cpu = time.process_time() - cpu_started
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as scratch:
        fp32_dir = Path(scratch) / "model"
        model.save(str(fp32_dir))
        spec = EncoderSpec(str(fp32_dir), "onnx-int8", TUNED_WINDOW)
        model_file, meta_file = export(spec, Path(scratch), reduce_range=REDUCE_RANGE_TUNED)
        shutil.move(str(model_file), out / ENCODER_FILE)
        shutil.move(str(model_file.with_suffix(".tokenizer.json")), out / TOKENIZER_FILE)
        meta = json.loads(meta_file.read_text())
        if keep_model:
            if (out / "model").exists():
                shutil.rmtree(out / "model")
            shutil.move(str(fp32_dir), out / "model")
    recipe_record, continued_from = lineage(asdict(recipe))
    record = {
        **meta,
        "model": out.name,
        "tokenizer": TOKENIZER_FILE,
        "recipe": recipe_record,
        **({"continued_from": continued_from} if continued_from else {}),
        "data": {
            "sources": sources,
            "pairs": len(pairs),
            "train_pairs": len(train),
            "held_out_pairs": len(held_out),
            "held_out_files": sorted({p.path for p in held_out}),
            "pairs_sha1": _pairs_digest(train),
        },
        "steps": steps,
        "final_loss": round(final_loss, 4),
        "train_cpu_s": round(train_cpu, 1),
        "wall_s": round(time.time() - started, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "onnx_int8_bytes": (out / ENCODER_FILE).stat().st_size,
        "versions": _versions(),
    }
    (out / META_FILE).write_text(json.dumps(record, indent=1))
    return record


def lineage(recipe: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A recipe as it is recorded, and what it continued from: a run whose ``--base`` is the fp32
    model kept in another tuned folder (``DIR/model``) records that folder's own recipe, data
    digest and sources under ``continued_from``, and that folder's base as its ``base_model`` (the
    model the ``torch`` and ``onnx`` backends run when only the int8 file ships, and no path of
    the machine it was trained on)."""
    parent = Path(recipe["base_model"]).parent / META_FILE
    if not parent.is_file():
        return recipe, None
    made = json.loads(parent.read_text())
    first = made["recipe"]
    continued = {
        "model": made["model"],
        "recipe": first,
        **({"continued_from": made["continued_from"]} if "continued_from" in made else {}),
        "data": made["data"],
        "steps": made["steps"],
        "train_cpu_s": made["train_cpu_s"],
    }
    return {**recipe, "base_model": first["base_model"]}, continued


def _pairs_digest(pairs: list[Pair]) -> str:
    digest = hashlib.sha1()
    for pair in pairs:
        digest.update(f"{pair.query}\0{pair.code}\0".encode())
        if pair.negative:  # pairs without negatives keep the digest they had before negatives
            digest.update(f"{pair.negative}\0".encode())
    return digest.hexdigest()


def _versions() -> dict[str, str]:
    import onnxruntime
    import sentence_transformers
    import torch
    import transformers

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "onnxruntime": onnxruntime.__version__,
    }
