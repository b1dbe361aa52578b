"""Data and generated files in a real folder (the standard library's tables beside its code):
cut as data, indexed and searchable, a class of their own, and left out of the hierarchy's
statistics by default."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from hsc.api import Index
from hsc.chunk.datafiles import data_reason
from hsc.explore.views import leaf_class, without_data
from hsc.params import Parameters, Settings

STDLIB = Path(sysconfig.get_paths()["stdlib"])
DATA = ("html/entities.py", "encodings/cp1252.py", "keyword.py")  # two literal tables, one generated
CODE = ("json/decoder.py", "json/encoder.py", "json/scanner.py", "html/parser.py")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("tables")
    repo = root / "repo"
    for rel in DATA + CODE:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(STDLIB / rel, repo / rel)
    index = Index.open(root / "index.db", Settings(summariser="digest"))
    report = index.index(repo)
    yield index, report
    index.close()


def test_the_rule_tells_tables_and_generated_files_from_code() -> None:
    for rel in DATA:
        assert data_reason((STDLIB / rel).read_text(encoding="utf-8")), rel
    for rel in CODE:
        assert data_reason((STDLIB / rel).read_text(encoding="utf-8")) == "", rel


def test_data_files_are_cut_as_data_and_stay_searchable(indexed) -> None:
    index, report = indexed
    assert report.files_failed == 0 and report.files_skipped == 0
    assert index.data_files() == set(DATA)
    leaves = index.leaves()
    for row in leaves:
        expected = "data" if row["path"] in DATA else "ast"
        assert row["chunker"] == expected, row["path"]
        assert row["token_count"] <= Parameters().maximum_chunk_token_length
    assert {leaf_class(row["chunker"]) for row in leaves} == {"data", "code"}
    files = {row["path"]: row for row in index.files()}
    entities = files["html/entities.py"]
    assert entities["status"] == "indexed" and "literals" in entities["reason"]
    found = index.query("name2codepoint Aacute 0x00c1", mode="hybrid-flat", record=False)
    assert found.results[0].path in DATA and "html/entities.py" in {r.path for r in found.results}


def test_the_hierarchy_statistics_leave_data_files_out_by_default(indexed) -> None:
    index, _ = indexed
    hierarchy_id = index.default_hierarchy()
    leaves = index.leaves(with_text=False)
    code_leaves = sum(1 for row in leaves if row["path"] not in DATA)
    compared = index.compare(hierarchy_id, hierarchy_id)
    assert sum(compared["first"]["group_sizes"]) == code_leaves
    everything = index.compare(hierarchy_id, hierarchy_id, with_data=True)
    assert sum(everything["first"]["group_sizes"]) == len(leaves)
    groups = index.groups(hierarchy_id)
    kept = without_data(groups, index.data_files())
    assert kept and all(group.path not in DATA for group in kept) and len(kept) < len(groups)
