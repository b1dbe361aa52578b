"""The systems compared, each over the same leaves, queries and model.

A system has a ``name``, the ``units`` it ranks (the index's leaves, or for
the token-window baseline its own windows) and
``search(query_vector, query_text, k) -> Ranking``. Everything is built from
the index's cached vectors; extra texts (windows, contextual leaves, group
texts) are embedded once and cached in the index database by content hash.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from hsc.chunk.parse import module_name
from hsc.chunk.tokens import TokenCounter
from hsc.hierarchy.groups import HierarchyPlan, LeafTable
from hsc.model import common_scope, content_hash
from hsc.search.answers import full_answer
from hsc.search.lexical import TermCounts, match_expression
from hsc.search.names import kept_terms, name_boost
from hsc.search.two_stage import MidLevelIndex, Retrieval, TwoStageRetriever, flat_search, top_k
from hsc.store import Store

# Leaves BM25 adds to the candidates of a hybrid search.
LEXICAL_CANDIDATES = 50


@dataclass(frozen=True)
class Units:
    """What a system ranks: spans of the corpus, with the index's leaf id (-1 for a window)."""

    paths: list[str]
    start_lines: np.ndarray
    end_lines: np.ndarray
    leaf_ids: np.ndarray

    @functools.cached_property
    def _path_array(self) -> np.ndarray:
        return np.array(self.paths, dtype=object)

    def rows_of(self, path: str, start_line: int, end_line: int) -> np.ndarray:
        """Rows of the units in ``path`` whose lines overlap ``start_line``..``end_line``."""
        inside = (self._path_array == path) & (self.start_lines <= end_line) & (self.end_lines >= start_line)
        return np.flatnonzero(inside)

    def where(self, row: int) -> str:
        """ "path:first-last" of one unit."""
        return f"{self.paths[row]}:{int(self.start_lines[row])}-{int(self.end_lines[row])}"

    @classmethod
    def of_leaves(cls, table: LeafTable) -> Units:
        return cls(
            [table.paths[i] for i in table.file_index], table.start_lines, table.end_lines, table.leaf_ids
        )


@dataclass(frozen=True)
class Ranking:
    rows: list[int]  # rows of the system's units, best first
    scored: int  # units whose score was computed exactly
    groups: list[int] = field(default_factory=list)  # stage-1 group ordinals, when there is a stage 1
    lexical_ms: float = 0.0  # the BM25 look-up's own time (it is cached across systems)
    # A result that joins a split definition's pieces: its first row -> every piece's row.
    members: dict[int, list[int]] = field(default_factory=dict)


class System(Protocol):
    name: str
    units: Units

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking: ...


@dataclass
class Corpus:
    """The indexed corpus the systems share: leaves, their texts, the store and a cached embedder."""

    table: LeafTable
    texts: list[str]  # leaf texts, table order
    store: Store
    repository_id: int
    embed_texts: Callable[[list[str]], np.ndarray]
    lexical_term_share: float = 1.0  # BM25 leaves out terms in more of the leaves (Parameters)
    lexical_name_weight: float = 1.0  # BM25's weight of a term among a leaf's names (Parameters)
    exact_name_weight: float = 0.0  # added to a leaf holding a definition the query names (Parameters)
    leaf_units: Units = field(init=False)
    row_of_leaf: dict[int, int] = field(init=False)
    _lexical_cache: dict[tuple[str, int], tuple[dict[int, float], float]] = field(init=False)
    term_counts: TermCounts = field(init=False)

    def __post_init__(self) -> None:
        self.leaf_units = Units.of_leaves(self.table)
        self.row_of_leaf = {int(leaf_id): row for row, leaf_id in enumerate(self.table.leaf_ids)}
        self._lexical_cache = {}
        self.term_counts = TermCounts(self.store.term_documents, self.store.leaf_count)

    def lexical(self, text: str, limit: int = LEXICAL_CANDIDATES) -> tuple[dict[int, float], float]:
        """Leaf row -> BM25 score of the best ``limit`` leaves, and the look-up's time
        in ms. Memoised: every hybrid system asks the same questions, and the
        time of the first look-up is handed back each time, so latencies stay honest."""
        key = (text, limit)
        if key not in self._lexical_cache:
            started = time.perf_counter()
            kept = kept_terms(text) if self.exact_name_weight > 0 else set()
            match = match_expression(text, self.term_counts, self.lexical_term_share, kept)
            found = self.store.lexical_search(self.repository_id, match, limit, self.lexical_name_weight)
            rows = {self.row_of_leaf[i]: s for i, s in found if i in self.row_of_leaf}
            self._lexical_cache[key] = (rows, (time.perf_counter() - started) * 1000)
        return self._lexical_cache[key]

    def boost(self, text: str) -> dict[int, float]:
        """Leaf row -> exact_name_weight for the leaves holding a definition the query names."""
        lookup = lambda names: self.store.definitions_named(self.repository_id, names)  # noqa: E731
        return name_boost(text, self.table, lookup, self.exact_name_weight)


