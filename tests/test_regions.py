"""Answers above the leaves: region and file rankings, their benchmark kinds and the structure rule,
on real parses, a real index and the bundled encoder."""

from __future__ import annotations

import json
import mmap
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hsc.hierarchy.boundaries import container_edges, segment
from hsc.quality.corpus import Target, build_corpus
from hsc.quality.regions import (
    MISS_CAUSES,
    _enclosing,
    first_answers,
    holds,
    miss_cause,
    strict_hit,
)
from hsc.search.region_table import LEVELS, build_regions
from hsc.search.regions import rank_files, rank_regions

ROOT = Path(__file__).resolve().parent.parent

SOURCE = '''"""Tools that keep a ledger of payments and print monthly statements."""


class Ledger:
    """A ledger of payments, each kept with its date and amount in cents."""

    def __init__(self):
        self.entries = []

    def add(self, date, cents):
        self.entries.append((date, cents))

    def total(self):
        value = 0
        for _, cents in self.entries:
            value += cents
        return value


def statement(ledger):
    """Print every payment of the ledger, one a line."""
    for date, cents in ledger.entries:
        print(date, cents)
'''


def test_class_and_module_kinds_ask_for_the_class_and_the_whole_file(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "ledger.py").write_text(SOURCE)
    lines = SOURCE.splitlines()
    classes = build_corpus([(source, "")], tmp_path / "c" / "corpus", None, 0, "class").targets
    assert [(t.name, t.start_line, t.end_line) for t in classes] == [
        ("Ledger", lines.index("class Ledger:") + 1, lines.index("        return value") + 1)
    ]
    assert classes[0].query == "A ledger of payments, each kept with its date and amount in cents."
    modules = build_corpus([(source, "")], tmp_path / "m" / "corpus", None, 0, "module")
    assert [(t.path, t.start_line, t.end_line) for t in modules.targets] == [("ledger.py", 1, len(lines))]
    blanked = (modules.root / "ledger.py").read_text()
    assert "keep a ledger" not in blanked and "A ledger of payments" not in blanked
    assert len(blanked.splitlines()) == len(lines)


GO_TYPES = """package ledger

// Ledger keeps payments, each with its date and amount in cents.
type Ledger struct {
\tentries []Entry
\towner   string
\tclosed  bool
}

// Entry is one payment.
type Entry struct{ cents int }

// Total returns the sum of the ledger's payments in cents.
func (l *Ledger) Total() int {
\tsum := 0
\tfor _, e := range l.entries {
\t\tsum += e.cents
\t}
\treturn sum
}
"""

TS_TYPES = """/** A store that keeps the payments of one account in memory. */
export class PaymentStore {
    private items: number[] = [];
    add(cents: number): void {
        this.items.push(cents);
    }
}

/** The shape every payment source has to offer the store. */
interface PaymentSource {
    next(): number;
    done(): boolean;
    reset(): void;
}
"""


def test_class_kind_asks_for_go_structs_and_typescript_classes_and_interfaces(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "ledger.go").write_text(GO_TYPES)
    (source / "store.ts").write_text(TS_TYPES)
    corpus = build_corpus([(source, "")], tmp_path / "c" / "corpus", None, 0, "class")
    # Go's leading name is dropped; a type under five lines (Entry) and a method are not asked about.
    assert [(t.path, t.name, t.start_line, t.end_line, t.query) for t in corpus.targets] == [
        ("ledger.go", "Ledger", 4, 8, "keeps payments, each with its date and amount in cents."),
        ("store.ts", "PaymentStore", 2, 7, "A store that keeps the payments of one account in memory."),
        ("store.ts", "PaymentSource", 10, 14, "The shape every payment source has to offer the store."),
    ]
    go = (corpus.root / "ledger.go").read_text()
    ts = (corpus.root / "store.ts").read_text()
    # Every doc is blanked, a type's asked about or not, as every docstring is in Python; the
    # lines stay where they were.
    assert "keeps payments" not in go and "one payment" not in go and "Total returns" not in go
    assert "shape every" not in ts and "A store that" not in ts
    assert len(go.splitlines()) == len(GO_TYPES.splitlines())


