"""The systems of the main table, by name: one truth for the CLI, the sweep and the app.

Each entry builds its system from a :class:`Prepared` corpus. What several
systems share (the hierarchy plan, the contextual leaf vectors) is built
once, on first use, so a run of a few systems pays only for those.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsc.chunk.tokens import get_counter
from hsc.hierarchy.groups import DefinitionVectors, HierarchyPlan, plan_hierarchy
from hsc.params import Parameters
from hsc.quality.corpus import Target
from hsc.quality.peers import PEER_NAMES, PeerInputs
from hsc.quality.peers import about as peer_about
from hsc.quality.systems import (
    CollapsedTree,
    Corpus,
    Flat,
    HnswLeaves,
    Joined,
    System,
    TokenWindows,
    TwoStage,
    contextual_texts,
    group_texts,
)

Report = Callable[[str], None]
# The "+group-score" variant's weight of the group's stage-1 score (the parameter's default is 0).
GROUP_SCORE_WEIGHT = 0.25
WINDOW_TOKENS, WINDOW_OVERLAP = 256, 64


@dataclass
class Prepared:
    """A corpus indexed once, with its queries embedded: what every system is built from."""

    corpus: Corpus
    targets: list[Target]
    query_vectors: np.ndarray
    params: Parameters
    files: dict[str, str]  # corpus path -> source, for the window baseline
    index_seconds: float
    corpus_info: dict[str, Any]


def group_stats(plan: HierarchyPlan) -> dict[str, Any]:
    sizes = (plan.group_ends - plan.group_starts).tolist()
    return {
        "groups": plan.group_count,
        "group_size_median": statistics.median(sizes) if sizes else 0,
        "group_size_mean": round(float(np.mean(sizes)), 2) if sizes else 0,
        "singleton_share": round(sum(1 for s in sizes if s == 1) / max(len(sizes), 1), 3),
    }


def contextual_corpus(corpus: Corpus) -> Corpus:
    table = corpus.table
    paths = [table.paths[i] for i in table.file_index]
    vectors = corpus.embed_texts(contextual_texts(paths, table.scopes, corpus.texts))
    return Corpus(
        # The contextual leaves alone: one vector each, as that system was measured.
        dataclasses.replace(table, vectors=vectors, definitions=DefinitionVectors()),
        corpus.texts,
        corpus.store,
        corpus.repository_id,
        corpus.embed_texts,
        corpus.lexical_term_share,
        corpus.lexical_name_weight,
        corpus.exact_name_weight,
    )


class Inputs:
    """What the systems are built from, each piece made on first use."""

    def __init__(self, prepared: Prepared, report: Report) -> None:
        self.prepared, self.report = prepared, report
        self.corpus, self.params = prepared.corpus, prepared.params

    @functools.cached_property
    def plan(self) -> HierarchyPlan:
        return plan_hierarchy(self.corpus.table, self.params)

    @functools.cached_property
    def contextual(self) -> Corpus:
        self.report("contextual leaf vectors (embedding once, then cached)")
        return contextual_corpus(self.corpus)

    @functools.cached_property
    def contextual_plan(self) -> HierarchyPlan:
        return plan_hierarchy(self.contextual.table, self.params)

    def two_stage(self, name: str, share: bool, **knobs: Any) -> TwoStage:
        """The seed's stage 1 (``share`` False: exactly mid_level_top_k groups), or
        widened by the run's stage1_leaf_share as :meth:`hsc.api.Index.query` does."""
        leaf_share = self.params.stage1_leaf_share if share else 0.0
        return TwoStage(self.corpus, self.plan, self.params.mid_level_top_k, name, leaf_share, **knobs)

    def windows(self) -> TokenWindows:
        self.report("token windows (embedding once, then cached)")
        return TokenWindows(self.corpus, self.prepared.files, get_counter(), WINDOW_TOKENS, WINDOW_OVERLAP)

    @functools.cached_property
    def peers(self) -> PeerInputs:
        return PeerInputs(self.prepared, self.report)

    def group_text(self) -> TwoStage:
        self.report("group vectors from group text (embedding once, then cached)")
        vectors = self.corpus.embed_texts(group_texts(self.corpus, self.plan))
        return self.two_stage("two-stage+group-text", False, group_vectors=vectors)


