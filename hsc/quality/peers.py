"""The issue's peers in ``bench quality``: chunkers that know nothing of the syntax tree,
searched flat, with the variants the issue measured them in.

- ``lines-40``: windows of 40 lines, no overlap;
- ``chonkie-512``: chonkie's recursive chunker at 512 cl100k tokens (its code chunker
  needs a newer tree-sitter-language-pack than the one hsc pins, so it cannot run here);

each as it is, ``+path`` (the file's path on the line above the chunk's text, before
embedding), ``+bm25`` (BM25 over the peer's own chunks, fused with the dense scores by
reciprocal-rank fusion) or both, and each embedded either with the encoder of the run
(the bundled default) or, with the ``@minilm`` suffix, with the base all-MiniLM-L6-v2
that the issue's peers used (ONNX fp32 at the model's own 256-piece window: the same
vectors as sentence-transformers, read from the copy inside site-packages).

Texts are embedded once and cached in the run's database by content hash, as the token
windows are. BM25 is SQLite FTS5 over hsc's identifier-aware terms (``term_text``), so a
peer's lexical side reads code names as hsc's does: the peer gets the better of the two.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsc.embed.base import EncoderSpec, encoder_cache_dir
from hsc.params import DEFAULT_MODEL, DEFAULT_TOKENIZER
from hsc.quality.systems import Ranking, Units, cached_embedder
from hsc.search.lexical import match_expression, term_text
from hsc.search.two_stage import flat_search

PEER_LINES = 40  # the "40-line windows"
PEER_TOKENS = 512  # the "chonkie 512"
# BM25 hits fused with the dense ranking (every other chunk adds nothing from BM25).
PEER_LEXICAL_CANDIDATES = 100
# The base model of the peers, through ONNX fp32 at its own window (no tuning, no int8).
BASE_ENCODER = EncoderSpec(DEFAULT_MODEL, "onnx", None, "truncate")
CHUNKERS = {f"lines-{PEER_LINES}": "lines", f"chonkie-{PEER_TOKENS}": "chonkie"}
VARIANTS = ("", "+path", "+bm25", "+path+bm25")
ENCODERS = ("", "@minilm")
PEER_NAMES = tuple(f"{c}{v}{e}" for e in ENCODERS for c in CHUNKERS for v in VARIANTS)

Chunk = tuple[int, int, str]  # first line, last line (1-based, inclusive), text


def line_chunks(source: str, lines: int = PEER_LINES) -> list[Chunk]:
    """Consecutive windows of ``lines`` lines; a window of blank lines alone is left out."""
    rows = source.splitlines()
    out = []
    for start in range(0, len(rows), lines):
        text = "\n".join(rows[start : start + lines])
        if text.strip():
            out.append((start + 1, min(start + lines, len(rows)), text))
    return out


@functools.lru_cache(maxsize=1)
def _recursive_chunker(size: int) -> Any:
    try:
        import tiktoken
        from chonkie import RecursiveChunker
    except ImportError as error:
        raise RuntimeError(f"the chonkie peers need chonkie ({error}): pip install 'hsc[bench]'") from error
    # cl100k from the offline copy hsc counts with: chonkie's own default would fetch a tokenizer.
    return RecursiveChunker(tokenizer=tiktoken.get_encoding(DEFAULT_TOKENIZER), chunk_size=size)


def chonkie_chunks(source: str, size: int = PEER_TOKENS) -> list[Chunk]:
    """chonkie's recursive chunks of at most ``size`` tokens, as whole lines: a chunk's
    first and last lines are those its first and last non-blank characters fall on."""
    out = []
    for chunk in _recursive_chunker(size).chunk(source):
        text = chunk.text
        if not text.strip():
            continue
        lead = len(text) - len(text.lstrip())
        first = source.count("\n", 0, chunk.start_index + lead) + 1
        last = source.count("\n", 0, chunk.start_index + len(text.rstrip())) + 1
        out.append((first, last, text.strip("\n")))
    return out


CHUNKING: dict[str, Callable[[str], list[Chunk]]] = {"lines": line_chunks, "chonkie": chonkie_chunks}


def peer_text(path: str, text: str, with_path: bool) -> str:
    """What a peer embeds (and BM25 reads): the chunk, after its file's path with ``+path``."""
    return f"{path}\n{text}" if with_path else text