def test_a_strict_region_is_mostly_inside_the_target_and_covers_a_third_of_it():
    target = Target("q", "a.py", 11, 40, "Ledger")
    assert strict_hit(target, ("a.py", 11, 40)) and strict_hit(target, ("a.py", 5, 25))
    assert not strict_hit(target, ("a.py", 12, 18))  # a method: inside, but a fifth of the class
    assert not strict_hit(target, ("a.py", 1, 200))  # the file: covers it, but mostly elsewhere
    assert not strict_hit(target, ("b.py", 11, 40)) and not strict_hit(target, ("a.py", None, None))
    assert holds(target, ("a.py", 1, 200)) and not holds(target, ("a.py", 12, 18))


def test_container_edges_cut_between_a_class_and_the_top_level_around_it():
    scopes = ["m", "m.Ledger", "m.Ledger.add", "m.Ledger.total", "m.statement", "m.helper", "n", "n.Other.x"]
    files = np.array([0, 0, 0, 0, 0, 0, 1, 1], dtype=np.int32)
    # The class's header and methods are one run; the two top-level functions another (no holders).
    assert container_edges(scopes, files).tolist() == [True, False, False, True, False, False, True]
    vectors = np.tile(np.eye(1, 4, dtype=np.float32), (8, 1))  # all alike: no valley anywhere
    valley = segment(vectors, files, 0.5, 1, "valley", scopes).boundaries
    structure = segment(vectors, files, 0.5, 1, "structure", scopes).boundaries
    assert valley.tolist() == [False] * 5 + [True, False]
    assert structure.tolist() == [True, False, False, True, False, True, True]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder):
    from hsc.api import Index

    root = tmp_path_factory.mktemp("regions")
    repo = root / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    index = Index.open(root / "index.db", embedder=embedder)
    index.index(repo)
    yield index, root
    index.close()


def test_regions_are_runs_of_leaves_with_their_definitions_and_pooled_vectors(indexed):
    index, _ = indexed
    table = index.leaf_table()
    definitions = index.store.definitions(index.repositories()[0]["id"])
    regions = build_regions(table, definitions)
    assert len(regions) and set(regions.levels.tolist()) == {0, 1, 2}  # no groups given
    for row in range(len(regions)):
        lo, hi = int(regions.lo[row]), int(regions.hi[row])
        assert 0 <= lo < hi <= len(table)
        if LEVELS[regions.levels[row]] != "folder":
            # Every leaf of a file's or definition's run is in its file.
            assert {table.paths[int(f)] for f in table.file_index[lo:hi]} == {regions.paths[row]}
    norms = np.linalg.norm(regions.vectors, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-4)
    # A class of the sample is a region whose lines are the stored definition's.
    stored = next(d for d in definitions["inventory/models.py"] if d.kind == "class")
    found = [
        r
        for r in range(len(regions))
        if regions.names[r] == stored.scope and LEVELS[regions.levels[r]] == "definition"
    ]
    assert found and int(regions.start_lines[found[0]]) == stored.start_line
    # Its leaves held by it are listed by the leaf-to-region index.
    indptr, held = regions.leaf_regions
    row = int(regions.lo[found[0]])
    assert found[0] in held[indptr[row] : indptr[row + 1]].tolist()


def test_ranked_regions_follow_the_best_leaves_and_the_pooled_vectors(indexed, embedder):
    index, _ = indexed
    table = index.leaf_table()
    regions = build_regions(table, index.store.definitions(index.repositories()[0]["id"]))
    query = embedder.embed(["parse a price from text"])[0]
    scores = table.vectors @ query
    rows = np.argsort(-scores)[:20]
    best_leaf_only = rank_regions(regions, rows, scores[rows], query, 10, 1.0, "all", ("file",))
    # By best leaf alone, the first file is the best leaf's file.
    assert best_leaf_only[0].path == table.paths[int(table.file_index[rows[0]])]
    assert best_leaf_only[0].score == pytest.approx(float(scores[rows[0]]), abs=1e-5)
    files = rank_files(regions, rows, scores[rows], query, 100, 0.0)
    pooled = regions.vectors[regions.files] @ query
    assert [f.score for f in files] == pytest.approx(sorted(pooled.tolist(), reverse=True), abs=1e-5)
    separate = rank_regions(regions, rows, scores[rows], query, 10, 0.5, "separate")
    spans = [(r.path, r.start_line, r.end_line) for r in separate]
    for a, (path, start, end) in enumerate(spans):  # none of them holds another
        for other in spans[a + 1 :]:
            if path == other[0] and start is not None and other[1] is not None:
                assert not (start <= other[1] and other[2] <= end) and not (
                    other[1] <= start and end <= other[2]
                )
    with pytest.raises(ValueError, match="region nesting"):
        rank_regions(regions, rows, scores[rows], query, 10, 0.5, "nested")


