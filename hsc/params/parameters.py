"""The algorithm's parameters: the seed's eight under their names, and hsc's additions, each with the
seed's behaviour one value away."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from hsc.chunk.roles import parse_roles
from hsc.params.fields import (
    ATTRIBUTE_DOCSTRINGS,
    BOUNDARY_RULES,
    CONTEXT_MODULE_RULES,
    DEFINITION_VECTORS,
    FRAGMENT_MERGING,
    JAVA_CLASS_SCOPES,
    JOINED_RESULTS,
    OVERLOAD_SIGNATURES,
    REGION_DEFINITIONS,
    REGION_LEVELS,
    REGION_LEXICAL,
    REGION_MEMBERS,
    REGION_NAMES,
    REGION_NESTING,
    REGION_OUTLINES,
    RETRIEVAL_MODES,
    SCOPE_NAMES,
    SettingError,
    _p,
    check_fields,
    language_minimums,
)

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
    # Issue 35: Java names each file after its public class, so its methods' scopes said the class
    # twice (capacitor-android.com.getcapacitor.Bridge.Bridge.initWebView). Measured in docs/languages.md.
    java_class_scopes: str = _p(
        "once",
        "'once': a Java file named after its top-level type (Bridge.java holding class Bridge) names "
        "that type once in its scopes (com.getcapacitor.Bridge.initWebView; other types keep both "
        "names); 'seed': the file's path, then the type (com.getcapacitor.Bridge.Bridge.initWebView).",
        "chunk",
        choices=JAVA_CLASS_SCOPES,
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
        100,
        "Context pack: a module question (context_module_rule) keeps this many tokens for that file's "
        "outline, the signature and first doc sentence of each top-level definition the pack does not "
        "show otherwise (0 = never, as before). Stdlib, paired against 0: module questions' file "
        "definitions shown +0.094 / +0.070 / +0.068 at 1,024 / 2,048 / 4,096 tokens, no significant "
        "loss of function or class questions' hits (docs/context.md).",
        "query",
        minimum=0,
    )
    context_module_rule: str = _p(
        "file-over-leaf",
        "Context pack: what tells a module question (context_file_outline_tokens): 'file-over-leaf' (the "
        "file ranking's best file scores at least context_module_margin above its own best hit: its "
        "pooled vector fits better than its leaves), 'top-hits' (at least 3 of the top 5 hits in the "
        "best hit's file; the first rule), 'file-margin' (the best file scores context_module_margin "
        "above the second) or 'region-first' (the region list's best file outranks its best definition "
        "by context_module_margin). Stdlib, file-over-leaf -0.04: fires on 45 % of module questions, "
        "13 % of function and 29 % of class questions (top-hits: 34 / 58 / 58 %).",
        "query",
        choices=CONTEXT_MODULE_RULES,
    )
    context_module_margin: float = _p(
        -0.04,
        "Context pack: the threshold of context_module_rule's score (file-over-leaf: the best file's "
        "score less its best hit's; file-margin: less the second file's; region-first: less the best "
        "definition's).",
        "query",
        minimum=-1.0,
        maximum=1.0,
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
        "Regions: the levels a query's regions are drawn from (folders and groups measured no help); "
        "'type' = types alone (classes, structs, interfaces, traits, enums), a type nested in a "
        "function or in another type too, for a question about a class.",
        "query",
        choices=REGION_LEVELS,
    )
    region_definitions: str = _p(
        "outermost",
        "Regions: 'outermost' = a definition inside another (a method) is not a region of its own, "
        "its class is; 'containers' = outermost ones and, inside them, those that hold others (a "
        "nested class); 'all' = every definition.",
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
    # Chosen with `bench quality --regions` (docs/hierarchy.md, "Name evidence"): 909 class questions
    # of thirteen third-party packages, strict@10 +.052 [+.038, +.067]; their 2,620 function questions'
    # holds@10 -.001 [-.005, +.003].
    region_names: str = _p(
        "evidence",
        "Regions: 'evidence' = a listed region gains 0.1 times the share of its own name's words "
        "(a class's name, a file's module) the query matches ('BaseHeader' for 'base class for "
        "message headers'), once per name in a file; 'off' = none.",
        "query",
        choices=REGION_NAMES,
    )
    region_members: str = _p(
        "outside",
        "Regions: 'outside' = a type's members declared outside its lines in its file (Go methods "
        "with its receiver, Rust impl blocks) count as its own, as a Python class's methods do, and it "
        "comes right after the member that lifted it; 'inside' = a definition is scored by the leaves "
        "its lines overlap alone.",
        "query",
        choices=REGION_MEMBERS,
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
        if self.java_class_scopes != "seed":
            key += f";java_classes={self.java_class_scopes}"
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
    "java_class_scopes",
)