class Lexicon:
    """BM25 over a peer's chunk texts: an in-memory SQLite FTS5 table of their terms."""

    def __init__(self, texts: list[str]) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE chunks USING fts5(terms)")
        self.db.executemany(
            "INSERT INTO chunks(rowid, terms) VALUES (?, ?)", [(r, term_text(t)) for r, t in enumerate(texts)]
        )

    def search(self, query: str, limit: int = PEER_LEXICAL_CANDIDATES) -> dict[int, float]:
        """Row -> BM25 score (higher is better) of the best ``limit`` chunks matching any query term."""
        match = match_expression(query)
        if not match:
            return {}
        found = self.db.execute(
            "SELECT rowid, -bm25(chunks) FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?",
            (match, limit),
        )
        return {int(row): float(score) for row, score in found}


@dataclass
class PeerEncoder:
    """How a peer embeds: chunk texts through the run's vector cache, and queries
    (None: the run's own query vectors, already made by the same encoder)."""

    embed_texts: Callable[[list[str]], np.ndarray]
    queries: dict[str, np.ndarray] | None = None


class Peer:
    """One peer variant: its chunks of every file, searched flat (exact cosine), with ``bm25``
    fused by reciprocal-rank fusion (hsc.search.lexical.fuse, ``rrf``)."""

    def __init__(
        self, name: str, chunks: dict[str, list[Chunk]], encoder: PeerEncoder, with_path: bool, bm25: bool
    ) -> None:
        self.name, self.encoder = name, encoder
        paths, starts, ends, texts = [], [], [], []
        for path, found in sorted(chunks.items()):
            for start, end, text in found:
                paths.append(path)
                starts.append(start)
                ends.append(end)
                texts.append(peer_text(path, text, with_path))
        self.texts = texts
        self.units = Units(paths, np.array(starts), np.array(ends), np.full(len(paths), -1))
        self.vectors = encoder.embed_texts(texts)
        self.lexicon = Lexicon(texts) if bm25 else None

    def search(self, vector: np.ndarray, text: str, k: int) -> Ranking:
        if self.encoder.queries is not None:
            vector = self.encoder.queries[text]
        lexical = self.lexicon.search(text) if self.lexicon else None
        found = flat_search(self.vectors, vector, k, lexical, 1.0 if lexical else 0.0, fusion="rrf")
        return Ranking([h.row for h in found.leaves], found.leaves_compared)


def parse_name(name: str) -> tuple[str, bool, bool, bool]:
    """(chunking, with path, with BM25, base MiniLM) of a peer's name."""
    base, _, encoder = name.partition("@")
    chunker = next(c for c in CHUNKERS if base == c or base.startswith(c + "+"))
    rest = base[len(chunker) :]
    return CHUNKERS[chunker], "+path" in rest, "+bm25" in rest, encoder == "minilm"


def about(name: str) -> str:
    chunking, with_path, bm25, minilm = parse_name(name)
    what = (
        f"{PEER_LINES}-line windows"
        if chunking == "lines"
        else f"chonkie's recursive {PEER_TOKENS}-token chunks"
    )
    extras = [e for e, on in (("path prefix", with_path), ("BM25 by RRF", bm25)) if on]
    encoder = "the base all-MiniLM-L6-v2" if minilm else "the run's encoder"
    return f"peer: {what}" + (f" with {' and '.join(extras)}" if extras else "") + f", {encoder}"


class PeerInputs:
    """What the peers of one run share, each made on first use: every file's chunks per
    chunking, and the base MiniLM with the run's queries embedded by it."""

    def __init__(self, prepared: Any, report: Callable[[str], None]) -> None:
        self.prepared, self.report = prepared, report
        self._chunks: dict[str, dict[str, list[Chunk]]] = {}

    def chunks(self, chunking: str) -> dict[str, list[Chunk]]:
        if chunking not in self._chunks:
            cut = CHUNKING[chunking]
            self._chunks[chunking] = {path: cut(source) for path, source in self.prepared.files.items()}
        return self._chunks[chunking]

    @functools.cached_property
    def own(self) -> PeerEncoder:
        return PeerEncoder(self.prepared.corpus.embed_texts)

    @functools.cached_property
    def base(self) -> PeerEncoder:
        from hsc.embed.factory import make_embedder

        self.report(f"the peers' base encoder {BASE_ENCODER.describe()} (embedding once, then cached)")
        store = self.prepared.corpus.store
        embedder = make_embedder(BASE_ENCODER, encoder_cache_dir(store.path.parent), "cpu")
        embed = cached_embedder(store, embedder.embed, BASE_ENCODER.key)
        asked = list(dict.fromkeys(t.query for t in self.prepared.targets))
        return PeerEncoder(embed, dict(zip(asked, embed(asked))) if asked else {})

    def build(self, name: str) -> Peer:
        chunking, with_path, bm25, minilm = parse_name(name)
        self.report(f"{name}: chunks embedded once, then cached")
        return Peer(name, self.chunks(chunking), self.base if minilm else self.own, with_path, bm25)
