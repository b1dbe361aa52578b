"""``bench localize``: questions from a real git history (made here with git), gold from the
parent's stored definitions, the systems' ranks, file ranking and pack coverage."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hsc.bench.localize import Answer, FileBM25, bench_localize, file_rank, format_localize, function_rank
from hsc.model import Definition
from hsc.quality.history import (
    changed_lines,
    git_dir_of,
    gold_definitions,
    history,
    is_bump,
    usable,
)

ROOT = Path(__file__).resolve().parent.parent
PRICING = "inventory/pricing.py"
OLD_RETURN = "    return price * (Decimal(100) - percent) / Decimal(100)\n"
NEW_RETURN = "    return round_money(price * (Decimal(100) - percent) / Decimal(100))\n"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _commit(repo: Path, subject: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", subject)
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """The inventory sample's history in five commits: an import, a code change, a docs-only
    change, a version bump and a change of a test alone."""
    repo = tmp_path_factory.mktemp("history") / "inventory"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    (repo / "CHANGES.rst").write_text("Version 1.0\n-----------\n\n- First release.\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_pricing.py").write_text("def test_nothing():\n    assert True\n")
    _git(repo, "init", "-q")
    _commit(repo, "Import the inventory package")
    pricing = repo / PRICING
    pricing.write_text(pricing.read_text().replace(OLD_RETURN, NEW_RETURN))
    (repo / "CHANGES.rst").write_text(
        (repo / "CHANGES.rst").read_text() + "\n- A discounted price is rounded to cents.\n"
    )
    _commit(repo, "Round a discounted price to whole cents (#12)")
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nMore words.\n")
    _commit(repo, "Say more in the readme")
    (repo / "inventory" / "__init__.py").write_text(
        (repo / "inventory" / "__init__.py").read_text() + '\n__version__ = "1.1"\n'
    )
    _commit(repo, "Bump version to 1.1")
    (repo / "tests" / "test_pricing.py").write_text("def test_nothing():\n    assert 1\n")
    _commit(repo, "Check nothing in a different way")
    return repo


def test_history_reads_subjects_parents_and_paths_and_keeps_the_usable(repo: Path) -> None:
    commits = history(git_dir_of(repo))
    assert [c.subject for c in commits] == [
        "Check nothing in a different way",
        "Bump version to 1.1",
        "Say more in the readme",
        "Round a discounted price to whole cents",  # the pull request's number is not the question's
    ]  # the first commit has no parent to index
    assert commits[3].paths == ("CHANGES.rst", PRICING)
    assert [c.subject for c in commits if usable(c)] == ["Round a discounted price to whole cents"]


def test_version_bumps_are_told_from_changes() -> None:
    assert is_bump("Bump version to 1.1") and is_bump("release 2.0.1") and is_bump("3.1.4")
    assert not is_bump("Fix the version check of the session cookie")


def test_changed_lines_reads_the_parent_side_of_a_diff() -> None:
    diff = "\n".join(
        [
            "diff --git a/pkg/a.py b/pkg/a.py",
            "--- a/pkg/a.py",
            "+++ b/pkg/a.py",
            "@@ -10,2 +10,3 @@ def f():",
            "@@ -30 +31 @@ def g():",
            "@@ -40,0 +42,2 @@ def h():",
            "diff --git a/new.py b/new.py",
            "--- /dev/null",
            "+++ b/new.py",
            "@@ -0,0 +1,3 @@",
        ]
    )
    assert changed_lines(diff) == {"pkg/a.py": [(10, 11, False), (30, 30, False), (40, 41, True)]}


def _function(name: str, start: int, end: int, kind: str = "function") -> Definition:
    return Definition(kind, name, f"pkg.a.{name}", f"def {name}()", "", start, end)


def test_gold_is_the_innermost_function_and_an_insertion_counts_only_inside_one() -> None:
    definitions = {
        "pkg/a.py": [
            _function("Box", 1, 30, kind="class"),
            _function("put", 5, 12, kind="method"),
            _function("take", 14, 20, kind="method"),
            _function("free", 40, 50),
        ]
    }
    changes = {"pkg/a.py": [(6, 6, False), (12, 13, True), (25, 25, False), (45, 46, True)]}
    gold = gold_definitions(changes, definitions)
    assert [scope for *_, scope in gold.functions] == ["pkg.a.put", "pkg.a.free"]
    assert gold.files == ("pkg/a.py",)
    tests_only = gold_definitions(
        {"tests/test_a.py": [(6, 6, False)]}, {"tests/test_a.py": definitions["pkg/a.py"]}
    )
    assert tests_only.functions == ()


def test_ranks_count_a_leaf_overlapping_a_changed_function() -> None:
    gold = gold_definitions({"pkg/a.py": [(6, 6, False)]}, {"pkg/a.py": [_function("put", 5, 12)]})
    answer = Answer(
        [("docs/a.rst", 1, 9), ("pkg/a.py", 1, 4), ("pkg/a.py", 10, 30)], ["docs/a.rst", "pkg/a.py"]
    )
    assert function_rank(answer, gold) == 3
    assert file_rank(answer, gold) == 2
    assert function_rank(Answer([("pkg/a.py", 13, 30)], []), gold) is None


def test_bm25_over_whole_files_ranks_by_identifier_parts() -> None:
    files = FileBM25({"a.py": "def round_money(x): ...", "b.py": "def parse(x): ...", "c.md": "money"})
    try:
        assert files.search("round the money")[:1] == ["a.py"]
        assert files.search("") == []
    finally:
        files.close()


def test_the_benchmark_asks_each_usable_commit_at_its_parent(repo: Path, tmp_path: Path) -> None:
    result = bench_localize([repo], commits=10, seed=0, out=tmp_path / "out", report=lambda _: None)
    (only,) = result["repositories"]
    assert only["commits_drawn"] == 1 and only["skipped_no_function"] == []
    (question,) = only["questions"]
    assert question["subject"] == "Round a discounted price to whole cents"
    # Gold from the parent's tree: the function as it was before the change.
    (gold,) = question["gold"]
    assert gold.startswith(f"{PRICING}:73-") and gold.endswith("inventory.pricing.apply_discount")
    assert question["function_rank"]["hsc"] is not None
    assert question["file_rank"]["hsc"] is not None
    assert question["top_role"]["hsc"] == "code"
    assert question["pack"]["hsc"] is True
    tree = tmp_path / "out" / "inventory" / "tree"
    assert OLD_RETURN in (tree / PRICING).read_text()  # never the commit's own tree
    saved = json.loads((tmp_path / "out" / "localize.json").read_text())
    assert saved["all"]["questions"] == 1
    assert set(saved["all"]["systems"]) == {"hsc", "flat", "bm25-leaves", "bm25-files"}
    assert "function hsc - flat" in format_localize(result)


def test_a_folder_without_history_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a git repository"):
        bench_localize([tmp_path], commits=3, seed=0, out=tmp_path / "out", report=lambda _: None)


def test_variants_are_parsed_and_a_bad_one_is_named() -> None:
    from hsc.bench.localize import parse_variants

    assert parse_variants(["names:exact_name_weight=0.3;tool_roles=code,test", "all:tool_roles="]) == {
        "names": {"exact_name_weight": "0.3", "tool_roles": "code,test"},
        "all": {"tool_roles": ""},
    }
    with pytest.raises(ValueError, match="LABEL:NAME=VALUE"):
        parse_variants(["exact_name_weight=0.3"])
    with pytest.raises(ValueError, match="expected NAME=VALUE in variant 'x'"):
        parse_variants(["x:exact_name_weight"])


def test_a_variant_is_asked_beside_hsc_and_paired_against_it(repo: Path, tmp_path: Path) -> None:
    result = bench_localize(
        [repo],
        commits=10,
        seed=0,
        out=tmp_path / "out",
        overrides={"tool_roles": ""},
        report=lambda _: None,
        variants={"code": {"tool_roles": "code"}},
    )
    systems = result["all"]["systems"]
    assert list(systems) == ["hsc", "code", "flat", "bm25-leaves", "bm25-files"]
    assert systems["code"]["top_is_code"] == 1.0
    assert "function code - hsc" in result["all"]["paired"]
    with pytest.raises(ValueError, match="cannot be called 'flat'"):
        bench_localize([repo], 1, 0, tmp_path / "x", variants={"flat": {}}, report=lambda _: None)


def test_an_index_parameter_indexes_the_parents_with_it_and_a_run_pairs_against_another(
    repo: Path, tmp_path: Path
) -> None:
    from hsc import Index
    from hsc.bench.localize import paired_runs

    before = bench_localize([repo], commits=10, seed=0, out=tmp_path / "a", report=lambda _: None)
    after = bench_localize(
        [repo],
        commits=10,
        seed=0,
        out=tmp_path / "b",
        overrides={"leaf_minimums": "python=400"},
        report=lambda _: None,
    )
    assert after["set"] == {"leaf_minimums": "python=400"}
    leaves = {}
    for name in ("a", "b"):
        with Index.open(tmp_path / name / "inventory" / "index.db") as index:
            (repository,) = index.repositories()
            leaves[name] = len(index.leaves(int(repository["id"]), with_text=False))
    assert leaves["b"] < leaves["a"]  # short Python leaves merged with their neighbours
    paired = paired_runs(before, after)
    assert paired["questions"] == 1
    assert set(paired["paired"]) == {
        "function hsc: after - before",
        "file hsc: after - before",
        "pack hsc: after - before",
    }
    with pytest.raises(ValueError, match="leaf_minimums"):
        bench_localize(
            [repo], 1, 0, tmp_path / "c", overrides={"leaf_minimums": "python"}, report=lambda _: None
        )