def cached_embedder(store: Store, embed: Callable[[list[str]], np.ndarray], model: str) -> Callable:
    """Embed texts through the store's vector cache (keyed by model and text hash)."""

    def embed_texts(texts: list[str]) -> np.ndarray:
        hashes = [content_hash(t) for t in texts]
        found = store.cached_vectors(model, hashes)
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            by_hash = {content_hash(t): t for t in texts}
            for start in range(0, len(missing), 256):  # commit as we go: a killed run keeps its work
                part = missing[start : start + 256]
                vectors = embed([by_hash[h] for h in part])
                store.save_vectors(model, dict(zip(part, vectors)))
                found.update(zip(part, vectors))
        return np.stack([found[h] for h in hashes]).astype(np.float32) if texts else np.zeros((0, 1))

    return embed_texts


# -- leaves searched flat ----------------------------------------------------------------


class Flat:
    """(b) Exact cosine over every leaf (``lexical_weight`` > 0: fused with BM25)."""

    def __init__(self, corpus: Corpus, lexical_weight: float = 0.0, name: str = "flat") -> None:
        self.name, self.corpus, self.lexical_weight = name, corpus, lexical_weight
        self.units = corpus.leaf_units
        self.vectors = corpus.table.vectors

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        lexical, lexical_ms = self.corpus.lexical(text) if self.lexical_weight else (None, 0.0)
        boost = self.corpus.boost(text) if self.lexical_weight else None
        found = flat_search(
            self.vectors, vector, k, lexical, self.lexical_weight, self.corpus.table.definitions, boost
        )
        return Ranking([h.row for h in found.leaves], found.leaves_compared, lexical_ms=lexical_ms)


class HnswLeaves:
    """(c) An HNSW graph over all leaves; the leaves it scores are not counted (a graph walk)."""

    def __init__(self, corpus: Corpus, name: str = "hnsw-leaves") -> None:
        self.name, self.units = name, corpus.leaf_units
        self.index = MidLevelIndex.build(corpus.table.vectors)

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        return Ranking([h.ordinal for h in self.index.search(vector, k)], 0)


class TokenWindows:
    """(a) Fixed-size token windows with overlap, cut along lines, searched flat."""

    def __init__(
        self, corpus: Corpus, files: dict[str, str], counter: TokenCounter, size: int = 256, overlap: int = 64
    ) -> None:
        self.name = f"windows-{size}/{overlap}"
        paths, starts, ends, texts = [], [], [], []
        for path, source in sorted(files.items()):
            for start, end, text in token_windows(source, counter, size, overlap):
                paths.append(path)
                starts.append(start)
                ends.append(end)
                texts.append(f"{module_name(path)}\n{text}")
        self.units = Units(paths, np.array(starts), np.array(ends), np.full(len(paths), -1))
        self.vectors = corpus.embed_texts(texts)

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        found = flat_search(self.vectors, vector, k)
        return Ranking([h.row for h in found.leaves], found.leaves_compared)


