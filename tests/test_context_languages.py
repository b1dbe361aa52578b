"""Context packs for the tabled languages: C#, PHP, Kotlin, Scala and Swift resolve what a hit uses
from other files (imports, namespaces, packages, targets) and through ``this``/``self``/``$this``;
Java's with its class named once or twice in its scopes (java_class_scopes).

Small real projects indexed with the real model into real SQLite; the resolver reads only what
the index stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_context import check_pack, definition_line, source_of, uses_of, write

from hsc.api import Index
from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.model import ImportBinding
from hsc.params import Parameters
from hsc.search.resolve import base_names

FILES = {
    # C#: a block namespace imported with using; a file-scoped namespace; the same namespace elsewhere.
    "cs/Billing/Money.cs": """
        namespace Shop.Billing
        {
            public class Money
            {
                public static int Cents(int euros)
                {
                    return euros * 100;
                }
            }
        }
        """,
    "cs/Tax.cs": """
        namespace Shop;

        public static class Tax
        {
            public static int Rate()
            {
                return 20;
            }
        }
        """,
    "cs/Cart.cs": """
        using Shop.Billing;

        namespace Shop;

        public class Cart : BaseCart
        {
            int Count()
            {
                return 3;
            }

            int Total()
            {
                return Money.Cents(this.Count()) + Tax.Rate() + this.Shipping() + Stock.Left();
            }
        }
        """,
    "cs/BaseCart.cs": """
        namespace Shop
        {
            public class BaseCart
            {
                protected int Shipping()
                {
                    return 5;
                }
            }
        }
        """,
    "cs/Warehouse/Stock.cs": """
        namespace Warehouse
        {
            public static class Stock
            {
                public static int Left()
                {
                    return 7;
                }
            }
        }
        """,
    # PHP: use of a class by its PSR-4 path; the same namespace without a use.
    "php/src/Billing/Money.php": """
        <?php
        namespace Acme\\Billing;

        class Money
        {
            public static function cents(int $euros): int
            {
                return $euros * 100;
            }
        }
        """,
    "php/src/Shop/Tax.php": """
        <?php
        namespace Acme\\Shop;

        class Tax
        {
            public static function rate(): int
            {
                return 20;
            }
        }
        """,
    "php/src/Shop/Cart.php": """
        <?php
        namespace Acme\\Shop;

        use Acme\\Billing\\Money;

        class Cart
        {
            public function count(): int
            {
                return 3;
            }

            public function total(): int
            {
                return Money::cents($this->count()) + Tax::rate();
            }
        }
        """,
    # Kotlin: an object and an aliased top-level function of another package; the same package.
    "kt/src/main/kotlin/com/shop/billing/Pricing.kt": """
        package com.shop.billing

        object Money {
            fun cents(euros: Int): Int {
                return euros * 100
            }
        }

        fun euros(cents: Int): Int {
            return cents / 100
        }
        """,
    "kt/src/main/kotlin/com/shop/Tax.kt": """
        package com.shop

        fun taxRate(): Int {
            return 20
        }
        """,
    "kt/src/main/kotlin/com/shop/Cart.kt": """
        package com.shop

        import com.shop.billing.Money
        import com.shop.billing.euros as toEuros

        class Cart {
            fun count(): Int {
                return 3
            }

            fun total(): Int {
                return Money.cents(this.count()) + toEuros(500) + taxRate() + stockLeft()
            }
        }
        """,
    "kt/src/main/kotlin/com/warehouse/Stock.kt": """
        package com.warehouse

        fun stockLeft(): Int {
            return 7
        }
        """,
    # Scala: a renamed import of an object.
    "scala/com/shop/billing/Money.scala": """
        package com.shop.billing

        object Money {
          def cents(euros: Int): Int = {
            euros * 100
          }
        }
        """,
    "scala/com/shop/Cart.scala": """
        package com.shop

        import com.shop.billing.{Money => M}

        class Cart {
          def count(): Int = {
            3
          }

          def total(): Int = {
            M.cents(this.count())
          }
        }
        """,
    # Swift: a type of the same target, a function of an imported target, self.
    "Sources/Billing/Rates.swift": """
        public func taxRate() -> Int {
            return 20
        }
        """,
    "Sources/App/Money.swift": """
        struct Money {
            static func cents(_ euros: Int) -> Int {
                return euros * 100
            }
        }
        """,
    "Sources/App/Cart.swift": """
        import Billing

        class Cart {
            func count() -> Int {
                return 3
            }

            func total() -> Int {
                return Money.cents(self.count()) + taxRate()
            }
        }
        """,
}


@pytest.fixture(scope="module")
def languages_index(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("languages") / "repo"
    write(root, FILES)
    index = Index.open(root.parent / "index.db", embedder=embedder)
    index.index(root, Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=48))
    yield index, root
    index.close()


def found(index: Index, root: Path, path: str, header: str) -> dict[str, str]:
    """The definitions the function at ``header`` uses, by scope without the file's module prefix."""
    return {
        scope.rsplit(".", 2)[-2] + "." + scope.rsplit(".", 1)[-1]: p
        for scope, p in uses_of(index, root, path, header).items()
    }


