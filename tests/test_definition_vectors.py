"""Definition vectors: a leaf that holds definitions is also embedded by each of them, and
searched by the best of its vectors. Real tree-sitter cuts, the real model, real SQLite."""

from __future__ import annotations

import dataclasses
import sqlite3

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hsc.api import Index
from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.embed.definitions import file_definition_texts, held_definitions
from hsc.hierarchy.groups import DefinitionVectors, LeafTable, mean_pool
from hsc.model import content_hash
from hsc.params import Parameters
from hsc.search.searching import _table_rows
from hsc.search.two_stage import MidLevelIndex, TwoStageRetriever, best_of_definitions, flat_search
from hsc.store import Store

SHAPES = """import math


def compound_interest(principal, rate, years):
    total = principal
    for _ in range(years):
        total = total * (1 + rate)
    return round(total - principal, 2)


class Circle:
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return math.pi * self.radius * self.radius

    def perimeter(self):
        return 2 * math.pi * self.radius


def to_cents(amount):
    return int(amount * 100)


def from_cents(cents):
    return cents / 100
"""


def _cut(source: str = SHAPES):
    return cut_file(source, "shapes.py", "python", Parameters(), get_counter())


def _texts(source: str = SHAPES) -> list[str]:
    cut = _cut(source)
    return [text for texts in file_definition_texts(cut.leaves, cut.definitions) for text in texts]


def test_each_definition_a_leaf_holds_gets_a_text_of_its_own():
    cut = _cut()
    texts = dict(zip((leaf.scope for leaf in cut.leaves), file_definition_texts(cut.leaves, cut.definitions)))
    # A small class kept whole: its methods, each as a leaf of its own would read.
    assert texts["shapes.Circle"] == [
        "shapes.Circle.__init__\ndef __init__(self, radius):\n        self.radius = radius",
        "shapes.Circle.area\ndef area(self):\n        return math.pi * self.radius * self.radius",
        "shapes.Circle.perimeter\ndef perimeter(self):\n        return 2 * math.pi * self.radius",
    ]
    # Two small functions merged into one leaf: one text each.
    assert [text.split("\n")[0] for text in texts["shapes"]] == ["shapes.to_cents", "shapes.from_cents"]
    # A function with the import above it merged in: the function alone.
    assert texts["shapes.compound_interest"][0].startswith("shapes.compound_interest\ndef compound_interest(")


def test_a_leaf_that_is_one_definition_holds_only_what_it_nests():
    cut = _cut()
    circle = next(leaf for leaf in cut.leaves if leaf.scope == "shapes.Circle")
    interest = next(d for d in cut.definitions if d.name == "compound_interest")
    alone = dataclasses.replace(circle, start_line=interest.start_line, end_line=interest.end_line)
    assert held_definitions(alone, cut.definitions) == []
    assert [d.name for d in held_definitions(circle, cut.definitions)] == ["__init__", "area", "perimeter"]


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_leaf_is_scored_by_the_best_of_its_vectors_in_every_search():
    leaves = np.stack([_unit(1, 0, 0), _unit(0, 1, 0), _unit(1, 1, 0), _unit(0, 0, 1)])
    query = _unit(0, 0.2, 1)
    # Leaf 1 holds a definition that is the query itself; leaf 3 one that is far from it.
    definitions = DefinitionVectors(np.array([1, 1, 3]), np.stack([_unit(1, 0, 0), query, _unit(1, 0, 0)]))
    plain = flat_search(leaves, query, 4)
    best = flat_search(leaves, query, 4, definitions=definitions)
    assert [hit.row for hit in plain.leaves][0] == 3
    assert [hit.row for hit in best.leaves][:2] == [1, 3]
    assert abs(best.leaves[0].score - 1.0) < 1e-6  # its definition is the query
    # Leaf 3's own vector beats its definition's: its score is its own.
    assert abs(best.leaves[1].score - float(leaves[3] @ query)) < 1e-6
    # Any rows in any order give the same scores as the whole table.
    rows = np.array([3, 0, 1, 2])
    own = leaves[rows] @ query
    mixed = best_of_definitions(own, rows, definitions, query)
    assert np.allclose(
        mixed, [float(leaves[3] @ query), float(leaves[0] @ query), 1.0, float(leaves[2] @ query)]
    )
    # The two stages, opening every group, rank as the flat search does.
    starts, ends = np.array([0, 2]), np.array([2, 4])
    graph = MidLevelIndex.build(mean_pool(leaves, starts))
    staged = TwoStageRetriever(leaves, starts, ends, graph, definitions).search(query, 2, 4)
    assert [(h.row, round(h.score, 5)) for h in staged.leaves] == [
        (h.row, round(h.score, 5)) for h in best.leaves
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    leaves=st.integers(1, 12),
    owners=st.lists(st.integers(0, 11), max_size=20),
    picked=st.lists(st.integers(0, 11), unique=True, max_size=12),
    seed=st.integers(0, 1000),
)
def test_any_rows_score_as_the_best_of_their_vectors(leaves, owners, picked, seed):
    rng = np.random.default_rng(seed)

    def unit(count: int) -> np.ndarray:
        drawn = rng.standard_normal((count, 4)).astype(np.float32)
        return drawn / np.linalg.norm(drawn, axis=1, keepdims=True)

    vectors, query = unit(leaves), unit(1)[0]
    rows = np.array(sorted(o for o in owners if o < leaves), dtype=np.int64)
    definitions = DefinitionVectors(rows, unit(len(rows)))
    asked = np.array([r for r in picked if r < leaves], dtype=np.int64)
    got = best_of_definitions(vectors[asked] @ query, asked, definitions, query)
    for place, row in enumerate(asked):
        own = [float(vectors[row] @ query)] + [float(v @ query) for v in definitions.vectors[rows == row]]
        assert abs(got[place] - max(own)) < 1e-5
    flat = flat_search(vectors, query, leaves, definitions=definitions)
    for hit in flat.leaves:
        own = [float(vectors[hit.row] @ query)] + [
            float(v @ query) for v in definitions.vectors[rows == hit.row]
        ]
        assert abs(hit.score - max(own)) < 1e-5


