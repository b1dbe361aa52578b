"""Counting a range line by line gives the tokenizer's own count (what hsc.chunk.packing relies on)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hsc.chunk import packing
from hsc.chunk.linecount import LINE_CUT, WORD_END, line_cuts, split_points
from hsc.chunk.packing import Packer
from hsc.chunk.tokens import TiktokenCounter, get_counter
from hsc.params import Parameters

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
# Characters where cl100k's pre-tokeniser decides something: newlines, other whitespace,
# letters, digits, punctuation that takes newlines, contractions, and non-ASCII (letters,
# digits and marks among them).
ALPHABET = list("\n\n\n\r  \t\t::),.\x0b\x0c\x85\u2028\u00a0\u3000ab Zs'tlldve09:(){}#\"\\é中🙂_x17²\u0301")


def test_the_counter_in_use_adds_up_across_line_cuts() -> None:
    assert get_counter().lines_add_up


@SETTINGS
@given(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=60).map("".join))
def test_counts_add_up_at_every_line_cut_and_word_end(text: str) -> None:
    counter = get_counter()
    data = text.encode("utf-8")
    whole = counter.count(text)
    cuts = [match.end() for pattern in (LINE_CUT, WORD_END) for match in pattern.finditer(data)]
    assert all(0 < cut < len(data) for cut in cuts)
    for cut in cuts:
        head, tail = data[:cut].decode("utf-8"), data[cut:].decode("utf-8")
        assert counter.count(head) + counter.count(tail) == whole, (text, cut)


@SETTINGS
@given(st.lists(st.sampled_from(ALPHABET), max_size=80).map("".join))
def test_line_cuts_are_where_the_pattern_matches(text: str) -> None:
    data = text.encode("utf-8")
    assert line_cuts(data) == [match.end() for match in LINE_CUT.finditer(data)]
    assert Packer(data, Parameters(), get_counter()).newlines == [
        i for i, byte in enumerate(data) if byte == 10
    ]


@SETTINGS
@given(st.lists(st.sampled_from([*ALPHABET, "<|endoftext|>"]), max_size=80).map("".join))
def test_every_split_point_is_a_token_edge_of_the_whole_text(text: str) -> None:
    counter = get_counter()
    data = text.encode("utf-8")
    points = split_points(data).tolist()
    assert points == sorted(
        {match.end() for pattern in (LINE_CUT, WORD_END) for match in pattern.finditer(data)}
    )
    ends = counter.token_ends(text).tolist()
    tokens = counter._encoding.encode_ordinary(text)
    assert len(ends) == len(tokens) == counter.count(text)
    sizes = [len(counter._encoding.decode_single_token_bytes(token)) for token in tokens]
    assert ends == [sum(sizes[: i + 1]) for i in range(len(sizes))]
    assert set(points) <= {0, *ends}


@SETTINGS
@given(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=120).map("".join), st.randoms())
def test_a_packer_counts_every_trimmed_range_as_the_tokenizer_does(text: str, rng: random.Random) -> None:
    counter = get_counter()
    data = text.encode("utf-8")
    edges = [0, *(i for i in range(1, len(data)) if (data[i] & 0xC0) != 0x80), len(data)]
    packer = Packer(data, Parameters(), counter)
    for _ in range(20):
        lo, hi = sorted(rng.sample(edges, 2)) if len(edges) > 1 else (0, len(data))
        start, end = packer.trim(lo, hi)
        assert packer.count(lo, hi) == counter.count(data[start:end].decode("utf-8"))


def test_a_real_file_counts_the_same_either_way() -> None:
    data = Path(packing.__file__).read_bytes()
    packer = Packer(data, Parameters(), get_counter())
    lines = [0, *(match.end() for match in LINE_CUT.finditer(data)), len(data)]
    for lo in lines[:40]:
        for hi in lines[-40:]:
            if hi > lo:
                start, end = packer.trim(lo, hi)
                assert packer.count(lo, hi) == get_counter().count(data[start:end].decode("utf-8"))


def test_ranges_are_counted_whole_when_a_split_point_is_not_a_token_edge() -> None:
    class Misaligned(TiktokenCounter):
        def token_ends(self, text: str) -> np.ndarray:
            return super().token_ends(text) + 1  # every edge one byte late

    data = Path(packing.__file__).read_bytes()[:3000]
    packer = Packer(data, Parameters(), Misaligned())
    lines = [0, *(match.end() for match in LINE_CUT.finditer(data)), len(data)]
    for lo, hi in zip(lines, lines[5:], strict=False):
        start, end = packer.trim(lo, hi)
        assert packer.count(lo, hi) == get_counter().count(data[start:end].decode("utf-8"))
    assert packer._ranges._splits == []  # the check caught it: no split point is used


@SETTINGS
@given(st.lists(st.sampled_from(list("  \t\n\n\r\x0b\x0cab;é")), max_size=60).map("".join), st.randoms())
def test_trimming_agrees_with_stripping_the_slice(text: str, rng: random.Random) -> None:
    """A packer remembers where trimmed ranges start and end; ranges that share a start
    or an end (as packing asks) trim as stripping each slice on its own does."""
    data = text.encode("utf-8")
    packer = Packer(data, Parameters(), get_counter())
    edges = [rng.randint(0, len(data)) for _ in range(6)]
    for _ in range(40):
        lo, hi = rng.choice(edges), rng.choice(edges)
        stripped = data[lo:hi].lstrip(b" \t\n\r\f\v")
        start = hi - len(stripped) if stripped else lo
        end = start + len(stripped.rstrip(b" \t\n\r\f\v")) if stripped else lo
        assert packer.trim(lo, hi) == (start, end), (lo, hi)