@pytest.mark.parametrize(
    ("path", "header", "expected"),
    [
        (
            "cs/Cart.cs",
            "int Total",
            {
                "Money.Cents": "cs/Billing/Money.cs",  # using Shop.Billing;
                "Tax.Rate": "cs/Tax.cs",  # namespace Shop, another file
                "Cart.Count": "cs/Cart.cs",  # this.Count()
                "BaseCart.Shipping": "cs/BaseCart.cs",  # this.Shipping(), from the base class
            },
        ),
        (
            "php/src/Shop/Cart.php",
            "function total",
            {
                "Money.cents": "php/src/Billing/Money.php",  # use Acme\Billing\Money;
                "Tax.rate": "php/src/Shop/Tax.php",  # the same namespace
                "Cart.count": "php/src/Shop/Cart.php",  # $this->count()
            },
        ),
        (
            "kt/src/main/kotlin/com/shop/Cart.kt",
            "fun total",
            {
                "Money.cents": "kt/src/main/kotlin/com/shop/billing/Pricing.kt",
                "Pricing.euros": "kt/src/main/kotlin/com/shop/billing/Pricing.kt",  # as toEuros
                "Tax.taxRate": "kt/src/main/kotlin/com/shop/Tax.kt",  # the same package
                "Cart.count": "kt/src/main/kotlin/com/shop/Cart.kt",  # this.count()
            },
        ),
        (
            "scala/com/shop/Cart.scala",
            "def total",
            {
                "Money.cents": "scala/com/shop/billing/Money.scala",  # {Money => M}
                "Cart.count": "scala/com/shop/Cart.scala",
            },
        ),
        (
            "Sources/App/Cart.swift",
            "func total",
            {
                "Money.cents": "Sources/App/Money.swift",  # the same target
                "Rates.taxRate": "Sources/Billing/Rates.swift",  # import Billing
                "Cart.count": "Sources/App/Cart.swift",  # self.count()
            },
        ),
    ],
)
def test_uses_resolve_across_files_and_through_this(languages_index, path, header, expected):
    index, root = languages_index
    uses = found(index, root, path, header)
    assert {name: uses.get(name) for name in expected} == expected


@pytest.mark.parametrize(
    ("prefix", "language", "used", "via"),
    [
        (
            "cs/",
            "csharp",
            "cs/Billing/Money.cs",
            "calls cs.Billing.Money.Shop.Billing.Money.Cents (as Money.Cents)",
        ),
        (
            "php/",
            "php",
            "php/src/Billing/Money.php",
            "calls php.src.Billing.Money.Money.cents (as Money.cents)",
        ),
        (
            "kt/",
            "kotlin",
            "kt/src/main/kotlin/com/shop/billing/Pricing.kt",
            "calls kt.src.main.kotlin.com.shop.billing.Pricing.Money.cents (as Money.cents)",
        ),
        (
            "scala/",
            "scala",
            "scala/com/shop/billing/Money.scala",
            "calls scala.com.shop.billing.Money.Money.cents (as M.cents)",
        ),
        (
            "Sources/App/",
            "swift",
            "Sources/App/Money.swift",
            "calls Sources.App.Money.Money.cents (as Money.cents)",
        ),
    ],
)
def test_the_pack_of_a_hit_holds_the_definition_it_uses(languages_index, prefix, language, used, via):
    index, root = languages_index
    pack = index.context(
        "cart total in cents", 2000, path_prefix=prefix, language=language, context_dependency_hits=1
    )
    check_pack(pack, root)
    spans = [span for span in pack.spans if span.role in ("uses", "outline") and span.path == used]
    assert spans and any(via in span.reason for span in spans), [
        (span.path, span.role, span.reason) for span in pack.spans
    ]


def test_nothing_is_found_by_name_alone(languages_index):
    index, root = languages_index
    # Stock is in a namespace Cart.cs neither declares nor uses; stockLeft in a package Cart.kt
    # does not import: both stay unresolved though they are defined in the repository.
    csharp = uses_of(index, root, "cs/Cart.cs", "int Total")
    assert "cs/Billing/Money.cs" in csharp.values() and "cs/Warehouse/Stock.cs" not in csharp.values()
    kotlin = uses_of(index, root, "kt/src/main/kotlin/com/shop/Cart.kt", "fun total")
    assert "kt/src/main/kotlin/com/warehouse/Stock.kt" not in kotlin.values()
    assert "kt/src/main/kotlin/com/shop/Tax.kt" in kotlin.values()


