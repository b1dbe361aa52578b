"""File roles: read from paths, stored with the leaves (an older database completed), and the
searches that take them: ``Index.query(roles=)``, the context pack, the command line, the agents'
tools (code unless asked)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hsc.api import Index
from hsc.chunk.roles import file_role, parse_roles
from hsc.integrations.tools import CodeSearch, ToolInputError
from hsc.store import Store

ROOT = Path(__file__).resolve().parent.parent

ROLES_OF = {
    "src/flask/app.py": "code",
    "inventory/pricing.py": "code",
    "tests/test_app.py": "test",
    "pkg/test_models.py": "test",
    "server/handler_test.go": "test",
    "web/button.test.tsx": "test",
    "conftest.py": "test",
    "docs/config.rst": "docs",
    "docs/conf.py": "docs",
    "README.md": "docs",
    "LICENSE": "docs",
    "CHANGES.rst": "changelog",
    "HISTORY.md": "changelog",
    "changelog.d/123.bugfix": "changelog",
    "examples/tutorial/app.py": "example",
    "pyproject.toml": "config",
    "setup.py": "config",
    ".github/workflows/tests.yaml": "config",
    "requirements-dev.txt": "config",
    "api/service_pb2.py": "generated",
    "static/app.min.js": "generated",
    "poetry.lock": "generated",
}

DOC = """Pricing
=======

Discounts
---------

The price of an item after a percentage discount is rounded to whole cents.

Tax
---

Sales tax is added per region after the discount.
"""

CHANGES = """Version 2.1
-----------

- The price of an item after a percentage discount is rounded half up to whole cents.
"""

TEST = '''from inventory.pricing import apply_discount


def test_the_price_after_a_percentage_discount_is_rounded_to_cents():
    """The price of an item after a percentage discount is rounded to whole cents."""
    assert apply_discount(10, 15) is not None
'''


def test_each_path_gets_the_role_its_conventions_say() -> None:
    assert {path: file_role(path) for path in ROLES_OF} == ROLES_OF


def test_roles_are_parsed_and_an_unknown_one_is_named() -> None:
    assert parse_roles("code, test") == ("code", "test")
    assert parse_roles("") is None
    with pytest.raises(ValueError, match="unknown role 'source'"):
        parse_roles("code,source")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, embedder):
    """The inventory sample with a test, a reStructuredText page and a changelog that all
    near-quote one sentence, indexed."""
    root = tmp_path_factory.mktemp("roles")
    repo = root / "inventory"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    (repo / "docs").mkdir()
    (repo / "docs" / "pricing.rst").write_text(DOC)
    (repo / "CHANGES.rst").write_text(CHANGES)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_pricing.py").write_text(TEST)
    index = Index.open(root / "index.db", embedder=embedder)
    index.index(repo)
    yield index, repo
    index.close()


QUERY = "the price of an item after a percentage discount rounded to cents"


def test_roles_are_stored_with_the_files(mixed) -> None:
    index, _ = mixed
    roles = index.store.file_roles(index.repository_id(mixed[1]))
    assert roles["CHANGES.rst"] == "changelog"
    assert roles["docs/pricing.rst"] == "docs"
    assert roles["tests/test_pricing.py"] == "test"
    assert roles["inventory/pricing.py"] == "code"


@pytest.mark.parametrize("mode", ["hybrid", "flat", "two-stage", "hybrid-flat"])
def test_a_query_searches_only_the_roles_it_names(mixed, mode: str) -> None:
    index, _ = mixed
    everything = index.query(QUERY, mode=mode, record=False, compare=False)
    assert {file_role(r.path) for r in everything.results} - {"code"}, "the near-quotes rank"
    for roles in (("code",), ("docs", "changelog"), ("test",)):
        response = index.query(QUERY, mode=mode, record=False, compare=False, roles=roles)
        assert response.results, roles
        assert {file_role(r.path) for r in response.results} <= set(roles)
    as_text = index.query(QUERY, mode=mode, record=False, compare=False, roles="docs,changelog")
    assert [r.leaf_id for r in as_text.results] == [
        r.leaf_id
        for r in index.query(
            QUERY, mode=mode, record=False, compare=False, roles=("docs", "changelog")
        ).results
    ]


def test_a_query_refuses_an_unknown_role(mixed) -> None:
    with pytest.raises(ValueError, match="unknown role 'prose'"):
        mixed[0].query(QUERY, roles=("prose",))


def test_the_pack_spends_its_budget_on_the_roles_asked_for(mixed) -> None:
    index, _ = mixed
    pack = index.context(QUERY, 1024, roles=("code",))
    assert pack.spans and {file_role(span.path) for span in pack.spans} == {"code"}
    docs = index.context(QUERY, 1024, roles="docs")
    assert {file_role(span.path) for span in docs.spans if span.role == "hit"} == {"docs"}


def test_agents_tools_search_code_unless_asked(mixed) -> None:
    index, repo = mixed
    tools = CodeSearch(index)
    found = tools.search(QUERY, limit=8)
    assert found["results"] and {file_role(r["path"]) for r in found["results"]} == {"code"}
    everything = tools.search(QUERY, limit=8, roles="all")
    assert {file_role(r["path"]) for r in everything["results"]} - {"code"}
    tests = tools.search(QUERY, limit=3, roles="test")
    assert {r["path"] for r in tests["results"]} == {"tests/test_pricing.py"}
    pack = tools.context(QUERY, 1024)
    assert {file_role(span["path"]) for span in pack["spans"]} == {"code"}
    with pytest.raises(ToolInputError, match="unknown role 'prose'.*or 'all'"):
        tools.search(QUERY, roles="prose")


def test_a_repository_without_code_is_searched_whole(tmp_path, embedder) -> None:
    repo = tmp_path / "notes"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "pricing.rst").write_text(DOC)
    (repo / "CHANGES.rst").write_text(CHANGES)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        found = CodeSearch(index).search(QUERY, limit=3)
        assert {file_role(r["path"]) for r in found["results"]} == {"docs", "changelog"}


def test_an_older_database_gets_its_roles_when_opened_writable(mixed, tmp_path) -> None:
    index, repo = mixed
    copy = tmp_path / "old.db"
    with sqlite3.connect(copy) as target:
        index.store.conn.backup(target)
    target.close()
    with sqlite3.connect(copy) as conn:
        conn.execute("ALTER TABLE files DROP COLUMN role")
    conn.close()
    read_only = Store(copy, read_only=True)
    try:  # nothing written: the roles are read from the paths
        assert read_only.file_roles(1)["CHANGES.rst"] == "changelog"
        assert read_only.lexical_search(1, '"discount"', 50, 5.0, ("code",))
    finally:
        read_only.close()
    Store(copy).close()  # writable: the column is added and filled in the same transaction
    with sqlite3.connect(copy) as conn:
        stored = dict(conn.execute("SELECT path, role FROM files WHERE status = 'indexed'").fetchall())
    conn.close()
    assert stored["CHANGES.rst"] == "changelog" and stored["inventory/pricing.py"] == "code"
    assert "" not in stored.values()


def test_the_command_line_filters_by_role_and_refuses_an_unknown_one(mixed) -> None:
    index, repo = mixed
    run = [sys.executable, "-m", "hsc", "query", QUERY, "--db", str(index.store.path), "--json"]
    done = subprocess.run([*run, "--role", "docs"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert '"path": "docs/pricing.rst"' in done.stdout and "inventory/" not in done.stdout
    bad = subprocess.run([*run, "--role", "prose"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert bad.returncode == 2 and "unknown role 'prose'" in bad.stderr