def token_windows(source: str, counter: TokenCounter, size: int, overlap: int) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of windows of whole lines up to ``size``
    tokens, each starting where the previous one's last ``overlap`` tokens do."""
    lines = source.splitlines()
    counts = [counter.count(line + "\n") for line in lines]
    windows, start = [], 0
    while start < len(lines):
        end, total = start, 0
        while end < len(lines) and (end == start or total + counts[end] <= size):
            total += counts[end]
            end += 1
        text = "\n".join(lines[start:end])
        if text.strip():
            windows.append((start + 1, end, text))
        if end >= len(lines):
            break
        back, kept = end, 0
        while back - 1 > start and kept + counts[back - 1] <= overlap:
            back -= 1
            kept += counts[back]
        start = back
    return windows


# -- hierarchies -----------------------------------------------------------------------------


class TwoStage:
    """(d) the seed's two stages and (f) its variants: a leaf share for stage 1,
    the group's score fused into the leaf's, group vectors from elsewhere, BM25."""

    def __init__(
        self,
        corpus: Corpus,
        plan: HierarchyPlan,
        mid_level_top_k: int,
        name: str = "two-stage",
        leaf_share: float = 0.0,
        group_weight: float = 0.0,
        lexical_weight: float = 0.0,
        group_vectors: np.ndarray | None = None,
        lexical_candidates: int = LEXICAL_CANDIDATES,
    ) -> None:
        self.name, self.corpus, self.units = name, corpus, corpus.leaf_units
        self.lexical_candidates = lexical_candidates
        self.mid_level_top_k, self.leaf_share = mid_level_top_k, leaf_share
        self.leaf_budget = math.ceil(leaf_share * len(corpus.table))
        self.group_weight, self.lexical_weight = group_weight, lexical_weight
        vectors = plan.group_vectors if group_vectors is None else group_vectors
        self.group_vectors, self.group_starts = vectors, plan.group_starts
        self.retriever = TwoStageRetriever(
            corpus.table.vectors,
            plan.group_starts,
            plan.group_ends,
            MidLevelIndex.build(vectors),
            corpus.table.definitions,
        )

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        found, lexical_ms = self.retrieve(vector, text, k)
        groups = found.groups.ordinals.tolist()
        return Ranking([h.row for h in found.leaves], found.leaves_compared, groups, lexical_ms)

    def retrieve(self, vector: np.ndarray, text: str, k: int) -> tuple[Retrieval, float]:
        """The retriever's answer (leaves with their scores) and the BM25 look-up's time in ms."""
        lexical, lexical_ms = (
            self.corpus.lexical(text, self.lexical_candidates) if self.lexical_weight else (None, 0.0)
        )
        found = self.retriever.search(
            vector,
            self.mid_level_top_k,
            k,
            self.leaf_budget,
            self.group_weight,
            lexical,
            self.lexical_weight,
            self.corpus.boost(text) if self.lexical_weight else None,
        )
        return found, lexical_ms

    def group_ranks(self, vector: np.ndarray, rows: np.ndarray, opened: list[int]) -> dict[str, Any]:
        """Why stage 2 did or did not see the leaves ``rows``: how many groups stage 1
        opened, the rank among them of the first group holding one of the rows, and
        that group's rank among all groups by exact cosine."""
        out: dict[str, Any] = {"groups_opened": len(opened), "groups": len(self.group_vectors)}
        if not len(rows):
            return out
        holding = set(np.searchsorted(self.group_starts, rows, side="right").tolist())
        holding = {g - 1 for g in holding}
        out["group_rank"] = next((n for n, g in enumerate(opened, 1) if g in holding), None)
        scores = self.group_vectors @ vector
        best = float(scores[sorted(holding)].max())
        out["group_rank_exact"] = 1 + int((scores > best).sum())
        return out


