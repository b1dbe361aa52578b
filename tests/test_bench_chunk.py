"""``bench chunk`` on the bundled samples: both ways of counting cut the same leaves, and it says so."""

from __future__ import annotations

from pathlib import Path

from hsc import linecount
from hsc.bench.chunk import bench_chunk

SAMPLES = Path(__file__).resolve().parent.parent / "sample_repos"


def test_bench_chunk_times_the_cut_with_and_without_the_counting_thread() -> None:
    default = linecount.ENCODE_IN_BACKGROUND
    result = bench_chunk(SAMPLES, workers=1)
    assert result["files_parsed"] > 0 and result["leaves"] > 0
    assert result["chunk_seconds"] > 0 and result["chunk_seconds_thread"] > 0
    assert result["ratio"] > 0 and result["ratio_thread"] > 0 and result["cpu_ratio_thread"] > 0
    edges = result["edge_texts"]
    assert edges["lookups"] > 0 and 0 <= edges["hit_rate"] <= 1
    assert 0 < edges["kept"] <= edges["limit"] and edges["kept_bytes"] > 0
    assert default == linecount.ENCODE_IN_BACKGROUND  # the bench leaves the chunker as it found it
