"""Names a query writes as code: found as written, a dotted one against qualified scopes, their
terms kept by BM25 however common, and the leaf holding the named definition lifted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hsc.api import Index
from hsc.search.lexical import TermCounts, match_expression
from hsc.search.names import code_names, kept_terms, name_boost, named_definitions

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("remove the override of Headers.get", ["Headers.get"]),
        ("fix send_from_directory with a pathlib path", ["send_from_directory"]),
        ("FlaskClient.open works with redirects", ["FlaskClient.open"]),
        ("call `get` once and JSONProvider dumps() twice", ["get", "JSONProvider", "dumps"]),
        ("call __init__ once", ["__init__"]),
        ("Update setup.py and CHANGES.rst, e.g. the readme", []),
        ("Fix the session cookie", []),
    ],
)
def test_names_written_as_code_are_found_as_written(text: str, names: list[str]) -> None:
    assert code_names(text) == names


def test_a_dotted_name_matches_the_end_of_a_qualified_scope() -> None:
    stored = [
        ("a.py", "get", "pkg.datastructures.Headers.get", 10, 20),
        ("b.py", "get", "pkg.sessions.Session.get", 30, 40),
        ("c.py", "send", "pkg.helpers.send", 5, 9),
    ]
    asked: list[list[str]] = []

    def lookup(names: list[str]) -> list[tuple[str, str, str, int, int]]:
        asked.append(names)
        return [row for row in stored if row[1] in names]

    assert named_definitions("remove the override of Headers.get", lookup) == [("a.py", 10, 20)]
    assert asked == [["get"]]
    assert named_definitions("call send() twice", lookup) == [("c.py", 5, 9)]
    assert named_definitions("nothing in code here", lookup) == []


def test_a_named_term_escapes_the_term_share_cut_off() -> None:
    counts = TermCounts(lambda terms: dict.fromkeys(terms, 90), lambda: 100)  # every term is common
    assert match_expression("Headers.get is wrong", counts, 0.2) == ""
    kept = kept_terms("Headers.get is wrong")
    assert kept == {"headers", "get"}
    assert match_expression("Headers.get is wrong", counts, 0.2, kept) == '"headers" OR "get"'


MAPPINGS = '''"""Mappings of a request, each read the same way."""


class Headers:
    """The headers of a request."""

    def __init__(self, items):
        self.items = dict(items)

    def get(self, key, default=None):
        """The value stored under a key, or the default when there is none."""
        value = self.items.get(key)
        return default if value is None else value


class Cookies:
    """The cookies of a request."""

    def __init__(self, items):
        self.items = dict(items)

    def get(self, key, default=None):
        """The value stored under a key, or the default when there is none."""
        value = self.items.get(key)
        return default if value is None else value


class Arguments:
    """The query arguments of a request."""

    def __init__(self, items):
        self.items = dict(items)

    def get(self, key, default=None):
        """The value stored under a key, or the default when there is none."""
        value = self.items.get(key)
        return default if value is None else value
'''
CLASSES = ("Headers", "Cookies", "Arguments")


@pytest.fixture(scope="module")
def mappings(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("names")
    (root / "web").mkdir()
    (root / "web" / "mappings.py").write_text(MAPPINGS)
    # Enough other code that a leaf is one among many.
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py" / "inventory", root / "web" / "inventory")
    index = Index.open(root / "index.db", embedder=embedder)
    index.index(root / "web")
    yield index
    index.close()


def _rank_of(index: Index, text: str, owner: str, **params: object) -> int | None:
    """Rank of the leaf holding the first line of ``owner.get``."""
    lines = {d.scope: d.start_line for d in index.store.files_facts(1, ["mappings.py"])["mappings.py"][1]}
    line = lines[f"mappings.{owner}.get"]
    response = index.query(text, params={"leaf_level_top_k": 50, **params}, record=False, compare=False)
    held = (
        r.rank for r in response.results if r.path == "mappings.py" and r.start_line <= line <= r.end_line
    )
    return next(held, None)


def test_the_boost_goes_to_the_leaf_holding_the_named_definition(mappings: Index) -> None:
    table = mappings.leaf_table(1)
    lookup = lambda names: mappings.store.definitions_named(1, names)  # noqa: E731
    facts = mappings.store.files_facts(1, ["mappings.py"])["mappings.py"][1]
    line = next(d.start_line for d in facts if d.scope == "mappings.Cookies.get")
    boost = name_boost("remove the override of Cookies.get", table, lookup, 0.5)
    (row,) = boost
    assert boost[row] == 0.5
    assert table.paths[table.file_index[row]] == "mappings.py"
    assert table.start_lines[row] <= line <= table.end_lines[row]
    assert name_boost("remove the override of Cookies.get", table, lookup, 0.0) == {}
    assert name_boost("remove the override of Biscuits.get", table, lookup, 0.5) == {}


@pytest.mark.parametrize("mode", ["hybrid", "hybrid-flat"])
def test_a_qualified_name_ranks_that_definition_first_among_its_namesakes(mappings: Index, mode: str) -> None:
    for owner in CLASSES:
        text = f"remove the override of {owner}.get"
        assert _rank_of(mappings, text, owner, retrieval_mode=mode, exact_name_weight=0.5) == 1
    response = mappings.query(
        "remove the override of Cookies.get",
        params={"exact_name_weight": 0.5, "retrieval_mode": mode},
        record=False,
        compare=False,
    )
    assert response.results[0].lexical_score >= 0.5  # the lift is shown as part of its lexical score


def test_reciprocal_rank_fusion_lets_a_decisive_lexical_match_win() -> None:
    import numpy as np

    from hsc.search.lexical import fuse

    dense = np.array([0.70, 0.69, 0.68, 0.20])  # the last is far below by cosine
    lexical = np.array([0.0, 0.0, 1.0, 9.0])  # and BM25's best by far
    summed = fuse(dense, lexical, 0.15)
    assert int(np.argmax(summed)) == 0  # a weight of 0.15 cannot lift it
    fused = fuse(dense, lexical, 0.15, "rrf")
    assert int(np.argmax(fused)) == 3  # BM25's first, last by cosine, wins
    assert fused[2] > fused[0] > fused[1]  # any lexical match beats the cosine alone
    assert np.array_equal(fuse(dense, lexical, 0.0, "rrf"), dense)