def test_a_table_cut_to_some_rows_keeps_their_definition_vectors():
    n = 4
    table = LeafTable(
        leaf_ids=np.arange(10, 10 + n),
        file_index=np.zeros(n, dtype=np.int32),
        paths=["a.py"],
        scopes=[f"a.f{i}" for i in range(n)],
        start_lines=np.arange(n, dtype=np.int32),
        end_lines=np.arange(n, dtype=np.int32),
        token_counts=np.ones(n, dtype=np.int32),
        vectors=np.eye(n, dtype=np.float32),
        definitions=DefinitionVectors(np.array([0, 2, 2, 3]), np.eye(n, dtype=np.float32)[[1, 2, 3, 0]]),
    )
    kept = _table_rows(table, np.array([False, True, True, True]))
    assert kept.definitions.rows.tolist() == [1, 1, 2]
    assert np.array_equal(kept.definitions.vectors, np.eye(n, dtype=np.float32)[[2, 3, 0]])


def _orphans(database) -> int:
    with sqlite3.connect(database) as conn:
        return conn.execute(
            "SELECT COUNT(*) FROM definition_vectors d LEFT JOIN leaves l ON l.id = d.leaf_id "
            "WHERE l.id IS NULL"
        ).fetchone()[0]


def _count(database) -> int:
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT COUNT(*) FROM definition_vectors").fetchone()[0]


def test_indexing_embeds_definitions_and_queries_rank_by_the_best_vector(tmp_path, embedder):
    repo = tmp_path / "shapes"
    repo.mkdir()
    (repo / "shapes.py").write_text(SHAPES)
    database = tmp_path / "index.db"
    expected = _texts()
    with Index.open(database, embedder=embedder) as index:
        report = index.index(repo)
        assert report.definitions_embedded == len(expected) == 6
        table = index.leaf_table()
        scopes = [table.scopes[row] for row in table.definitions.rows]
        assert scopes == ["shapes.compound_interest"] + ["shapes.Circle"] * 3 + ["shapes"] * 2
        # Stored as float16 (vector_storage), read back as float32.
        assert np.allclose(table.definitions.vectors, embedder.embed(expected), atol=1e-3)
        text = "the perimeter of a circle"
        query = embedder.embed([text])[0]
        circle = scopes.index("shapes.Circle")
        own = float(table.vectors[table.definitions.rows[circle]] @ query)
        perimeter = float(table.definitions.vectors[circle + 2] @ query)
        assert perimeter > own  # the method alone is nearer the question than the class's blend
        found = index.query(text, mode="flat", record=False)
        hit = next(r for r in found.flat if r.scope == "shapes.Circle")
        assert abs(hit.score - perimeter) < 1e-4
        staged = next(r for r in found.results if r.scope == "shapes.Circle")
        assert abs(staged.score - perimeter) < 1e-4
    # Another process reads the table from its side file, definition vectors and all.
    with Index.open(database, embedder=embedder) as index:
        again = index.leaf_table()
        assert np.array_equal(again.definitions.rows, table.definitions.rows)
        assert np.allclose(again.definitions.vectors, table.definitions.vectors)
        # An edit replaces the file's definition vectors with its leaves.
        edited = SHAPES.replace(
            "    def area(self):\n        return math.pi * self.radius * self.radius\n\n", ""
        )
        (repo / "shapes.py").write_text(edited)
        index.index(repo)
        assert len(index.leaf_table().definitions) == _count(database) == len(_texts(edited)) == 5
        assert _orphans(database) == 0
        # The seed's one vector a leaf: nothing extra stored, a leaf scored by its own vector.
        index.index(repo, Parameters(definition_vectors="off"))
        table = index.leaf_table()
        assert len(table.definitions) == _count(database) == 0
        own = float(table.vectors[list(table.scopes).index("shapes.Circle")] @ query)
        found = index.query(text, mode="flat", record=False)
        hit = next(r for r in found.flat if r.scope == "shapes.Circle")
        assert abs(hit.score - own) < 1e-4


def test_a_database_from_before_definition_vectors_is_read_then_completed(tmp_path, embedder):
    repo = tmp_path / "shapes"
    repo.mkdir()
    (repo / "shapes.py").write_text(SHAPES)
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        first = index.index(repo)
    # Make it what an older hsc wrote: no such table, no such vectors, files cut under the old key.
    conn = sqlite3.connect(database)
    conn.executescript(
        "DROP TABLE definition_vectors;"
        "UPDATE files SET chunk_key = replace(chunk_key, ';definitions=best', '');"
    )
    hashes = [content_hash(text) for text in _texts()]
    conn.executemany("DELETE FROM embeddings WHERE content_hash = ?", [(h,) for h in hashes])
    conn.commit()
    conn.close()
    with Index(Store(database, read_only=True), embedder=embedder) as index:  # creates nothing
        assert len(index.leaf_table().definitions) == 0
        assert index.query("the perimeter of a circle", record=False).results
    with Index.open(database, embedder=embedder) as index:  # opening adds the table
        again = index.index(repo)
        assert again.files_parsed == 1  # the new key re-cuts the file ...
        assert again.leaves_embedded == 0  # ... its leaves' vectors come from the cache
        assert again.definitions_embedded == first.definitions_embedded == len(_texts())
        assert len(index.leaf_table().definitions) == len(_texts())