class CollapsedTree:
    """(e) RAPTOR's collapsed tree: leaves, groups and documents ranked together
    exactly; a group or document hit is replaced by its leaves, best first."""

    def __init__(self, corpus: Corpus, plan: HierarchyPlan, name: str = "collapsed-tree") -> None:
        self.name, self.units = name, corpus.leaf_units
        self.leaves = corpus.table.vectors
        self.n_leaves, self.n_groups = len(self.leaves), plan.group_count
        self.nodes = np.vstack([self.leaves, plan.group_vectors, plan.document_vectors])
        doc_starts = plan.group_starts[plan.document_group_starts]
        doc_ends = plan.group_ends[plan.document_group_ends - 1]
        self.spans = np.concatenate(
            [
                np.stack([np.arange(self.n_leaves), np.arange(1, self.n_leaves + 1)], axis=1),
                np.stack([plan.group_starts, plan.group_ends], axis=1),
                np.stack([doc_starts, doc_ends], axis=1),
            ]
        )

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        scores = self.nodes @ vector
        leaf_scores = scores[: self.n_leaves]
        rows: list[int] = []
        seen: set[int] = set()
        for node in top_k(scores, len(scores)):
            lo, hi = self.spans[node]
            inside = np.arange(lo, hi)
            for row in inside[np.argsort(-leaf_scores[inside], kind="stable")]:
                if int(row) not in seen:
                    seen.add(int(row))
                    rows.append(int(row))
            if len(rows) >= k:
                break
        return Ranking(rows[:k], len(scores))


class Joined:
    """Another system's ranking as :meth:`hsc.api.Index.query` answers by default: the pieces of a
    split definition joined into one result, and as many leaves asked for as it takes to hand back
    ``k`` results (``full``; else the seed's ``k`` leaves, joined: fewer results)."""

    def __init__(self, inner: Any, table: LeafTable, name: str, full: bool = True) -> None:
        self.inner, self.table, self.name, self.full = inner, table, name, full
        self.units = inner.units
        for knob in ("mid_level_top_k", "leaf_share", "lexical_weight", "lexical_candidates"):
            if hasattr(inner, knob):
                setattr(self, knob, getattr(inner, knob))

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        found, rows, runs = full_answer(
            lambda ask: self.inner.search(vector, text, ask), lambda r: r.rows, self.table, k, self.full
        )
        firsts: dict[object, int] = {}
        members: dict[int, list[int]] = {}
        for row in rows:
            first = firsts.setdefault(runs.get(row, ("row", row)), row)
            members.setdefault(first, []).append(row)
        return Ranking(list(members), found.scored, found.groups, found.lexical_ms, members)


# -- texts for the variants that embed something new ----------------------------------------


def group_texts(corpus: Corpus, plan: HierarchyPlan, summaries: dict[int, str] | None = None) -> list[str]:
    """Each group's text as the model would read it: its common scope, then its
    leaves' text (or its summary when given)."""
    out = []
    for ordinal in range(plan.group_count):
        lo, hi = int(plan.group_starts[ordinal]), int(plan.group_ends[ordinal])
        scope = common_scope(corpus.table.scopes[lo:hi])
        body = (summaries or {}).get(ordinal) or "\n".join(corpus.texts[lo:hi])
        out.append(f"{scope}\n{body}")
    return out


def contextual_texts(paths: list[str], scopes: list[str], texts: list[str], reach: int = 3) -> list[str]:
    """Each leaf (given in document order, ``paths`` per leaf) with a short header in
    the manner of contextual retrieval: its file and the names defined just around
    it. Neighbours rather than the leaf's group, so the vectors do not depend on
    the grouping parameters; never the corpus's blanked docs."""
    out = []
    for row, (path, scope, text) in enumerate(zip(paths, scopes, texts)):
        lo, hi = max(0, row - reach), min(len(paths), row + reach + 1)
        names = [scopes[i].rsplit(".", 1)[-1] for i in range(lo, hi) if paths[i] == path and i != row]
        header = f"file {path}; near {', '.join(dict.fromkeys(names))}"
        out.append(f"{header}\n{scope}\n{text}")
    return out


def describe(system: Any) -> dict[str, Any]:
    """The knobs of a system, for tables."""
    keys = ("mid_level_top_k", "leaf_share", "group_weight", "lexical_weight", "lexical_candidates")
    return {key: getattr(system, key) for key in keys if hasattr(system, key)}
