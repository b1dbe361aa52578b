"""Several repositories in one database: ``index REPO1 REPO2`` and ``--manifest FILE``, each a
repository of its own; a query answered by all of them, each result naming its repository, or
by one with ``--repo``; the retrievers the same. And the lean core without Ray: ``--executor
ray`` says in one line what to install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLE_REPOS
from test_cli import hsc

from hsc.api import Index
from hsc.params import Settings


@pytest.fixture(scope="module")
def two_repositories(tmp_path_factory) -> tuple[Path, Path, Path]:
    """The Python and Go samples indexed into one database, the second named by a manifest."""
    root = tmp_path_factory.mktemp("many")
    python, go = root / "inventory_py", root / "shortlink_go"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", python)
    shutil.copytree(SAMPLE_REPOS / "shortlink_go", go)
    manifest = root / "repos.txt"
    manifest.write_text(f"# the Go sample\n\n{go}\n")
    database = root / "index.db"
    done = hsc("index", str(python), "--manifest", str(manifest), "--db", str(database), "--json", "--quiet")
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    assert [report["root"] for report in reports] == [str(python.resolve()), str(go.resolve())]
    return python, go, database


def test_each_folder_is_a_repository_of_its_own(two_repositories) -> None:
    python, go, database = two_repositories
    stats = json.loads(hsc("stats", "--db", str(database), "--json").stdout)
    assert {repository["root"] for repository in stats["repositories"]} == {
        str(python.resolve()),
        str(go.resolve()),
    }
    assert all(repository["leaves"] > 0 for repository in stats["repositories"])


def test_a_query_without_repo_is_answered_by_every_repository(two_repositories) -> None:
    python, go, database = two_repositories
    # Enough results that both repositories answer: the Go sample holds the best of them.
    done = hsc(
        "query",
        "shorten a url and store the code",
        "--db",
        str(database),
        "--json",
        "--set",
        "leaf_level_top_k=40",
    )
    answer = json.loads(done.stdout)
    results = answer["results"]
    assert [result["rank"] for result in results] == list(range(1, len(results) + 1))
    assert [result["score"] for result in results] == sorted((r["score"] for r in results), reverse=True)
    assert {result["repository"] for result in results} == {str(python.resolve()), str(go.resolve())}
    for result in results:  # each result's lines are in its own repository's file
        lines = (Path(result["repository"]) / result["path"]).read_text().splitlines()
        assert 1 <= result["start_line"] <= result["end_line"] <= len(lines)
    text = hsc(
        "query", "shorten a url and store the code", "--db", str(database), "--set", "leaf_level_top_k=40"
    ).stdout
    assert "shortlink_go/" in text and "inventory_py/" in text


def test_repo_keeps_a_query_to_one_repository(two_repositories) -> None:
    python, go, database = two_repositories
    done = hsc("query", "shorten a url", "--db", str(database), "--repo", "shortlink_go", "--json")
    results = json.loads(done.stdout)["results"]
    assert results and {result["repository"] for result in results} == {str(go.resolve())}


def test_a_missing_folder_is_refused_before_anything_is_written(tmp_path) -> None:
    manifest = tmp_path / "repos.txt"
    manifest.write_text(f"{SAMPLE_REPOS / 'inventory_py'}\n{tmp_path / 'nowhere'}\n")
    done = hsc("index", "--manifest", str(manifest), "--db", str(tmp_path / "index.db"), check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"hsc: no such folder: {tmp_path / 'nowhere'}"
    assert not (tmp_path / "index.db").exists()


def test_the_langchain_retriever_searches_every_repository(two_repositories, embedder) -> None:
    pytest.importorskip("langchain_core")
    from hsc.integrations.langchain import HscRetriever

    python, go, database = two_repositories
    with Index.open(database, Settings(summariser="digest"), embedder=embedder) as index:
        go_id = index.repository_id(go)
        # More than either repository holds (95 and 99 leaves): both must answer.
        documents = HscRetriever(index=index, k=120, mode="flat").invoke("shorten a url and store the code")
        only_go = HscRetriever(index=index, k=4, repository_id=go_id).invoke("shorten a url")
    assert len(documents) == 120
    assert {d.metadata["repository"] for d in documents} == {str(python.resolve()), str(go.resolve())}
    scores = [d.metadata["score"] for d in documents]
    assert scores == sorted(scores, reverse=True)
    assert documents[0].metadata["repository"] == str(go.resolve())  # the Go sample shortens urls
    assert {d.metadata["repository"] for d in only_go} == {str(go.resolve())}


def test_the_lean_core_never_imports_ray(tmp_path) -> None:
    code = (
        "import sys, hsc.cli, hsc.api, hsc.index.pipeline, hsc.search.across\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0


def test_executor_ray_without_ray_says_what_to_install(tmp_path) -> None:
    # Ray made unimportable for this one process, as it is where the extra is not installed.
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "ray.py").write_text("raise ImportError('No module named ray')\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}"}
    database = tmp_path / "index.db"
    done = subprocess.run(
        [sys.executable, "-m", "hsc", "index", str(SAMPLE_REPOS / "inventory_py"), "--db", str(database)]
        + ["--executor", "ray"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "hsc: the ray executor needs Ray: pip install 'hsc[ray]'"
    assert not database.exists()  # refused before anything was opened
