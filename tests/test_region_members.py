"""A type's members declared outside its lines (Go methods, Rust impl blocks) scored as its own,
on real parses, a real index and the bundled encoder."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hsc.params import Parameters
from hsc.search.region_table import DEFINITION, build_regions
from hsc.search.regions import rank_regions

GO = """package shelf

import "sort"

// Shelf holds books.
type Shelf struct {
	books    []string // titles, in the order they were put on the shelf
	capacity int      // how many books fit; zero means no limit
	owner    string   // who the shelf belongs to
}

// Add puts a book on the shelf.
func (s *Shelf) Add(title string) {
	s.books = append(s.books, title)
}

// Sorted returns the titles in alphabetical order, leaving the shelf as it was.
func (s *Shelf) Sorted() []string {
	titles := append([]string(nil), s.books...)
	sort.Strings(titles)
	return titles
}

// Count says how many books there are.
func Count(s *Shelf) int {
	return len(s.books)
}
"""

RUST = """/// A temperature reading in degrees Celsius.
pub struct Reading {
    celsius: f64,
}

impl Reading {
    /// Converts the reading to degrees Fahrenheit.
    pub fn fahrenheit(&self) -> f64 {
        self.celsius * 9.0 / 5.0 + 32.0
    }
}

impl std::fmt::Display for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{} C", self.celsius)
    }
}

pub fn average(readings: &[Reading]) -> f64 {
    readings.iter().map(|r| r.celsius).sum::<f64>() / readings.len() as f64
}
"""

SMALL_LEAVES = Parameters(maximum_chunk_token_length=64)

PYTHON = """class Shelf:
    def add(self, title):
        self.books.append(title)


def count(shelf):
    return len(shelf.books)
"""


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, index_files):
    files = {"shelf.go": GO, "reading.rs": RUST, "shelf.py": PYTHON}
    # Leaves of a definition each (a file under the maximum would be one leaf).
    index = index_files(tmp_path_factory.mktemp("members"), "repo", files, SMALL_LEAVES)
    yield index
    index.close()


def _regions(index):
    return build_regions(index.leaf_table(), index.store.definitions(index.repositories()[0]["id"]))


def _row(regions, path, name, kind_lines=None):
    rows = [
        r
        for r in np.flatnonzero(regions.levels == DEFINITION).tolist()
        if regions.paths[r] == path and regions.names[r] == name
    ]
    if kind_lines is not None:
        rows = [r for r in rows if int(regions.start_lines[r]) == kind_lines]
    assert len(rows) == 1, (path, name, rows)
    return rows[0]


def test_go_methods_and_rust_impl_blocks_are_linked_to_their_type_and_python_is_not(indexed):
    regions = _regions(indexed)
    linked = {
        (regions.paths[r], regions.names[r], int(regions.start_lines[r])): regions.names[
            int(regions.extends[r])
        ]
        for r in np.flatnonzero(regions.extends >= 0).tolist()
    }
    shelf, reading = "shelf.Shelf", "reading.Reading"
    assert linked == {
        ("shelf.go", "shelf.Shelf.Add", 13): shelf,
        ("shelf.go", "shelf.Shelf.Sorted", 18): shelf,
        ("reading.rs", reading, 6): reading,  # impl Reading
        ("reading.rs", reading, 13): reading,  # impl Display for Reading
    }
    # The type's own declaration, a plain function taking it, and the file's other regions are not.
    assert regions.extends[_row(regions, "shelf.go", "shelf.Count")] == -1
    assert regions.extends[_row(regions, "reading.rs", reading, 2)] == -1


def test_a_type_is_scored_by_its_best_member_declared_outside_it(indexed, embedder):
    regions = _regions(indexed)
    table = indexed.leaf_table()
    query = embedder.embed(["sort the titles alphabetically"])[0]
    scores = table.vectors @ query
    rows = np.argsort(-scores)
    method = _row(regions, "shelf.go", "shelf.Shelf.Sorted")
    struct = _row(regions, "shelf.go", "shelf.Shelf")
    method_best = float(scores[regions.lo[method] : regions.hi[method]].max())
    struct_own = float(scores[regions.lo[struct] : regions.hi[struct]].max())
    assert method_best > struct_own  # the method says what the question asks, the struct does not

    def ranked(members: bool) -> dict[str, tuple[int, float]]:
        found = rank_regions(
            regions,
            rows,
            scores[rows],
            query,
            len(regions),
            1.0,
            "all",
            ("definition",),
            True,
            members=members,
        )
        return {r.name: (place, r.score) for place, r in enumerate(found) if r.path == "shelf.go"}

    with_members, alone = ranked(True), ranked(False)
    struct, method = with_members["shelf.Shelf"], with_members["shelf.Shelf.Sorted"]
    # By its best leaf alone (best share 1), the struct scores what its best method scores, and comes
    # right after that method, never before it.
    assert struct[0] == method[0] + 1
    assert struct[1] == pytest.approx(method_best, abs=1e-4) and struct[1] < method[1]
    assert alone["shelf.Shelf"][1] == pytest.approx(struct_own, abs=1e-6)


def test_the_query_parameter_chooses_between_the_two_and_keeps_the_members_listed(indexed):
    question = "convert a temperature to fahrenheit"
    answers = {}
    for value in ("outside", "inside"):
        params = dataclasses.replace(Parameters(), region_members=value, region_levels="definition")
        found = indexed.query(question, params=params, record=False, compare=False)
        answers[value] = [(r.name, r.start_line, round(r.score, 6)) for r in found.regions]
    declaration = {
        value: next(a for a in answers[value] if a[:2] == ("reading.Reading", 2)) for value in answers
    }
    impl = {value: next(a for a in answers[value] if a[:2] == ("reading.Reading", 6)) for value in answers}
    assert declaration["outside"][2] > declaration["inside"][2]  # lifted by its impl block's method
    assert impl["outside"][2] == impl["inside"][2]  # the impl block itself is scored as before
    with pytest.raises(ValueError, match="region_members"):
        Parameters(region_members="everywhere")


def test_a_region_side_file_from_before_the_members_is_made_again(tmp_path, index_files, embedder):
    from hsc.api import Index

    question = "convert a temperature to fahrenheit"
    index = index_files(tmp_path, "repo", {"reading.rs": RUST}, SMALL_LEAVES)
    first = index.query(question, record=False, compare=False)
    index.close()
    saved = next((tmp_path / "hnsw").glob("*-regions-*.npz"))
    with np.load(saved) as arrays:
        older = {name: arrays[name] for name in arrays.files if name not in ("extends", "member_vectors")}
    np.savez(saved, **older)  # as an hsc before the members wrote it
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        again = index.query(question, record=False, compare=False)
    assert [r.to_json() for r in again.regions] == [r.to_json() for r in first.regions]
    with np.load(saved) as arrays:  # written again, whole
        assert {"extends", "member_vectors"} <= set(arrays.files)


def test_the_query_page_note_says_when_a_type_counts_its_members(indexed):
    from hsc.app.ui.query_view import regions_note

    response = indexed.query("convert a temperature to fahrenheit", record=False, compare=False)
    said = {
        value: regions_note(response, Parameters(region_members=value)) for value in ("outside", "inside")
    }
    assert "Go or Rust type counts its methods and impl blocks" in said["outside"]
    assert "Go or Rust type" not in said["inside"]