def test_base_classes_after_a_colon():
    assert base_names("public class Cart : BaseCart, IDisposable where T : class", "csharp") == [
        "BaseCart",
        "IDisposable",
    ]
    assert base_names("class Cart<T : Any>(val size: Int) : Base(size), Shop.Sized", "kotlin") == [
        "Base",
        "Shop.Sized",
    ]
    assert base_names("class Cart: Base, Codable", "swift") == ["Base", "Codable"]
    assert base_names("class Cart(Base):", "python") == ["Base"]


def test_imports_bind_as_their_tables_read_them():
    """One reading of imports: the bindings are the tables' ImportForms, wherever C# puts a using."""
    source = "namespace Shop.Billing\n{\n    using Acme.Money;\n    using Json = System.Text.Json;\n}\n"
    cut = cut_file(source, "Billing.cs", "csharp", Parameters(), get_counter())
    assert cut.bindings == [
        ImportBinding("*", "Acme.Money", "*", 0, 3),
        ImportBinding("Json", "System.Text", "Json", 0, 4),
    ]
    assert [name for facts in cut.facts for name in facts.imports] == ["Acme.Money", "System.Text.Json"]
    source = "package a\n\nimport b.c.D as E\nimport f.g.*\n"
    assert cut_file(source, "a/A.kt", "kotlin", Parameters(), get_counter()).bindings == [
        ImportBinding("E", "b.c", "D", 0, 3),
        ImportBinding("*", "f.g", "*", 0, 4),
    ]


# Java: a file named after its class scopes it once (java_class_scopes "once", the default); an
# index made with "seed" (or before the option) names the file and then the class. The resolver
# reads both.
JAVA_FILES = {
    "java/com/shop/Money.java": """
        package com.shop;

        public class Money {
            private final int euros;

            public Money(int euros) {
                this.euros = euros;
            }

            public static int cents(int euros) {
                return euros * 100;
            }

            public int doubled() {
                return euros * 2;
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
                Money paid = new Money(this.count());
                return Money.cents(this.count()) + Receipt.fee() + paid.doubled();
            }
        }

        class Receipt {
            static int fee() {
                return 1;
            }
        }
        """,
}


@pytest.fixture(scope="module", params=["once", "seed"])
def java_index(request, tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp(f"java-{request.param}") / "repo"
    write(root, JAVA_FILES)
    index = Index.open(root.parent / "index.db", embedder=embedder)
    params = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=48)
    index.index(root, Parameters(**{**params.__dict__, "java_class_scopes": request.param}))
    yield index, root, request.param
    index.close()


def test_java_uses_resolve_with_the_class_named_once_or_twice(java_index):
    index, root, scopes = java_index
    uses = uses_of(index, root, "java/com/shop/Cart.java", "int total")
    twice = ".Cart" if scopes == "seed" else ""
    money = "java.com.shop.Money" + (".Money" if scopes == "seed" else "")
    assert {
        f"{money}.cents": "java/com/shop/Money.java",  # import com.shop.Money;
        f"java.com.shop.Cart{twice}.count": "java/com/shop/Cart.java",  # this.count()
        "java.com.shop.Cart.Receipt.fee": "java/com/shop/Cart.java",  # another type of the file
        money: "java/com/shop/Money.java",  # new Money(...)
    }.items() <= uses.items()


def test_a_java_class_named_by_its_file_is_shown_by_its_skeleton(java_index):
    index, root, _scopes = java_index
    source = source_of(index, root)
    start = definition_line(root, "java/com/shop/Cart.java", "int total")
    found = source.dependencies("java/com/shop/Cart.java", start, start + 3)
    money = next(d for d in found if d.definition.kind == "class" and d.definition.name == "Money")
    shown = {line for first, last in money.runs for line in range(first, last + 1)}
    lines = (root / "java/com/shop/Money.java").read_text().splitlines()
    text = "\n".join(lines[n - 1] for n in sorted(shown))
    assert "public class Money {" in text and "public Money(int euros) {" in text
    assert "cents" not in text and "doubled" not in text


def test_the_java_pack_names_the_class_as_its_index_does(java_index):
    index, root, scopes = java_index
    pack = index.context(
        "cart total in cents", 2000, path_prefix="java/", language="java", context_dependency_hits=1
    )
    check_pack(pack, root)
    cart = "java.com.shop.Cart" + (".Cart" if scopes == "seed" else "")
    spans = [(span.role, span.reason) for span in pack.spans]
    assert any(
        role == "definition" and reason.startswith(f"{cart}, which holds") and f"hit {cart}.total" in reason
        for role, reason in spans
    ), spans
    assert ("uses", f"{cart} calls java.com.shop.Cart.Receipt.fee (as Receipt.fee)") in spans, spans
