"""``bench chunk`` on the bundled samples: the cut, its parts and the pool are timed, and it says so."""

from __future__ import annotations

from pathlib import Path

from hsc.bench.chunk import bench_chunk

SAMPLES = Path(__file__).resolve().parent.parent / "hsc" / "samples"


def test_bench_chunk_times_the_cut_and_where_its_time_goes() -> None:
    result = bench_chunk(SAMPLES, workers=1)
    assert result["files_parsed"] > 0 and result["leaves"] > 0
    assert result["chunk_seconds"] > result["parse_seconds"] > 0  # the cut parses too
    parts = result["parts_of_parse"]
    assert parts["parse"] == 1.0 and parts["tokens"] > 0 and parts["facts"] > 0
    assert result["ratio"] > 1 and result["pool_seconds"] > 0
    floor = result["native_floor"]
    assert floor["tokens"] == parts["tokens"] and floor["identifier_query"] > 0
    assert abs(floor["ratio"] - (1 + floor["tokens"] + floor["identifier_query"])) <= 0.02  # each rounded
    assert floor["ratio"] < result["ratio"]  # the cut runs Python on top of its native parts
    edges = result["edge_texts"]
    assert edges["lookups"] > 0 and 0 <= edges["hit_rate"] <= 1
    assert 0 < edges["kept"] <= edges["limit"] and edges["kept_bytes"] > 0
