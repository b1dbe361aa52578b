"""The command line as a user runs it: subprocesses, real files, JSON contracts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLE_REPOS


def hsc(*args: str, cwd=None, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "hsc", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if check and done.returncode != 0:
        raise AssertionError(f"hsc {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def cli_repo(tmp_path_factory):
    """The Go sample indexed by the CLI into its default database."""
    repo = tmp_path_factory.mktemp("cli") / "shortlink_go"
    shutil.copytree(SAMPLE_REPOS / "shortlink_go", repo)
    done = hsc("index", str(repo), "--json")
    return repo, json.loads(done.stdout), done.stderr


def test_index_writes_the_default_database_and_reports_progress(cli_repo):
    repo, summary, stderr = cli_repo
    assert (repo / ".hsc" / "index.db").exists()
    assert summary["leaves"] >= 40 and summary["files_failed"] == 0
    assert "[files]" in stderr and "[embed]" in stderr


def test_query_json_follows_the_contract(cli_repo):
    repo, _, _ = cli_repo
    done = hsc("query", "token bucket rate limiting", "--json", "--set", "leaf_level_top_k=3", cwd=repo)
    answer = json.loads(done.stdout)
    assert set(answer) == {"query", "results", "leaves_compared"}
    assert answer["query"] == "token bucket rate limiting"
    assert len(answer["results"]) == 3
    first = answer["results"][0]
    assert set(first) == {
        "rank",
        "score",
        "leaf_id",
        "repository",
        "path",
        "start_line",
        "end_line",
        "scope",
        "parent_id",
        "parent_score",
    }
    assert first["rank"] == 1 and first["path"] == "ratelimit.go"
    assert first["repository"] == str(repo.resolve())
    assert 1 <= first["start_line"] <= first["end_line"]
    lines = (repo / first["path"]).read_text().splitlines()
    assert first["end_line"] <= len(lines)


def test_batch_queries_give_json_lines(cli_repo, tmp_path):
    repo, _, _ = cli_repo
    queries = tmp_path / "queries.txt"
    queries.write_text("generate a short code\n\nrecover from a panic in a handler\ncount clicks per day\n")
    done = hsc("query", "--queries", str(queries), "--db", str(repo / ".hsc" / "index.db"))
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["query"] for a in answers] == [
        "generate a short code",
        "recover from a panic in a handler",
        "count clicks per day",
    ]
    flat = hsc("query", "count clicks per day", "--flat", "--json", cwd=repo)
    assert json.loads(flat.stdout)["leaves_compared"] > answers[2]["leaves_compared"]


def test_query_mode_defaults_to_hybrid_and_the_seed_two_stage_is_a_setting_away(cli_repo):
    repo, _, _ = cli_repo
    assert "(hybrid, " in hsc("query", "count clicks per day", cwd=repo).stdout.splitlines()[0]
    seed = hsc("query", "count clicks per day", "--set", "retrieval_mode=two-stage", cwd=repo)
    assert "(two-stage, " in seed.stdout.splitlines()[0]


def test_build_stats_and_export(cli_repo):
    repo, summary, _ = cli_repo
    built = json.loads(
        hsc("build", "--name", "strict", "--set", "similarity_drop_threshold=0.7", "--json", cwd=repo).stdout
    )
    assert built["name"] == "strict" and built["leaf_count"] == summary["leaves"]
    stats = json.loads(hsc("stats", "--json", cwd=repo).stdout)
    names = {h["name"] for h in stats["repositories"][0]["hierarchies"]}
    assert names == {"default", "strict"}
    rows = [json.loads(line) for line in hsc("export", "--format", "jsonl", cwd=repo).stdout.splitlines()]
    assert sum(row["level"] == "leaf" for row in rows) == summary["leaves"]
    assert {"top", "mid", "leaf"} == {row["level"] for row in rows}


def test_bad_input_gets_a_clear_message(tmp_path):
    missing = hsc("index", str(tmp_path / "nowhere"), check=False)
    assert missing.returncode == 2 and "no such folder" in missing.stderr
    unknown = hsc("index", str(tmp_path), "--set", "similarity_threshold=0.3", check=False)
    assert unknown.returncode == 2 and "unknown setting" in unknown.stderr
    no_index = hsc("query", "anything", cwd=tmp_path, check=False)
    assert no_index.returncode != 0 and "no index" in no_index.stderr


def test_an_empty_query_gets_one_message_everywhere(cli_repo):
    from hsc.api import EMPTY_QUERY, Index

    repo, _, _ = cli_repo
    with Index.open(repo / ".hsc" / "index.db", create=False) as index:
        for text in ("", "   ", "\t\n"):
            with pytest.raises(ValueError, match=f"^{EMPTY_QUERY}$"):
                index.query(text)
            done = hsc("query", text, cwd=repo, check=False)
            assert (done.returncode, done.stderr) == (2, f"hsc: {EMPTY_QUERY}\n")
