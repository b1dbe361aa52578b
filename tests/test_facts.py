"""Facts read from the syntax tree while cutting: definitions, imports, defined and used names."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import QueryCursor

from hsc.chunk.facts import identifier_names, names_query
from hsc.chunk.parse import cut_file, parser_for
from hsc.chunk.tokens import get_counter
from hsc.model import Definition
from hsc.params import Parameters
from hsc.store import Store

SOURCES = {
    "javascript": (
        "lib/cart.js",
        """import { total } from "./money.js";

/** A cart of line items. */
export class Cart {
  /** Add a product. */
  add(product, quantity = 1) {
    this.lines.push([product, quantity]);
  }
}

const MAX_ITEMS = 50;
""",
        [
            ("class", "Cart", "lib.cart.Cart", "export class Cart", "A cart of line items."),
            ("method", "add", "lib.cart.Cart.add", "add(product, quantity = 1)", "Add a product."),
        ],
    ),
    "python": (
        "shop/tax.py",
        '''"""Sales tax."""
import decimal

RATE = 3


@cache
def tax_for(
    region: str,
    default: int = 0,
) -> int:
    """Look up a rate. More text."""
    return RATE
''',
        [
            (
                "function",
                "tax_for",
                "shop.tax.tax_for",
                "def tax_for(region: str, default: int = 0) -> int",
                "Look up a rate.",
            ),
        ],
    ),
    "go": (
        "kv/kv.go",
        """package kv

import (
\t"fmt"
\t"sync"
)

// Store maps keys to values.
type Store struct {
\tmu sync.Mutex
}

// Get returns a value.
func (s *Store) Get(key string) string {
\treturn fmt.Sprint(key)
}
""",
        [
            ("struct", "Store", "kv.kv.Store", "type Store struct", "Store maps keys to values."),
            (
                "method",
                "Get",
                "kv.kv.Store.Get",
                "func (s *Store) Get(key string) string",
                "Get returns a value.",
            ),
        ],
    ),
}


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_definitions_come_from_the_syntax_tree(language: str) -> None:
    path, source, expected = SOURCES[language]
    cut = cut_file(source, path, language, Parameters(), get_counter())
    found = [(d.kind, d.name, d.scope, d.signature, d.doc) for d in cut.definitions if d.kind != "file"]
    assert found == expected
    assert len(cut.facts) == len(cut.leaves)
    for definition in cut.definitions:
        assert 1 <= definition.start_line <= definition.end_line <= source.count("\n") + 1


def test_leaf_facts_name_imports_definitions_and_uses() -> None:
    path, source, _ = SOURCES["python"]
    cut = cut_file(source, path, "python", Parameters(minimum_chunk_token_length=1), get_counter())
    imports = {name for facts in cut.facts for name in facts.imports}
    defines = {name for facts in cut.facts for name in facts.defines}
    uses = {name for facts in cut.facts for name in facts.uses}
    assert imports == {"decimal"}
    assert {"RATE", "tax_for"} <= defines
    assert {"cache", "region", "default", "str", "int"} <= uses
    assert cut.definitions[0] == Definition("file", "tax", "shop.tax", "", "Sales tax.", 1, 1)
    _, go_source, _ = SOURCES["go"]
    go = cut_file(go_source, "kv/kv.go", "go", Parameters(), get_counter())
    assert [name for facts in go.facts for name in facts.imports] == ["fmt", "sync"]


def test_facts_are_stored_beside_the_leaves_and_replaced_with_them(tmp_path: Path) -> None:
    from hsc.chunk.ingest import load_file
    from hsc.params import Settings

    root = tmp_path / "repo"
    (root / "kv").mkdir(parents=True)
    (root / "kv" / "kv.go").write_text(SOURCES["go"][1])
    parsed = load_file(root, "kv/kv.go", Parameters(), Settings(), get_counter())
    store = Store(tmp_path / "index.db")
    repository = store.upsert_repository(str(root), "repo")
    store.replace_file(repository, parsed.report, parsed.leaves, "k", "m", parsed.definitions, parsed.facts)
    assert store.definitions(repository)["kv/kv.go"] == parsed.definitions
    leaf_ids = [row["id"] for row in store.leaf_rows(repository)]
    assert [store.leaf_facts(leaf_ids)[i] for i in leaf_ids] == parsed.facts
    store.replace_file(
        repository, parsed.report, parsed.leaves[:1], "k", "m", parsed.definitions[:1], parsed.facts[:1]
    )
    assert len(store.definitions(repository)["kv/kv.go"]) == 1
    assert len(store.leaf_facts(leaf_ids + [row["id"] for row in store.leaf_rows(repository)])) == 1
    store.close()


NESTED = '''def outer(flag):
    total = 0
    if flag:
        for item in range(3):
            def inner(é):
                return é + item
            total += inner(item)
    return total


class Box:
    def put(self, thing):
        """Put a thing."""
        größe = len(thing)
        return größe
'''


def test_definitions_deep_in_a_body_and_non_ascii_names_are_read() -> None:
    # The reader skips subtrees without a node a definition can be: the one below a loop stays.
    cut = cut_file(NESTED, "pkg/nested.py", "python", Parameters(), get_counter())
    assert [d.scope for d in cut.definitions] == [
        "pkg.nested.outer",
        "pkg.nested.outer.inner",
        "pkg.nested.Box",
        "pkg.nested.Box.put",
    ]
    uses = {name for facts in cut.facts for name in facts.uses}
    assert {"é", "größe", "item", "flag", "thing", "len"} <= uses


@pytest.mark.parametrize("text", [NESTED, NESTED.replace("é", "e").replace("größe", "size")])
def test_identifier_names_come_sorted_by_start(text: str) -> None:
    data = text.encode("utf-8")
    root = parser_for("python").parse(data).root_node
    nodes = QueryCursor(names_query("python")).captures(root)["name"]
    starts, names = identifier_names(data, list(reversed(nodes)))
    expected = sorted((node.start_byte, node.text.decode("utf-8")) for node in nodes)
    assert list(zip(starts, names, strict=True)) == expected