@dataclass(frozen=True)
class Entry:
    build: Callable[[Inputs], System]
    plan: Callable[[Inputs], HierarchyPlan] | None  # the hierarchy it searches, for the group figures
    embeds: str = ""  # what it embeds beyond the leaves (once, then cached), or ""
    about: str = ""


def _lexical(inputs: Inputs) -> float:
    return inputs.params.lexical_weight


# The main table, in the order it is shown. The retrieval modes of Index.query
# have a system of the same name here, so a mode's row can be found by its name.
SYSTEMS: dict[str, Entry] = {
    f"windows-{WINDOW_TOKENS}/{WINDOW_OVERLAP}": Entry(
        lambda i: i.windows(), None, "token windows", "fixed-size token windows with overlap, searched flat"
    ),
    "flat": Entry(lambda i: Flat(i.corpus), None, about="exact cosine over every leaf"),
    "hnsw-leaves": Entry(lambda i: HnswLeaves(i.corpus), None, about="an HNSW graph over every leaf"),
    "two-stage-seed": Entry(
        lambda i: i.two_stage("two-stage-seed", False),
        lambda i: i.plan,
        about="the seed: exactly mid_level_top_k groups, then their leaves",
    ),
    "collapsed-tree": Entry(
        lambda i: CollapsedTree(i.corpus, i.plan),
        lambda i: i.plan,
        about="leaves, groups and files ranked together, a group or file hit expanded to its leaves",
    ),
    "two-stage": Entry(
        lambda i: i.two_stage("two-stage", True),
        lambda i: i.plan,
        about="stage 1 widened to stage1_leaf_share of the leaves",
    ),
    "two-stage+group-score": Entry(
        lambda i: i.two_stage("two-stage+group-score", False, group_weight=GROUP_SCORE_WEIGHT),
        lambda i: i.plan,
        about=f"a leaf's score plus {GROUP_SCORE_WEIGHT} times its group's",
    ),
    "two-stage+group-text": Entry(
        Inputs.group_text,
        lambda i: i.plan,
        "group texts",
        "group vectors embedded from the group's text rather than the mean of its leaves",
    ),
    "hybrid-flat": Entry(
        lambda i: Flat(i.corpus, _lexical(i), "hybrid-flat"), None, about="every leaf, cosine fused with BM25"
    ),
    "hybrid-seed": Entry(
        lambda i: i.two_stage("hybrid-seed", False, lexical_weight=_lexical(i)),
        lambda i: i.plan,
        about="the seed's two stages fused with BM25",
    ),
    "hybrid": Entry(
        lambda i: i.two_stage("hybrid", True, lexical_weight=_lexical(i)),
        lambda i: i.plan,
        about="the widened two stages fused with BM25",
    ),
    "contextual-flat": Entry(
        lambda i: Flat(i.contextual, name="contextual-flat"),
        None,
        "contextual leaves",
        "every leaf embedded with a header naming its file and neighbours",
    ),
    "contextual+hybrid-flat": Entry(
        lambda i: Flat(i.contextual, _lexical(i), "contextual+hybrid-flat"),
        None,
        "contextual leaves",
        "contextual leaves, every one, fused with BM25",
    ),
    "contextual+hybrid": Entry(
        lambda i: TwoStage(
            i.contextual,
            i.contextual_plan,
            i.params.mid_level_top_k,
            "contextual+hybrid",
            lexical_weight=_lexical(i),
        ),
        lambda i: i.contextual_plan,
        "contextual leaves",
        "contextual leaves, the seed's two stages over their own hierarchy, fused with BM25",
    ),
}
SYSTEM_NAMES = tuple(SYSTEMS)
# Systems run only when named (`--systems`), beside the main table: the default mode as a query answers
# it (docs/languages.md). Not in SYSTEM_NAMES: the whole table, and the docs' copies of it, stay as they were.
NAMED_SYSTEMS: dict[str, Entry] = {
    "hybrid+joined": Entry(
        lambda i: Joined(
            i.two_stage("hybrid", True, lexical_weight=_lexical(i)), i.corpus.table, "hybrid+joined"
        ),
        lambda i: i.plan,
        about="hybrid as a query answers: split definitions' pieces joined, refilled to k results",
    ),
}
# The peers (hsc/quality/peers.py), also run only when named: `--systems` takes them one by one.
NAMED_SYSTEMS.update(
    {
        name: Entry(lambda i, n=name: i.peers.build(n), None, "peer chunks", peer_about(name))
        for name in PEER_NAMES
    }
)
ALL_SYSTEMS = {**SYSTEMS, **NAMED_SYSTEMS}
# The systems that embed nothing beyond the leaves: an interactive run's default (seconds, not minutes).
QUICK_SYSTEMS = tuple(name for name in SYSTEM_NAMES if not SYSTEMS[name].embeds)