def test_a_miss_is_told_by_its_cause_and_the_first_answer_by_level(indexed, embedder):
    index, _ = indexed
    table = index.leaf_table()
    definitions = index.store.definitions(index.repositories()[0]["id"])
    regions = build_regions(table, definitions)
    path = "inventory/models.py"
    item = next(d for d in definitions[path] if d.kind == "class" and d.scope.endswith("Item"))
    method = next(d for d in definitions[path] if d.scope.endswith("Item.with_price"))
    target = Target("an item of the inventory", path, item.start_line, item.end_line, "Item")
    query = embedder.embed([target.query])[0]
    rows = np.argsort(-(table.vectors @ query))[:30]
    inside = [
        r
        for r in rows
        if table.paths[int(table.file_index[r])] == path
        and table.start_lines[r] >= item.start_line
        and table.end_lines[r] <= item.end_line
    ]
    outside = np.array([r for r in rows if r not in inside], dtype=np.int64)
    span = (path, item.start_line, item.end_line)
    assert inside, "the query about the class finds one of its leaves"
    assert miss_cause(regions, table, target, rows, [span]) is None
    assert miss_cause(regions, table, target, rows, [("other.py", 1, 9)] * 12 + [span]) == MISS_CAUSES[3]
    assert miss_cause(regions, table, target, rows, []) == MISS_CAUSES[4]
    assert miss_cause(regions, table, target, outside, []) == MISS_CAUSES[2]
    as_method = Target("change the price", path, method.start_line, method.end_line, "with_price")
    assert miss_cause(regions, table, as_method, rows, []) == MISS_CAUSES[1]
    docstring = Target("the module", path, 1, 2, "models")
    assert miss_cause(regions, table, docstring, rows, []) == MISS_CAUSES[0]
    outer = _enclosing(regions, True)
    top = int(inside[0])
    order = [top] + [int(r) for r in rows if int(r) != top]
    answers = first_answers(regions, outer, order, table)
    assert answers["top leaf"][0] == path and strict_hit(target, answers["its outermost definition"])
    assert answers["its file"][0] == path and answers["its file"][1] == 1
    # All ten top leaves in the class: the spread picks the file (they are all in its file too).
    in_class = [top] * 10
    assert (
        first_answers(regions, outer, in_class, table)["by the spread of the top leaves"]
        == answers["its file"]
    )
    # The class's leaves among leaves of other files: the spread picks the class.
    others = [int(r) for r in rows if table.paths[int(table.file_index[r])] != path]
    mixed = [top, top, top] + others[:7]
    assert len(others) >= 7
    picked = first_answers(regions, outer, mixed, table)["by the spread of the top leaves"]
    assert picked == answers["its outermost definition"]


