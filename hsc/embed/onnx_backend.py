"""The ``onnx`` and ``onnx-int8`` backends: the model's ONNX export run by
ONNX Runtime, tokenised by the ``tokenizers`` package.

Only those two are imported here (about 0.1 s, against several seconds for
torch and sentence-transformers); the export itself (``hsc.embed.onnx_export``)
runs once per model and backend and is cached. Mean pooling over the
attention mask, then L2 normalisation, as sentence-transformers does for
the default model: the fp32 export gives the same vectors as torch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed.base import EncoderSpec, OnBatch, embed_longest_first, normalise

# ONNX Runtime's execution provider for each device setting.
PROVIDERS = {"cuda": "CUDAExecutionProvider", "mps": "CoreMLExecutionProvider", "cpu": "CPUExecutionProvider"}


def free_cores() -> int:
    """Cores not busy with other work (from the 1-minute load average), at least one."""
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        return cores
    return max(1, min(cores, round(cores - busy + 1)))


def providers_for(device: str, available: list[str]) -> list[str]:
    """``auto``: CUDA when this onnxruntime build has it, else the CPU; a named
    device that the build lacks is an error, not a silent fallback."""
    if device == "auto":
        return [p for p in (PROVIDERS["cuda"], PROVIDERS["cpu"]) if p in available]
    wanted = PROVIDERS.get(device)
    if wanted is None:
        raise ValueError(f"unknown device {device!r}; choose auto, cpu, cuda or mps")
    if wanted not in available:
        raise RuntimeError(
            f"device={device} needs onnxruntime's {wanted}, which this installation lacks "
            f"(it has {', '.join(available)}); use device=cpu or the torch backend"
        )
    return [wanted] if wanted == PROVIDERS["cpu"] else [wanted, PROVIDERS["cpu"]]


class OnnxEmbedder:
    """An exported sentence-transformers model in ONNX Runtime."""

    def __init__(
        self,
        spec: EncoderSpec,
        model_file: Path,
        tokenizer_file: Path,
        meta: dict[str, Any],
        device: str,
        threads: int | None = None,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.spec = spec
        self.name = spec.model
        self.dimension = int(meta["dimension"])
        self.max_seq_length = min(spec.window or meta["max_seq_length"], meta["max_seq_length"])
        self._input_names = list(meta["input_names"])
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=self.max_seq_length)
        self._tokenizer.enable_padding(pad_id=meta["pad_id"], pad_token=meta["pad_token"])
        self._pad_id = int(meta["pad_id"])
        self._unlimited = _unlimited(self._tokenizer)
        # Texts longer than the window so far (the tokenizer says so for free).
        self.truncated = 0
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers are noise here
        # Threads for the cores that are free now, and no busy-waiting between
        # operators: on 2 shared cores at load 16, 2 spinning threads embedded
        # 9.5 leaves/s, 2 without spinning 14.9, 1 thread 16.0.
        options.intra_op_num_threads = threads or free_cores()
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.providers = providers_for(device, onnxruntime.get_available_providers())
        self._session = onnxruntime.InferenceSession(str(model_file), options, providers=self.providers)
        # Rows per model run (0: the batch's size). On the CPU each row runs alone: int8
        # quantises a run's activations together, so a row run alone has a vector that depends
        # on its text only (batched, a leaf moved by up to 0.02 cosine with its neighbours), and
        # nothing is padded (1.22x on email's leaves, `bench embed`). An accelerator keeps
        # batches, which it needs to be busy.
        self.run_size = 1 if self.providers[0] == PROVIDERS["cpu"] else 0

    def piece_counts(self, texts: Sequence[str]) -> np.ndarray:
        """Word pieces of each text before truncation (special tokens included)."""
        return np.array([len(e.ids) for e in self._unlimited.encode_batch(list(texts))], dtype=np.int64)

    def encode_batch(self, batch: list[str]) -> np.ndarray:
        """Mean-pooled rows of one batch, not yet normalised."""
        if self.spec.long_leaves != "truncate":
            return self._encode_windows(batch, head=self.spec.long_leaves == "head+mean")
        encodings = self._tokenizer.encode_batch(batch)
        self.truncated += sum(1 for encoding in encodings if encoding.overflowing)
        return self._pooled_in_runs([e.ids[: sum(e.attention_mask)] for e in encodings], len(batch))

    def _pooled(self, rows: list[list[int]]) -> np.ndarray:
        """Mean-pooled hidden states of token id rows, padded here to the longest."""
        width = max(len(row) for row in rows)
        ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for number, row in enumerate(rows):
            ids[number, : len(row)] = row
            mask[number, : len(row)] = 1
        columns = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {name: columns[name] for name in self._input_names})[0]
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

    def _pooled_in_runs(self, rows: list[list[int]], batch_size: int) -> np.ndarray:
        """:meth:`_pooled` over ``rows``, :attr:`run_size` at a time (or ``batch_size``),
        longest first so that a run pads little; in the given order."""
        size = self.run_size or batch_size
        order = sorted(range(len(rows)), key=lambda number: -len(rows[number]))
        pooled = np.zeros((len(rows), self.dimension), dtype=np.float32)
        for start in range(0, len(order), size):
            run = order[start : start + size]
            pooled[run] = self._pooled([rows[number] for number in run])
        return pooled

    def _encode_windows(self, batch: list[str], head: bool) -> np.ndarray:
        """Each text read whole: its word pieces cut into consecutive windows (each with
        the model's start and end tokens), every window pooled, and the windows' vectors
        averaged, weighted by their pieces; with ``head``, that mean and the first
        window's vector, each normalised, are added (equal weights), so the head that
        a docstring query matches keeps its pull. A text within one window is read as before.
        The windows run no more than ``len(batch)`` at a time, so a batch of long texts holds
        no larger tensors than a batch of short ones."""
        windows, owners, weights = [], [], []
        for number, encoding in enumerate(self._unlimited.encode_batch(batch)):
            ids, special = encoding.ids, encoding.special_tokens_mask
            opener = [i for i, s in zip(ids[:1], special[:1]) if s]
            closer = [i for i, s in zip(ids[-1:], special[-1:]) if s] if len(ids) > 1 else []
            body = ids[len(opener) : len(ids) - len(closer)]
            step = max(1, self.max_seq_length - len(opener) - len(closer))
            for start in range(0, max(len(body), 1), step):
                windows.append(opener + body[start : start + step] + closer)
                owners.append(number)
                weights.append(len(windows[-1]))
        pooled = self._pooled_in_runs(windows, len(batch))
        out = np.zeros((len(batch), pooled.shape[1]), dtype=np.float32)
        totals = np.zeros(len(batch), dtype=np.float32)
        np.add.at(out, owners, pooled * np.array(weights, dtype=np.float32)[:, None])
        np.add.at(totals, owners, weights)
        mean = out / totals[:, None]
        if not head:
            return mean
        firsts = np.unique(owners, return_index=True)[1]  # each text's first window
        return normalise(mean) + normalise(pooled[firsts])

    def embed(
        self, texts: Sequence[str], batch_size: int = 32, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        """Embed in batches of ``batch_size``, longest first; rows in the given order."""
        return embed_longest_first(self.encode_batch, texts, self.dimension, batch_size, on_batch)


def _unlimited(tokenizer: Any) -> Any:
    """A copy of ``tokenizer`` that neither truncates nor pads."""
    from tokenizers import Tokenizer

    copy = Tokenizer.from_str(tokenizer.to_str())
    copy.no_truncation()
    copy.no_padding()
    return copy