# The Evaluate page's default run (logging, json and concurrent: 215 kB, 400 leaves; 150 queries;
# the quick systems), `python -m hsc bench evaluate` on a quiet 2-core machine (load ~1), the
# default encoder with each row run alone: a first run 4.5 s before definition vectors and 5.4 s with
# them, reruns with every vector cached 0.3 s without the sweep and 2.2 s with it. So about 200 texts
# embedded a second (550 in about 2.6 s), a leaf is about 540 bytes, the sweep about 10 ms a query.
# (An earlier release on the machine shared with other work took 40 s, 2.2 s and 11-13 s: expect
# several times these under load.) The extra texts per leaf are the definitions' 0.56 (the ten
# packages' 2,005 for 3,595 leaves), the windows' 0.65, the
# groups' 0.2 and the contextual leaves' 1 (`bench quality`).
EMBEDDED_PER_SECOND = 200.0
BYTES_PER_LEAF = 540
RERUN_SECONDS = 0.4
SWEEP_SECONDS_PER_QUERY = 0.01
DEFINITION_TEXTS_PER_LEAF = 0.56
EXTRA_TEXTS_PER_LEAF = {
    "token windows": 0.65,
    "group texts": 0.2,
    "contextual leaves": 1.0,
    # The sixteen peers (Go: 449 40-line windows and 270 chonkie chunks for 1,044 leaves, each with and
    # without its path, by both encoders); fewer named, fewer texts.
    "peer chunks": 2.8,
}


def expected_seconds(
    corpus_bytes: int, names: Iterable[str], queries: int, sweep: bool
) -> tuple[float, float]:
    """Rough times of a first run (embedding dominates) and of a rerun (every vector
    cached) of ``names`` on a corpus of ``corpus_bytes`` with ``queries`` queries."""
    leaves = corpus_bytes / BYTES_PER_LEAF
    extra = {ALL_SYSTEMS[n].embeds for n in check_names(names)} - {""}
    per_leaf = 1 + DEFINITION_TEXTS_PER_LEAF + sum(EXTRA_TEXTS_PER_LEAF[kind] for kind in extra)
    texts = leaves * per_leaf + queries
    rerun = RERUN_SECONDS * leaves / 400 + (SWEEP_SECONDS_PER_QUERY * queries if sweep else 0.0)
    return texts / EMBEDDED_PER_SECOND + rerun, rerun


def check_names(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in table order; a one-line error for an unknown one."""
    wanted = tuple(names)
    unknown = [n for n in wanted if n not in ALL_SYSTEMS]
    if unknown:
        raise ValueError(f"unknown system {unknown[0]!r}; choose from {', '.join(ALL_SYSTEMS)}")
    return tuple(n for n in ALL_SYSTEMS if n in wanted)


def main_systems(
    prepared: Prepared, report: Report = print, names: Iterable[str] | None = None
) -> Iterable[tuple[System, float, dict[str, Any]]]:
    """(system, build seconds, its hierarchy's group figures) for the main table:
    every system, or the ``names`` given (in table order)."""
    inputs = Inputs(prepared, report)
    for name in check_names(SYSTEM_NAMES if names is None else names):
        entry = ALL_SYSTEMS[name]
        started = time.perf_counter()
        system = entry.build(inputs)
        seconds = time.perf_counter() - started
        yield system, seconds, group_stats(entry.plan(inputs)) if entry.plan else {}
