"""java_class_scopes "once": a Java file named after its top-level type (``Cart.java`` holding
``class Cart``) names that type once in its scopes; nested types, other top-level types and files
named otherwise keep every name; "seed" keeps the file's path and then the type (real parses)."""

from __future__ import annotations

from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.hierarchy.digest import _owning_type
from hsc.params import Parameters

COUNTER = get_counter()

CART = """\
package com.example.shop;

import java.util.ArrayList;
import java.util.List;

/** A shopping cart that keeps its lines in order. */
public class Cart {
    private final List<Line> lines = new ArrayList<>();

    /** An empty cart. */
    public Cart() {}

    /** Adds a line, merging with an existing line for the same SKU. */
    public void add(String sku, int quantity) {
        for (Line line : lines) {
            if (line.sku.equals(sku)) {
                line.quantity += quantity;
                return;
            }
        }
        lines.add(new Line(sku, quantity));
    }

    /** One SKU and how many of it. */
    static final class Line {
        final String sku;
        int quantity;

        Line(String sku, int quantity) {
            this.sku = sku;
            this.quantity = quantity;
        }
    }
}

/** What a paid cart prints. */
class Receipt {
    String print() {
        return "paid";
    }
}
"""

SMALL = {"minimum_chunk_token_length": 0, "maximum_chunk_token_length": 40, "leaf_minimums": ""}
PACKAGE = "src.main.java.com.example.shop"


def cut(source: str, path: str, scopes: str = "once", language: str = "java"):
    result = cut_file(source, path, language, Parameters(java_class_scopes=scopes, **SMALL), COUNTER)
    assert not result.error_lines
    return {leaf.scope for leaf in result.leaves}, {d.scope: d for d in result.definitions}


def test_a_file_named_after_its_class_names_the_class_once() -> None:
    leaves, definitions = cut(CART, "src/main/java/com/example/shop/Cart.java")
    assert definitions[f"{PACKAGE}.Cart.add"].kind == "method"
    assert definitions[f"{PACKAGE}.Cart.add"].doc.startswith("Adds a line")
    assert definitions[f"{PACKAGE}.Cart"].kind == "class" and definitions[f"{PACKAGE}.Cart"].name == "Cart"
    # The constructor is a member named like its class, not the class again.
    assert definitions[f"{PACKAGE}.Cart.Cart"].kind == "method"
    assert f"{PACKAGE}.Cart.add" in leaves
    assert not any(".Cart.Cart." in scope for scope in leaves | set(definitions))


def test_the_files_own_statements_are_scoped_by_its_package() -> None:
    # package and import: the folders, the package they declare, apart from the class's pieces
    cut_result = cut_file(
        CART, "src/main/java/com/example/shop/Cart.java", "java", Parameters(**SMALL), COUNTER
    )
    first = cut_result.leaves[0]
    assert first.text.startswith("package com.example.shop;") and first.scope == PACKAGE
    assert all(leaf.scope.startswith(f"{PACKAGE}.Cart") for leaf in cut_result.leaves[1:])
    at_root = cut_file(CART, "Cart.java", "java", Parameters(**SMALL), COUNTER)
    assert at_root.leaves[0].scope == "Cart"  # no folders: the file's scope
    assert "Cart.add" in {leaf.scope for leaf in at_root.leaves}


def test_nested_and_other_top_level_types_keep_their_own_names() -> None:
    leaves, definitions = cut(CART, "src/main/java/com/example/shop/Cart.java")
    assert definitions[f"{PACKAGE}.Cart.Line"].kind == "class"
    assert definitions[f"{PACKAGE}.Cart.Line.Line"].kind == "method"  # Line's constructor
    assert definitions[f"{PACKAGE}.Cart.Receipt"].kind == "class"  # below the file, as before
    assert definitions[f"{PACKAGE}.Cart.Receipt.print"].kind == "method"
    assert f"{PACKAGE}.Cart.Receipt" in leaves and f"{PACKAGE}.Cart.Line" in leaves


def test_a_file_named_otherwise_keeps_the_file_and_the_class() -> None:
    leaves, definitions = cut(CART, "src/main/java/com/example/shop/Shop.java")
    shop = PACKAGE.replace("shop", "shop.Shop")
    assert {f"{shop}.Cart", f"{shop}.Cart.add", f"{shop}.Cart.Line", f"{shop}.Receipt"} <= set(definitions)
    assert f"{shop}.Cart.add" in leaves


def test_the_seed_names_the_file_then_the_class() -> None:
    leaves, definitions = cut(CART, "src/main/java/com/example/shop/Cart.java", "seed")
    twice = f"{PACKAGE}.Cart.Cart"
    assert {twice, f"{twice}.add", f"{twice}.Line"} <= set(definitions)
    assert f"{PACKAGE}.Cart.Cart.add" in leaves and f"{PACKAGE}.Cart.add" not in definitions


def test_other_languages_keep_the_class_twice() -> None:
    typescript = "export class Cart {\n  add(sku: string): number {\n    return sku.length;\n  }\n}\n"
    _leaves, definitions = cut(typescript, "src/Cart.ts", language="typescript")
    assert "src.Cart.Cart.add" in definitions


def test_the_option_is_part_of_the_chunk_key() -> None:
    assert "java_classes=once" in Parameters().chunk_key()
    assert "java_classes" not in Parameters(java_class_scopes="seed").chunk_key()


def test_a_digest_still_names_the_class_of_a_method_cut_out_of_it() -> None:
    for scopes in ("once", "seed"):
        _leaves, definitions = cut(CART, "src/main/java/com/example/shop/Cart.java", scopes)
        add = next(d for d in definitions.values() if d.name == "add")
        assert _owning_type(add, PACKAGE + ".Cart") == "Cart"


def test_the_resolver_reads_the_top_level_and_members_either_way() -> None:
    from hsc.search.modules import FileFacts

    for scopes in ("once", "seed"):
        path = "src/main/java/com/example/shop/Cart.java"
        result = cut_file(CART, path, "java", Parameters(java_class_scopes=scopes, **SMALL), COUNTER)
        facts = FileFacts(path, "java", result.definitions, result.bindings)
        assert set(facts.top) == {"Cart", "Receipt"}, scopes  # not Cart's methods nor its nested Line
        members = {d.name for d in facts.members(facts.top["Cart"])}
        assert members == {"Cart", "add", "Line"}, scopes  # not Receipt, the file's other class
        assert {d.name for d in facts.members(facts.top["Receipt"])} == {"print"}


def test_the_file_outline_starts_with_the_files_scope_either_way() -> None:
    from hsc.embed.outlines import module_scope

    path = "src/main/java/com/example/shop/Cart.java"
    for scopes in ("once", "seed"):
        result = cut_file(CART, path, "java", Parameters(java_class_scopes=scopes, **SMALL), COUNTER)
        shown = [d for d in result.definitions if d.kind != "file"]  # no file comment in CART
        assert module_scope(path, shown, [leaf.scope for leaf in result.leaves]) == f"{PACKAGE}.Cart"
