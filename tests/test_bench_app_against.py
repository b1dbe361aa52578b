"""`bench app --against` with a real folder: each version of the app serves an index its own code made
(an older app refuses the settings a newer version stores)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hsc import Index
from hsc.bench.app import index_with

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "hsc" / "samples" / "inventory_py"


def test_a_checkout_indexes_the_folder_into_its_own_database_and_again_incrementally(tmp_path: Path) -> None:
    database = tmp_path / "app-against.db"
    assert index_with(ROOT, SAMPLE, database) == database
    with Index.open(database) as index:
        (repository,) = index.repositories()
        first = (repository["root"], repository["file_count"], repository["leaf_count"])
        assert index.hierarchies(int(repository["id"]))  # the app opens on a built hierarchy
    assert first[0] == str(SAMPLE) and first[1] >= 8 and first[2] > 50
    index_with(ROOT, SAMPLE, database)  # a second run finds it indexed and keeps it
    with Index.open(database) as index:
        (repository,) = index.repositories()
        assert (repository["root"], repository["file_count"], repository["leaf_count"]) == first


def test_a_folder_the_checkout_cannot_index_is_one_error_naming_both(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="could not index") as raised:
        index_with(ROOT, tmp_path / "missing", tmp_path / "a.db")
    assert str(ROOT) in str(raised.value) and "missing" in str(raised.value)
