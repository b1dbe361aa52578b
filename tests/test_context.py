"""Context packs: uses resolved from the syntax tree across files, and a budget that holds.

Small real repositories indexed with the real model into real SQLite; the resolver reads only
what the index stored."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest

from hsc.api import Index
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters
from hsc.search.contexts import StoreSource

PYTHON_FILES = {
    "pkg/__init__.py": '''
        """The package: re-exports clamp."""
        from .util import clamp
        ''',
    "pkg/util.py": '''
        def clamp(value, low, high):
            """Keep value within low and high."""
            return max(low, min(value, high))


        def scale(value, factor):
            return value * factor
        ''',
    "pkg/base.py": '''
        class Shape:
            """Any shape."""

            sides = 0

            def __init__(self, name):
                self.name = name

            def describe(self):
                return f"{self.name} with {self.sides} sides"

            def unrelated(self):
                return 42

            @classmethod
            def make(cls, name):
                return cls(name)
        ''',
    "pkg/shapes.py": """
        import pkg.util as u
        from pkg import clamp as limit
        from . import util
        from .base import Shape as Base


        class Square(Base):
            def __init__(self, side):
                super().__init__("square")
                self.side = side

            def area(self):
                return self.side * self.side

            def report(self):
                text = super().describe()
                return text + str(self.area())

            def bounded(self):
                return limit(self.side, 0, 10)

            def scaled(self):
                return u.scale(self.side, 2) + util.scale(1, 2)

            def inherited(self):
                return self.describe()

            @classmethod
            def unit(cls):
                return cls.make("unit")


        def make_square(side):
            return Square(side)
        """,
}

OTHER_FILES = {
    "web/money.js": """
        export function total(items) {
          return items.reduce((a, b) => a + b, 0);
        }
        """,
    "web/cart.js": """
        import { total as sum } from './money';

        function tax(x) {
          return x * 0.2;
        }

        export class Cart {
          count() {
            return 3;
          }
          checkout(items) {
            return sum(items) + tax(1) + this.count();
          }
        }
        """,
    "web/util.ts": """
        export function pad(text: string): string {
          return ' ' + text;
        }
        """,
    "web/view.ts": """
        import { pad } from './util';

        function label(name: string): string {
          return pad(name);
        }
        """,
    "svc/store/store.go": """
        package store

        func Open(name string) int {
            return len(name)
        }
        """,
    "svc/main.go": """
        package main

        import "example.com/svc/store"

        func helper() int {
            return 2
        }

        func run() int {
            return store.Open("x") + helper() + other()
        }
        """,
    "svc/other.go": """
        package main

        func other() int {
            return 1
        }
        """,
    "src/geometry.rs": """
        pub fn area(w: u32, h: u32) -> u32 {
            w * h
        }
        """,
    "src/main.rs": """
        use crate::geometry::area;

        fn double(x: u32) -> u32 {
            x * 2
        }

        fn run() -> u32 {
            double(area(2, 3))
        }
        """,
    "java/com/shop/Money.java": """
        package com.shop;

        public class Money {
            public static int cents(int euros) {
                return euros * 100;
            }
        }
        """,
    "java/com/shop/Cart.java": """
        package com.shop;

        import com.shop.Money;

        public class Cart {
            int count() {
                return 3;
            }
            int total() {
                return Money.cents(this.count());
            }
        }
        """,
}


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))


@pytest.fixture(scope="module")
def code_index(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("context") / "repo"
    write(root, {**PYTHON_FILES, **OTHER_FILES})
    index = Index.open(root.parent / "index.db", embedder=embedder)
    # Leaves of one function each (these functions are far smaller than real ones): a leaf's uses
    # are read together, so a leaf holding several would pull in what all of them use.
    index.index(
        root, Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=48, leaf_minimums="")
    )
    yield index, root
    index.close()


def source_of(index: Index, root: Path) -> StoreSource:
    repository_id = index.repository_id(root)
    return StoreSource(index.store, repository_id, root)


def definition_line(root: Path, path: str, text: str) -> int:
    lines = (root / path).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def uses_of(index: Index, root: Path, path: str, header: str) -> dict[str, str]:
    """scope -> path of every definition the function starting at ``header`` depends on."""
    source = source_of(index, root)
    line = definition_line(root, path, header)
    holding = [d for d in source.definitions(path) if d.start_line <= line <= d.end_line]
    definition = min(holding, key=lambda d: d.end_line - d.start_line)  # the innermost
    found = source.dependencies(path, definition.start_line, definition.end_line)
    return {dependency.definition.scope: dependency.path for dependency in found}


def test_python_imports_of_every_kind_resolve_across_files(code_index):
    index, root = code_index
    # from pkg import clamp as limit: through pkg/__init__'s re-export to pkg/util.py
    assert uses_of(index, root, "pkg/shapes.py", "def bounded")["pkg.util.clamp"] == "pkg/util.py"
    # import pkg.util as u; from . import util (a relative import of a module)
    assert uses_of(index, root, "pkg/shapes.py", "def scaled")["pkg.util.scale"] == "pkg/util.py"
    # a class used by name in the same file
    assert "pkg.shapes.Square" in uses_of(index, root, "pkg/shapes.py", "def make_square")


def test_methods_resolve_through_self_cls_super_and_base_classes(code_index):
    index, root = code_index
    # (small methods share a leaf, and a leaf's uses are read together: "in", not "==")
    assert uses_of(index, root, "pkg/shapes.py", "def report")["pkg.base.Shape.describe"] == "pkg/base.py"
    # self.describe() is not Square's own: found in the base class, imported under another name
    assert uses_of(index, root, "pkg/shapes.py", "def inherited")["pkg.base.Shape.describe"] == "pkg/base.py"
    assert uses_of(index, root, "pkg/shapes.py", "def unit")["pkg.base.Shape.make"] == "pkg/base.py"
    assert "pkg.base.Shape.unrelated" not in uses_of(index, root, "pkg/shapes.py", "def inherited")
    # super().__init__ in the constructor
    assert "pkg.base.Shape.__init__" in uses_of(index, root, "pkg/shapes.py", "def __init__(self, side)")


def test_a_class_is_given_by_its_skeleton(code_index):
    index, root = code_index
    source = source_of(index, root)
    start = definition_line(root, "pkg/shapes.py", "def make_square")
    definition = next(d for d in source.definitions("pkg/shapes.py") if d.start_line == start)
    found = source.dependencies("pkg/shapes.py", start, definition.end_line)
    square = next(d for d in found if d.definition.scope == "pkg.shapes.Square")
    shown = {line for first, last in square.runs for line in range(first, last + 1)}
    lines = (root / "pkg/shapes.py").read_text().splitlines()
    text = "\n".join(lines[n - 1] for n in sorted(shown))
    assert "class Square(Base):" in text and "def __init__(self, side):" in text
    assert "def area" not in text and "def report" not in text


@pytest.mark.parametrize(
    ("path", "header", "expected"),
    [
        (
            "web/cart.js",
            "checkout(items)",
            {"web.money.total": "web/money.js", "web.cart.tax": "web/cart.js"},
        ),
        ("web/view.ts", "function label", {"web.util.pad": "web/util.ts"}),
        (
            "svc/main.go",
            "func run",
            {"svc.store.store.Open": "svc/store/store.go", "svc.main.helper": "svc/main.go"},
        ),
        ("src/main.rs", "fn run", {"src.geometry.area": "src/geometry.rs", "src.main.double": "src/main.rs"}),
        (
            "java/com/shop/Cart.java",
            "int total",
            {"java.com.shop.Money.cents": "java/com/shop/Money.java"},
        ),
    ],
)
def test_other_languages_resolve_same_file_definitions_and_named_imports(code_index, path, header, expected):
    index, root = code_index
    found = uses_of(index, root, path, header)
    assert {scope: found.get(scope) for scope in expected} == expected


def test_this_and_package_scope(code_index):
    index, root = code_index
    assert uses_of(index, root, "web/cart.js", "checkout(items)").get("web.cart.Cart.count") == "web/cart.js"
    assert uses_of(index, root, "java/com/shop/Cart.java", "int total").get("java.com.shop.Cart.count")
    # Go: a function of another file of the same package (folder)
    assert uses_of(index, root, "svc/main.go", "func run").get("svc.other.other") == "svc/other.go"


def check_pack(pack, root: Path | None) -> None:
    counter = get_counter()
    assert pack.tokens <= pack.budget
    assert pack.tokens == sum(span.tokens for span in pack.spans)
    seen: dict[str, set[int]] = {}
    order: list[str] = []
    for span in pack.spans:
        lines = set(range(span.start_line, span.end_line + 1))
        assert not lines & seen.get(span.path, set()), f"{span.path}:{span.start_line} repeated"
        seen.setdefault(span.path, set()).update(lines)
        assert span.tokens == counter.count(span.text)
        if span.path not in order:
            order.append(span.path)
        if span.role != "outline" and root is not None:
            file_lines = (root / span.path).read_text().splitlines()
            assert span.text == "\n".join(file_lines[span.start_line - 1 : span.end_line])
    # reading order: a file's spans together, by line
    paths = [span.path for span in pack.spans]
    assert paths == sorted(paths, key=order.index)
    for path in order:
        starts = [span.start_line for span in pack.spans if span.path == path]
        assert starts == sorted(starts)


def test_the_pack_never_exceeds_its_budget_nor_repeats_a_line(code_index):
    index, root = code_index
    for budget in (1, 20, 64, 150, 400, 1000, 4000):
        for query in ("keep a value within bounds", "square area and its report", "checkout a cart"):
            pack = index.context(query, budget)
            check_pack(pack, root)


def test_the_pack_brings_what_its_best_hit_uses(code_index):
    index, root = code_index
    pack = index.context("bounded side limited to ten", 2000, context_dependency_hits=1)
    uses = [span for span in pack.spans if span.role in ("uses", "outline")]
    assert any(span.path == "pkg/util.py" and "clamp" in span.reason for span in uses)


def test_a_split_function_comes_whole(tmp_path, embedder):
    root = tmp_path / "repo"
    body = "\n".join(f"    total_{i} = compute_{i % 7}(value, {i}) + offset_{i}" for i in range(120))
    write(
        root,
        {"long.py": f"def long_function(value):\n    '''Add many parts.'''\n{body}\n    return total_0\n"},
    )
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(root)
        leaves = index.leaves()
        assert len(leaves) >= 3  # the function was split
        pack = index.context("total_60 compute_4 offset_60", 6000)
        check_pack(pack, root)
        roles = {span.role for span in pack.spans}
        assert roles == {"hit", "definition"} or roles == {"hit"}
        covered = {line for span in pack.spans for line in range(span.start_line, span.end_line + 1)}
        assert covered >= set(range(1, 124))  # every line of the function
        small = index.context("total_60 compute_4 offset_60", 300)
        check_pack(small, root)
        assert any(span.role == "definition" for span in small.spans)  # lines around the hit


def test_bad_input_is_refused_with_one_line(code_index):
    index, _ = code_index
    for budget in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="budget"):
            index.context("anything", budget)
    with pytest.raises(ValueError, match="empty"):
        index.context("  ", 100)
    with pytest.raises(ValueError, match="mode"):
        index.context("anything", 100, mode="sideways")


def test_filters_keep_to_a_path_and_a_language(code_index):
    index, _ = code_index
    pack = index.context("total of the items", 500, path_prefix="web/", language="javascript")
    hits = [span for span in pack.spans if span.role == "hit"]
    assert hits and all(span.path.startswith("web/") and span.path.endswith(".js") for span in hits)


def test_json_contract_and_text(code_index):
    index, _ = code_index
    pack = index.context("square area", 600)
    out = json.loads(json.dumps(pack.to_json()))
    assert set(out) == {"query", "budget", "tokens", "mode", "spans", "text"}
    assert out["budget"] == 600 and out["mode"] == "hybrid" and out["tokens"] == pack.tokens
    for span in out["spans"]:
        assert {"path", "start_line", "end_line", "role", "tokens", "reason"} <= set(span)
        assert set(span) <= {
            "path",
            "start_line",
            "end_line",
            "role",
            "tokens",
            "reason",
            "leaf_ids",
            "score",
        }
        if span["role"] == "hit":
            assert span["leaf_ids"][0].startswith("leaf:") and span["reason"].startswith("rank ")
    assert out["text"].startswith("### ")
    first = pack.spans[0]
    assert f"{first.start_line} | " in out["text"].split("\n### ")[0]


def test_a_database_from_before_the_bindings_opens_and_is_read_again(tmp_path, embedder):
    root = tmp_path / "repo"
    write(root, PYTHON_FILES)
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.index(root)
    # Make it what an older hsc wrote: no bindings table, no refs column, the old facts key.
    conn = sqlite3.connect(database)
    conn.executescript(
        "DROP TABLE import_bindings; ALTER TABLE leaf_facts DROP COLUMN refs;"
        "UPDATE files SET chunk_key = replace(chunk_key, 'facts=5', 'facts=1');"
    )
    conn.close()
    with Index.open(database, embedder=embedder) as index:  # opening adds what is missing
        pack = index.context("report the square", 1000)
        check_pack(pack, root)
        assert index.store.import_bindings(index.repository_id(root), "pkg/shapes.py") == []
        report = index.index(root)  # the files are read again with the new facts
        assert report.files_parsed == len(PYTHON_FILES)
        assert index.store.import_bindings(index.repository_id(root), "pkg/shapes.py")
        assert uses_of(index, root, "pkg/shapes.py", "def report")["pkg.base.Shape.describe"] == "pkg/base.py"


def test_the_command_line_gives_the_same_spans_as_the_api(code_index, tmp_path):
    import os
    import subprocess
    import sys

    from conftest import ROOT

    index, root = code_index
    database = str(index.store.path)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}

    def hsc(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "hsc", "context", *args, "--db", database]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)

    done = hsc("square area and its report", "--budget", "700", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out == index.context("square area and its report", 700).to_json()
    queries = tmp_path / "queries.txt"
    queries.write_text("keep a value within bounds\n\ncheckout a cart\n")
    done = hsc("--queries", str(queries), "--budget", "300", "--mode", "flat")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["query"] for line in lines] == ["keep a value within bounds", "checkout a cart"]
    assert all(line["mode"] == "flat" and line["tokens"] <= 300 for line in lines)
    assert lines[1] == index.context("checkout a cart", 300, "flat").to_json()
    refused = hsc("anything", "--budget", "0")
    assert refused.returncode == 2 and "budget" in refused.stderr.strip().splitlines()[-1]