def test_query_json_gives_regions_and_files_as_the_contract_says(indexed):
    _, root = indexed
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    queries = root / "queries.txt"
    queries.write_text("parse a price from text\nsave the inventory to disk\n")
    command = [sys.executable, "-m", "hsc", "query", "--db", str(root / "index.db")]
    done = subprocess.run(
        [*command, "where are totals computed", "--json", "--regions", "--files"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    answer = json.loads(done.stdout)
    assert answer["results"] and len(answer["regions"]) == 10 and len(answer["files"]) >= 5
    for region in answer["regions"] + answer["files"]:
        assert set(region) == {"level", "path", "start_line", "end_line", "name", "score"}
        assert region["level"] in ("folder", "file", "definition", "group")
        assert (region["start_line"] is None) == (region["level"] == "folder")
        if region["start_line"] is not None:
            assert 1 <= region["start_line"] <= region["end_line"]
    for listed in (answer["regions"], answer["files"]):
        assert [r["score"] for r in listed] == sorted((r["score"] for r in listed), reverse=True)
    assert {r["level"] for r in answer["files"]} == {"file"}
    assert {r["level"] for r in answer["regions"]} == {"file", "definition"}  # the shipped levels
    batch = subprocess.run(
        [*command, "--queries", str(queries), "--regions"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = [json.loads(line) for line in batch.stdout.splitlines()]
    assert len(lines) == 2 and all(len(line["regions"]) == 10 and "files" not in line for line in lines)
    plain = subprocess.run(
        [*command, "where are totals computed", "--json"], capture_output=True, text=True, env=env, check=True
    )
    assert "regions" not in json.loads(plain.stdout)
    # Asked at the definition level: the same question's regions are definitions only.
    defined = subprocess.run(
        [*command, "where are totals computed", "--json", "--regions", "--level", "definition"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    regions = json.loads(defined.stdout)["regions"]
    assert regions and {r["level"] for r in regions} == {"definition"}
    refused = subprocess.run(
        [*command, "x", "--regions", "--level", "folder"], capture_output=True, text=True, env=env
    )
    assert refused.returncode == 2 and "invalid choice: 'folder'" in refused.stderr


def test_a_pack_brings_the_class_a_top_hit_lies_in_whole_or_as_its_outline(indexed):
    index, _ = indexed
    query = "reserve units of stock for an order"
    before = index.context(query, 2048, context_enclosing_tokens=0)
    after = index.context(query, 2048, context_enclosing_tokens=400)
    outline = index.context(query, 2048, context_enclosing_tokens=1)
    stock = next(
        d
        for d in index.store.definitions(index.repositories()[0]["id"], "inventory/models.py")[
            "inventory/models.py"
        ]
        if d.name == "StockLevel"
    )
    hit = next(s for s in after.spans if s.role == "hit")
    assert hit.path == "inventory/models.py" and stock.start_line < hit.start_line <= stock.end_line
    brought = [s for s in after.spans if "inventory.models.StockLevel, which holds rank" in s.reason]
    shown = {line for s in brought for line in range(s.start_line, s.end_line + 1)}
    shown |= {line for s in after.spans if s.path == hit.path for line in range(s.start_line, s.end_line + 1)}
    assert brought and set(range(stock.start_line, stock.end_line + 1)) <= shown  # the class, whole
    assert not any("which holds rank" in s.reason for s in before.spans)
    # Too long for the limit: the class's outline (its signature) in place of its first line.
    [outlined] = [s for s in outline.spans if "which holds rank" in s.reason]
    assert outlined.role == "outline" and outlined.start_line == outlined.end_line == stock.start_line
    assert outlined.text.startswith("class StockLevel")
    assert after.tokens <= 2048 and outline.tokens <= 2048


def test_the_regions_are_kept_in_a_side_file_for_the_database_state_and_made_again_after_a_change(
    tmp_path, embedder
):
    from hsc.api import Index

    repo = tmp_path / "ledger"
    repo.mkdir()
    (repo / "ledger.py").write_text(SOURCE)
    (repo / "other.py").write_text('def greet(name):\n    return "hello " + name\n')
    database = tmp_path / "index.db"
    question = "a ledger of payments kept with their dates"
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        # An index written before the regions were kept has no region side file: the first
        # query builds the regions, answers, and saves them.
        for saved in (tmp_path / "hnsw").glob("*-regions-*"):
            saved.unlink()
        first = index.query(question, record=False, compare=False)
    saved = sorted(p.name for p in (tmp_path / "hnsw").glob("*-regions-*"))
    assert len(saved) == 2 and saved[0].endswith(".npy") and saved[1].endswith(".npz")
    with Index.open(database, embedder=embedder) as index:
        again = index.query(question, record=False, compare=False)
        loaded = next(iter(index._cache.loaded.values())).regions
    assert [r.to_json() for r in again.regions] == [r.to_json() for r in first.regions]
    assert [r.to_json() for r in again.files] == [r.to_json() for r in first.files]
    # Read from the side file (memory-mapped), not pooled again.
    base = loaded.vectors
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    assert isinstance(base, mmap.mmap)
    assert any(r.level == "definition" and r.name.endswith("Ledger") for r in first.regions)
    # A changed file changes the database's state: the regions are made again, the stale file goes.
    (repo / "ledger.py").write_text(SOURCE.replace("class Ledger:", "class Journal:"))
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        changed = index.query(question, record=False, compare=False)
    assert any(r.name.endswith("Journal") for r in changed.regions)
    assert not any(r.name.endswith("Ledger") for r in changed.regions)
    now = sorted(p.name for p in (tmp_path / "hnsw").glob("*-regions-*"))
    assert len(now) == 2 and now != saved
    # A damaged side file is not read: the regions are built again and the answer is the same.
    damaged = next(p for p in (tmp_path / "hnsw").glob("*-regions-*.npz"))
    damaged.write_bytes(b"not a numpy file")
    with Index.open(database, embedder=embedder) as index:
        rebuilt = index.query(question, record=False, compare=False)
    assert [r.to_json() for r in rebuilt.regions] == [r.to_json() for r in changed.regions]


def test_the_class_benchmark_counts_each_miss_of_the_shipped_regions_once_by_its_cause(tmp_path, embedder):
    from hsc.quality.regions import SHIPPED
    from hsc.quality.sweep import Options, run_quality

    options = Options(
        path=ROOT / "hsc" / "samples" / "inventory_py",
        out=tmp_path,
        query_kind="class",
        systems=("hybrid",),
        sweep=False,
    )
    result = run_quality(options, report=lambda message: None, embedder=embedder)
    rows = {row["system"]: row for row in result["regions"]}
    asked = len(result["targets"])
    assert asked >= 2
    for level in ("top leaf", "its outermost definition", "its file", "by the spread of the top leaves"):
        assert f"first answer: {level}" in rows
    # The outline vectors' variants are scored beside the shipped regions (hsc.quality.outline_variants).
    for name in (
        "regions + definitions max",
        "outermost definitions + outline evidence 0.1",
        "files ranked, file vector outline",
        "outermost definitions nearest by outline alone",
    ):
        assert name in rows and len(rows[name]["strict_ranks"]) == asked
    misses = result["region_misses"]
    causes = {cause: count for cause, count in misses.items() if cause in MISS_CAUSES}
    assert set(misses) - set(causes) <= {"files among the top 10 of a miss"}
    missed = asked - round(rows[SHIPPED]["strict_at_10"] * asked)
    assert sum(causes.values()) == missed


NESTED = '''class Ledger:
    """A ledger of payments."""

    class Entry:
        """One payment of the ledger."""

        def __init__(self, date, cents):
            self.date = date
            self.cents = cents

        def describe(self):
            return f"{self.date}: {self.cents}"

    def __init__(self):
        self.entries = []

    def add(self, date, cents):
        self.entries.append(Ledger.Entry(date, cents))


def total(ledger):
    return sum(entry.cents for entry in ledger.entries)
'''


def test_containers_lists_a_nested_class_beside_the_outermost_definitions(tmp_path, embedder):
    import dataclasses

    from hsc.api import Index
    from hsc.params import Parameters

    repo = tmp_path / "ledger"
    repo.mkdir()
    (repo / "ledger.py").write_text(NESTED)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        regions = build_regions(index.leaf_table(), index.store.definitions(index.repositories()[0]["id"]))
        holders = {regions.names[r] for r in np.flatnonzero(regions.holds_others)}
        assert holders == {"ledger.Ledger", "ledger.Ledger.Entry"}  # methods and functions hold nothing
        asked = {}
        for value in ("outermost", "containers", "all"):
            params = dataclasses.replace(Parameters(), region_definitions=value)
            found = index.query("one payment of a ledger", params=params, record=False, compare=False)
            asked[value] = {r.name for r in found.regions if r.level == "definition"}
    assert asked["outermost"] == {"ledger.Ledger", "ledger.total"}
    assert asked["containers"] == {"ledger.Ledger", "ledger.Ledger.Entry", "ledger.total"}
    assert asked["all"] > asked["containers"]  # the methods too
