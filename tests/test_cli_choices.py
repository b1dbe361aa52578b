"""The command line where a person must choose: which repository, which hierarchy, which
query-stage parameters; answers name the choices instead of leaving the user guessing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLE_REPOS

from hsc.api import Index
from hsc.params import SettingError


def hsc(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "hsc", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def two_repositories(tmp_path_factory):
    """Two samples indexed by the command line into one database."""
    root = tmp_path_factory.mktemp("choices")
    database = root / "index.db"
    for name in ("shortlink_go", "inventory_py"):
        shutil.copytree(SAMPLE_REPOS / name, root / name)
        done = hsc("index", str(root / name), "--db", str(database), "--quiet", "--set", "summariser=digest")
        assert done.returncode == 0, done.stderr
    return root, database


def test_several_repositories_name_the_flag_and_list_them(two_repositories):
    """A query is answered by every repository (test_many_repositories); what belongs to one
    repository (a context pack, a named hierarchy) asks which."""
    root, database = two_repositories
    for asked in (["context", "rate limit", "--budget", "200"], ["query", "rate limit", "--hierarchy", "x"]):
        done = hsc(*asked, "--db", str(database))
        assert done.returncode != 0
        message = done.stderr.strip().splitlines()[-1]
        assert "--repo" in message and "shortlink_go" in message and "inventory_py" in message
        assert str(root / "shortlink_go") in message
    together = hsc("query", "rate limit", "--db", str(database), "--json")
    assert together.returncode == 0, together.stderr
    assert {r["repository"] for r in json.loads(together.stdout)["results"]} <= {
        str((root / name).resolve()) for name in ("shortlink_go", "inventory_py")
    }


def test_repo_takes_the_name_stats_prints_or_the_path(two_repositories):
    root, database = two_repositories
    by_name = hsc("query", "rate limit", "--db", str(database), "--repo", "shortlink_go", "--json")
    by_path = hsc(
        "query", "rate limit", "--db", str(database), "--repo", str(root / "shortlink_go"), "--json"
    )
    assert by_name.returncode == 0, by_name.stderr
    assert json.loads(by_name.stdout)["results"] == json.loads(by_path.stdout)["results"]
    unknown = hsc("query", "rate limit", "--db", str(database), "--repo", "nosuch")
    assert unknown.returncode != 0 and "nosuch" in unknown.stderr and "inventory_py" in unknown.stderr


def test_stats_prints_words_not_python_dicts(two_repositories):
    _, database = two_repositories
    done = hsc("stats", "--db", str(database))
    assert done.returncode == 0, done.stderr
    assert "{" not in done.stdout and "'" not in done.stdout.replace("hierarchy 'default'", "")
    assert "indexed" in done.stdout


def test_an_unknown_hierarchy_lists_the_ones_there(two_repositories):
    _, database = two_repositories
    done = hsc("query", "x", "--db", str(database), "--repo", "inventory_py", "--hierarchy", "nosuch")
    assert done.returncode != 0
    assert "no hierarchy named 'nosuch'" in done.stderr and "'default'" in done.stderr


def test_every_query_stage_parameter_given_applies_to_the_query(two_repositories):
    _, database = two_repositories
    base = ("query", "discount on a price", "--db", str(database), "--repo", "inventory_py", "--json")
    plain = json.loads(hsc(*base).stdout)
    widened = hsc(*base, "--set", "stage1_leaf_share=1.0")
    assert widened.returncode == 0, widened.stderr
    with Index.open(database, create=False) as index:
        total = len(index.leaf_table(index.find_repository("inventory_py")))
    assert json.loads(widened.stdout)["leaves_compared"] == total > plain["leaves_compared"]
    heavier = json.loads(hsc(*base, "--set", "lexical_weight=5").stdout)
    assert [r["score"] for r in heavier["results"]] != [r["score"] for r in plain["results"]]


def test_a_build_stage_parameter_given_to_query_is_refused_naming_where_it_is_set(two_repositories, tmp_path):
    _, database = two_repositories
    base = ("query", "discount", "--db", str(database), "--repo", "inventory_py")
    done = hsc(*base, "--set", "similarity_drop_threshold=0.3")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "similarity_drop_threshold is a hierarchy parameter" in done.stderr and "build --set" in done.stderr
    )
    config = tmp_path / "q.toml"
    config.write_text("[parameters]\nminimum_chunk_token_length = 8\n")
    from_file = hsc(*base, "--config", str(config))
    assert from_file.returncode == 2 and "index --set" in from_file.stderr


def test_index_query_takes_query_stage_values_and_refuses_the_rest(two_repositories):
    _, database = two_repositories
    with Index.open(database, create=False) as index:
        repository_id = index.find_repository("inventory_py")
        plain = index.query("discount on a price", repository_id, record=False, compare=False)
        heavier = index.query(
            "discount on a price", repository_id, params={"lexical_weight": 5}, record=False, compare=False
        )
        assert [r.score for r in heavier.results] != [r.score for r in plain.results]
        with pytest.raises(SettingError, match="smoothing_window_size is a hierarchy parameter"):
            index.query("discount", repository_id, params={"smoothing_window_size": 3}, record=False)
