"""Asking at the type level (``--level type``): the regions are types alone, a class nested in a
function or in another class among them; on real parses, a real index and the bundled encoder."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hsc.params import Parameters
from hsc.search.region_table import ANSWER_TYPE_KINDS, DEFINITION, build_regions
from hsc.search.regions import level_overrides

PYTHON = '''import dataclasses
import socketserver


def listen(port):
    """Starts a server that reads logging configurations sent to ``port``."""

    class ConfigRequestHandler(socketserver.StreamRequestHandler):
        def handle(self):
            size = int.from_bytes(self.connection.recv(4), "big")
            self.server.apply(self.connection.recv(size).decode("utf-8"))

    class ConfigReceiver(socketserver.ThreadingTCPServer):
        def apply(self, text):
            self.configurations.append(text)

    return ConfigReceiver(("localhost", port), ConfigRequestHandler)


class Playlist:
    @dataclasses.dataclass
    class Track:
        title: str
        seconds: int

    def __init__(self):
        self.tracks = []

    def length(self):
        return sum(track.seconds for track in self.tracks)


def longest(playlist):
    return max(playlist.tracks, key=lambda track: track.seconds)
'''

RUST = """/// Counts the events seen over some seconds.
pub struct RateMeter {
    events: u64,
    seconds: u64,
}

impl RateMeter {
    /// How many events arrived per second, on average.
    pub fn per_second(&self) -> f64 {
        self.events as f64 / self.seconds.max(1) as f64
    }
}

pub fn total(meters: &[RateMeter]) -> u64 {
    meters.iter().map(|m| m.events).sum()
}
"""

SMALL_LEAVES = Parameters(maximum_chunk_token_length=64)
QUESTIONS = (
    "the handler of one logging configuration request",
    "one song of a playlist",
    "events per second on average",
)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, index_files):
    index = index_files(
        tmp_path_factory.mktemp("types"), "repo", {"logs.py": PYTHON, "rates.rs": RUST}, SMALL_LEAVES
    )
    yield index
    index.close()


def _kinds(index) -> dict[tuple[str, int], str]:
    """(qualified name, first line) -> kind: a Rust type and its impl block share a name."""
    definitions = index.store.definitions(index.repositories()[0]["id"])
    return {(d.scope, d.start_line): d.kind for found in definitions.values() for d in found}


def test_region_kinds_are_the_definitions_kinds_and_a_side_file_keeps_them(indexed, tmp_path):
    from hsc.search.region_table import region_arrays, regions_from_arrays

    regions = build_regions(indexed.leaf_table(), indexed.store.definitions(indexed.repositories()[0]["id"]))
    kinds = _kinds(indexed)
    for row in range(len(regions)):
        level = int(regions.levels[row])
        expected = kinds[regions.names[row], int(regions.start_lines[row])] if level == DEFINITION else ""
        assert regions.kinds[row] == expected
    assert "impl" in set(regions.kinds.tolist()) and "impl" not in ANSWER_TYPE_KINDS
    arrays = region_arrays(regions)
    assert regions_from_arrays(arrays, regions.vectors).kinds.tolist() == regions.kinds.tolist()
    # An older hsc's side file has no kinds: the table is made again.
    assert regions_from_arrays({k: v for k, v in arrays.items() if k != "kinds"}, regions.vectors) is None


def test_the_type_level_lists_types_alone_nested_ones_too(indexed):
    kinds = _kinds(indexed)
    for question in QUESTIONS:
        asked = indexed.query(question, params=level_overrides("type"), record=False, compare=False)
        assert asked.regions and {r.level for r in asked.regions} == {"definition"}
        assert {kinds[r.name, r.start_line] for r in asked.regions} <= ANSWER_TYPE_KINDS
    every = indexed.query(
        QUESTIONS[0], params={**level_overrides("type"), "region_count": 20}, record=False, compare=False
    )
    assert {r.name for r in every.regions} == {
        "logs.listen.ConfigRequestHandler",
        "logs.listen.ConfigReceiver",
        "logs.Playlist",
        "logs.Playlist.Track",
        "rates.RateMeter",
    }
    # The definition level lists the function that holds the nested classes, and not the classes.
    defined = indexed.query(QUESTIONS[0], params=level_overrides("definition"), record=False, compare=False)
    names = {r.name for r in defined.regions}
    assert "logs.listen" in names and "logs.listen.ConfigRequestHandler" not in names


def test_a_rust_type_at_the_type_level_is_scored_by_its_impl_block(indexed):
    """The impl block is not listed at the type level; with region_members outside it lends its
    type its best leaf, so the struct, declared by its fields alone, scores its method's leaf."""
    scores = {}
    for members in ("outside", "inside"):
        params = {**level_overrides("type"), "region_members": members}
        asked = indexed.query(QUESTIONS[2], params=params, record=False, compare=False)
        assert asked.regions[0].name == "rates.RateMeter" and asked.regions[0].start_line == 2
        scores[members] = asked.regions[0].score
    assert scores["outside"] > scores["inside"] + 0.05


def test_the_type_level_lists_nested_types_whatever_region_definitions_says(indexed):
    for value in ("outermost", "containers", "all"):
        params = {**level_overrides("type"), "region_definitions": value, "region_count": 20}
        asked = indexed.query(QUESTIONS[1], params=params, record=False, compare=False)
        assert {"logs.Playlist", "logs.Playlist.Track"} <= {r.name for r in asked.regions}


def test_cli_asks_at_the_type_level_and_refuses_an_unknown_level(indexed, tmp_path):
    db = str(indexed.store.path)
    command = [
        sys.executable,
        "-m",
        "hsc",
        "query",
        QUESTIONS[0],
        "--db",
        db,
        "--regions",
        "--level",
        "type",
        "--json",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    regions = json.loads(done.stdout)["regions"]
    kinds = _kinds(indexed)
    assert regions and all(
        r["level"] == "definition" and kinds[r["name"], r["start_line"]] in ANSWER_TYPE_KINDS for r in regions
    )
    bad = subprocess.run([*command[:-3], "--level", "kind", "--json"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'kind'" in bad.stderr
    with pytest.raises(ValueError, match="level must be one of any, definition, type"):
        level_overrides("kind")
