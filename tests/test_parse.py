"""Leaves from real tree-sitter parses: coverage, sizes, scopes, merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from hsc.chunk.ingest import detect_language, load_file, walk_repository
from hsc.chunk.parse import chunk_fallback, construct_fine_grained_chunks_from_ast, module_name, parse_source
from hsc.chunk.tokens import get_counter
from hsc.model import Leaf
from hsc.params import Parameters, Settings

COUNTER = get_counter()
DEFAULT = Parameters()
# Small enough that each snippet's classes are split into their members,
# large enough that every method fits; no merging, so each unit stays visible.
MEMBERS = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=48, leaf_minimums="")
SAMPLE_REPOS = Path(__file__).resolve().parent.parent / "hsc" / "samples"


def assert_covers(source: str, leaves: list[Leaf]) -> None:
    """Leaves are in order, never overlap, are exact trimmed byte slices with
    consistent line numbers, and together cover every non-blank line."""
    data = source.encode("utf-8")
    previous_end = 0
    covered: set[int] = set()
    for leaf in leaves:
        assert 0 <= leaf.start_byte < leaf.end_byte <= len(data), leaf
        assert leaf.start_byte >= previous_end, f"overlap at line {leaf.start_line}"
        assert data[leaf.start_byte : leaf.end_byte].decode("utf-8") == leaf.text
        assert leaf.text == leaf.text.strip(" \t\r\n\f\v"), "a leaf starts and ends on non-whitespace"
        assert leaf.start_line == data.count(b"\n", 0, leaf.start_byte) + 1
        assert leaf.end_line == leaf.start_line + leaf.text.count("\n")
        assert leaf.token_count == COUNTER.count(leaf.text)
        previous_end = leaf.end_byte
        covered.update(range(leaf.start_line, leaf.end_line + 1))
    for number, line in enumerate(source.split("\n"), start=1):
        if line.strip():
            assert number in covered, f"line {number} not covered: {line!r}"


def leaves_of(source: str, path: str, params: Parameters = DEFAULT) -> list[Leaf]:
    leaves, _errors = parse_source(source, path, detect_language(path), params, COUNTER)
    assert_covers(source, leaves)
    return leaves


def scopes(leaves: list[Leaf]) -> list[str]:
    return [leaf.scope for leaf in leaves]


PYTHON = '''\
"""Pricing rules for the shop."""

from __future__ import annotations

import math
from decimal import Decimal

TAX_RATE = Decimal("0.2")  # standard rate


# Rounds half up, like the till does.
def round_price(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"))


@dataclass
class PriceBook:
    """Prices by SKU, in one currency."""

    currency: str = "EUR"

    def apply_discount(self, sku: str, percent: float) -> Decimal:
        price = self.prices[sku]
        return round_price(price * (1 - Decimal(percent) / 100))

    class Rules:
        """Which products may be discounted."""

        def allows(self, sku: str) -> bool:
            return not sku.startswith("X") and math.isfinite(len(sku))


if __name__ == "__main__":
    print(round_price(Decimal("1.005")))
'''

JAVASCRIPT = """\
import { format } from "./format.js";

const RETRIES = 3;

/** Fetch JSON, retrying on network errors. */
export async function fetchJson(url, options = {}) {
  for (let attempt = 0; attempt < RETRIES; attempt++) {
    try {
      const response = await fetch(url, options);
      return await response.json();
    } catch (error) {
      console.warn(format("retry %d: %s", attempt, error));
    }
  }
  throw new Error(`gave up on ${url}`);
}

export const debounce = (fn, ms) => {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
};

export default class Cache {
  constructor(limit) {
    this.limit = limit;
    this.entries = new Map();
  }

  get(key) {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }
}
"""

TYPESCRIPT = """\
import type { Rgb } from "./types";

export interface Palette {
  primary: string;
  accent: string;
}

type Channel = "r" | "g" | "b";

export enum Mode {
  Light,
  Dark,
}

export function hexToRgb(hex: string): Rgb {
  const value = parseInt(hex.replace("#", ""), 16);
  return { r: (value >> 16) & 255, g: (value >> 8) & 255, b: value & 255 };
}

export class ColorScale {
  private readonly stops: string[] = [];

  constructor(private readonly palette: Palette) {}

  add(stop: string): this {
    this.stops.push(stop);
    return this;
  }

  channel(name: Channel, index: number): number {
    return hexToRgb(this.stops[index])[name];
  }
}
"""

TSX = """\
import React, { useState } from "react";

type Props = { label: string; onClick: () => Promise<void> };

export const Button = ({ label, onClick }: Props) => {
  const [busy, setBusy] = useState(false);
  const handle = async () => {
    setBusy(true);
    try {
      await onClick();
    } finally {
      setBusy(false);
    }
  };
  return (
    <button disabled={busy} onClick={handle}>
      {busy ? <span className="spinner" /> : label}
    </button>
  );
};

export default function Toolbar({ children }: { children: React.ReactNode }) {
  return <div className="toolbar">{children}</div>;
}
"""

GO = """\
package ratelimit

import (
	"sync"
	"time"
)

// TokenBucket refills at a steady rate and spends one token per request.
type TokenBucket struct {
	mu       sync.Mutex
	tokens   float64
	capacity float64
	rate     float64
	last     time.Time
}

// NewTokenBucket returns a full bucket.
func NewTokenBucket(capacity, rate float64) *TokenBucket {
	return &TokenBucket{tokens: capacity, capacity: capacity, rate: rate, last: time.Now()}
}

// AllowAt refills for the time elapsed and spends one token if there is one.
func (b *TokenBucket) AllowAt(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens += now.Sub(b.last).Seconds() * b.rate
	if b.tokens > b.capacity {
		b.tokens = b.capacity
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b TokenBucket) Capacity() float64 { return b.capacity }
"""

RUST = """\
use std::collections::HashMap;
use std::fmt;

/// A counter of words.
#[derive(Debug, Default)]
pub struct WordCount {
    counts: HashMap<String, usize>,
}

impl WordCount {
    pub fn new() -> Self {
        Self { counts: HashMap::new() }
    }

    pub fn add(&mut self, text: &str) {
        for word in text.split_whitespace() {
            *self.counts.entry(word.to_lowercase()).or_insert(0) += 1;
        }
    }
}

impl fmt::Display for WordCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (word, count) in &self.counts {
            writeln!(f, "{word}: {count}")?;
        }
        Ok(())
    }
}

pub fn top(counts: &WordCount, n: usize) -> Vec<(&String, &usize)> {
    let mut pairs: Vec<_> = counts.counts.iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(a.1));
    pairs.truncate(n);
    pairs
}
"""

JAVA = """\
package com.example.shop;

import java.util.ArrayList;
import java.util.List;

/** A shopping cart that keeps its lines in order. */
public class Cart {
    private final List<Line> lines = new ArrayList<>();

    public Cart() {}

    // Adds a line, merging with an existing line for the same SKU.
    public void add(String sku, int quantity) {
        for (Line line : lines) {
            if (line.sku.equals(sku)) {
                line.quantity += quantity;
                return;
            }
        }
        lines.add(new Line(sku, quantity));
    }

    static final class Line {
        final String sku;
        int quantity;

        Line(String sku, int quantity) {
            this.sku = sku;
            this.quantity = quantity;
        }
    }
}
"""

C = """\
#include <stdio.h>
#include <stdlib.h>

#define BUFFER_SIZE 256

struct point {
    int x;
    int y;
};

typedef struct {
    struct point *items;
    size_t count;
} polygon;

/* Sum of the x coordinates. */
static long sum_x(const polygon *shape) {
    long total = 0;
    for (size_t i = 0; i < shape->count; i++) {
        total += shape->items[i].x;
    }
    return total;
}

char *describe(const polygon *shape) {
    char *text = malloc(BUFFER_SIZE);
    snprintf(text, BUFFER_SIZE, "%zu points, sum x %ld", shape->count, sum_x(shape));
    return text;
}
"""

CPP = """\
#include <string>
#include <vector>

namespace geometry {

class Shape {
 public:
  virtual ~Shape() = default;
  virtual double area() const = 0;
  std::string name() const { return name_; }

 private:
  std::string name_;
};

double Shape::scaled_area(double factor) const {
  const double base = area();
  return base * factor * factor;
}

template <typename T>
T clamp(T value, T low, T high) {
  return value < low ? low : (value > high ? high : value);
}

}  // namespace geometry

int main() {
  std::vector<int> values{1, 2, 3};
  return geometry::clamp(static_cast<int>(values.size()), 0, 2);
}
"""

RUBY = """\
require "set"

# Shopping helpers.
module Shop
  class Cart
    attr_reader :items

    def initialize
      @items = []
    end

    # Adds an item unless it is already in the cart.
    def add(item)
      return self if @items.include?(item)

      @items << item
      self
    end

    def self.empty
      new
    end
  end
end

puts Shop::Cart.empty.add("apple").items.inspect
"""

BASH = """\
#!/usr/bin/env bash
set -euo pipefail

# Print a message in green.
say() {
  printf '\\033[32m%s\\033[0m\\n' "$*"
}

for file in "$@"; do
  say "checking $file"
done
"""

MARKDOWN = """\
# Inventory service

A small service that tracks stock levels across warehouses.

## Installation

```bash
pip install -e .

inventory --help
```

## Usage

Run `inventory report` to print the items that are below their reorder point.
Use `--format markdown` for a table.

Setext heading
--------------

Closing words.
"""

TEXT = """\
Release checklist

1. bump the version
2. update the changelog


3. tag the release
   and push the tag
"""

SNIPPETS = {
    "pricing.py": PYTHON,
    "fetch.js": JAVASCRIPT,
    "color.ts": TYPESCRIPT,
    "Button.tsx": TSX,
    "ratelimit.go": GO,
    "words.rs": RUST,
    "Cart.java": JAVA,
    "polygon.c": C,
    "shape.cpp": CPP,
    "cart.rb": RUBY,
    "check.sh": BASH,
    "README.md": MARKDOWN,
    "CHECKLIST.txt": TEXT,
}


@pytest.mark.parametrize("path", sorted(SNIPPETS))
@pytest.mark.parametrize(
    "params",
    [DEFAULT, MEMBERS, Parameters(minimum_chunk_token_length=8, maximum_chunk_token_length=8)],
    ids=["default", "members", "tiny"],
)
def test_every_language_is_covered_without_overlap(path: str, params: Parameters) -> None:
    source = SNIPPETS[path]
    leaves, errors = parse_source(source, path, detect_language(path), params, COUNTER)
    assert leaves
    assert errors == []
    assert_covers(source, leaves)
    assert all(leaf.token_count <= params.maximum_chunk_token_length for leaf in leaves)
    assert {leaf.path for leaf in leaves} == {path}
    expected_chunker = {"markdown": "paragraph", "text": "lines"}.get(detect_language(path), "ast")
    assert {leaf.chunker for leaf in leaves} == {expected_chunker}


def test_detect_language_covers_the_supported_extensions() -> None:
    expected = {
        "a.py": "python",
        "a.pyi": "python",
        "a.js": "javascript",
        "a.mjs": "javascript",
        "a.cjs": "javascript",
        "a.jsx": "javascript",
        "a.ts": "typescript",
        "a.mts": "typescript",
        "a.cts": "typescript",
        "a.tsx": "tsx",
        "a.go": "go",
        "a.rs": "rust",
        "A.java": "java",
        "a.c": "c",
        "a.h": "c",
        "a.cc": "cpp",
        "a.cpp": "cpp",
        "a.cxx": "cpp",
        "a.hpp": "cpp",
        "a.hh": "cpp",
        "a.hxx": "cpp",
        "a.rb": "ruby",
        "a.sh": "bash",
        "a.bash": "bash",
        "README.md": "markdown",
        "a.markdown": "markdown",
        "docs/a.rst": "rst",
        "LICENSE": "text",
        "a.toml": "text",
        "dir.v2/Main.PY": "python",
    }
    assert {path: detect_language(path) for path in expected} == expected


def test_module_names() -> None:
    assert module_name("inventory/pricing.py") == "inventory.pricing"
    assert module_name("src/components/Button.tsx") == "src.components.Button"
    assert module_name("inventory/__init__.py") == "inventory"
    assert module_name("setup.py") == "setup"
    assert module_name("docs/guide.md") == "docs.guide"
    assert module_name("Makefile") == "Makefile"


def test_small_file_is_one_leaf_per_unit_with_module_scope_for_statements() -> None:
    leaves = leaves_of(PYTHON, "shop/pricing.py")
    # Everything fits in one leaf except that units are not glued past the maximum.
    assert all(leaf.scope.startswith("shop.pricing") for leaf in leaves)
    first = leaves[0]
    assert first.text.startswith('"""Pricing rules')
    assert "import math" in first.text and first.scope in ("shop.pricing", "shop.pricing.round_price")


def test_python_scopes_of_nested_classes_and_methods() -> None:
    leaves = leaves_of(
        PYTHON, "shop/pricing.py", Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=32)
    )
    by_start = {leaf.text.split("\n")[0].strip(): leaf.scope for leaf in leaves}
    assert by_start["# Rounds half up, like the till does."] == "shop.pricing.round_price"
    assert by_start["def apply_discount(self, sku: str, percent: float) -> Decimal:"] == (
        "shop.pricing.PriceBook.apply_discount"
    )
    assert by_start["class Rules:"] == "shop.pricing.PriceBook.Rules"
    assert by_start["def allows(self, sku: str) -> bool:"] == "shop.pricing.PriceBook.Rules.allows"
    assert by_start["price = self.prices[sku]"] == "shop.pricing.PriceBook.apply_discount"  # a split method
    assert by_start["@dataclass"] == "shop.pricing.PriceBook"  # the class header, docstring included
    header = next(leaf for leaf in leaves if leaf.text.startswith("@dataclass"))
    assert '"""Prices by SKU, in one currency."""' in header.text
    assert by_start['if __name__ == "__main__":'] == "shop.pricing"


def test_comment_directly_above_a_definition_belongs_to_it() -> None:
    source = (
        "import os\n\n# Explains f.\n# More about f.\ndef f():\n    return os.sep\n\n"
        "# Unrelated.\n\ndef g():\n    pass\n"
    )
    params = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=256)
    leaves = leaves_of(source, "m.py", params)
    texts = [leaf.text for leaf in leaves]
    assert "# Explains f.\n# More about f.\ndef f():\n    return os.sep" in texts
    assert "# Unrelated." in texts  # a blank line separates it from g
    assert "def g():\n    pass" in texts


def test_go_methods_are_scoped_by_receiver_type() -> None:
    leaves = leaves_of(GO, "ratelimit/bucket.go", MEMBERS)
    found = set(scopes(leaves))
    assert "ratelimit.bucket.TokenBucket.AllowAt" in found  # pointer receiver, * stripped
    assert "ratelimit.bucket.TokenBucket.Capacity" in found
    assert "ratelimit.bucket.NewTokenBucket" in found
    assert "ratelimit.bucket.TokenBucket" in found  # the struct type
    allow = [leaf for leaf in leaves if leaf.scope == "ratelimit.bucket.TokenBucket.AllowAt"]
    assert allow[0].text.startswith("// AllowAt refills")


def test_rust_impl_members_are_scoped_by_the_implementing_type() -> None:
    leaves = leaves_of(RUST, "src/words.rs", MEMBERS)
    found = set(scopes(leaves))
    assert {"src.words.WordCount.new", "src.words.WordCount.add", "src.words.WordCount.fmt"} <= found
    assert "src.words.top" in found
    struct = next(leaf for leaf in leaves if "pub struct WordCount" in leaf.text)
    assert struct.text.startswith("/// A counter of words.\n#[derive(Debug, Default)]")


def test_typescript_class_methods_functions_and_types() -> None:
    leaves = leaves_of(TYPESCRIPT, "src/color.ts", MEMBERS)
    found = set(scopes(leaves))
    assert {"src.color.ColorScale.add", "src.color.ColorScale.channel", "src.color.hexToRgb"} <= found
    assert "src.color.Palette" in found
    assert "src.color.Mode" in found


def test_javascript_exports_and_arrow_functions() -> None:
    leaves = leaves_of(JAVASCRIPT, "lib/fetch.js", MEMBERS)
    found = set(scopes(leaves))
    assert {"lib.fetch.fetchJson", "lib.fetch.debounce", "lib.fetch.Cache.get"} <= found


def test_tsx_components() -> None:
    leaves = leaves_of(TSX, "src/Button.tsx", Parameters(minimum_chunk_token_length=0, leaf_minimums=""))
    found = set(scopes(leaves))
    assert {"src.Button.Button", "src.Button.Toolbar"} <= found


def test_cpp_namespaces_and_out_of_class_methods() -> None:
    leaves = leaves_of(CPP, "src/shape.cpp", MEMBERS)
    found = set(scopes(leaves))
    assert "src.shape.geometry.Shape.scaled_area" in found  # Class::method inside a namespace
    assert "src.shape.geometry.clamp" in found  # a template function
    assert "src.shape.main" in found
    assert any(scope.startswith("src.shape.geometry.Shape") for scope in found)


def test_c_functions_are_named_through_pointer_declarators() -> None:
    leaves = leaves_of(C, "polygon.c", MEMBERS)
    found = set(scopes(leaves))
    assert {"polygon.sum_x", "polygon.describe", "polygon.point", "polygon.polygon"} <= found
    sum_x = next(leaf for leaf in leaves if leaf.scope == "polygon.sum_x")
    assert sum_x.text.startswith("/* Sum of the x coordinates. */")


def test_java_classes_constructors_and_nested_classes() -> None:
    leaves = leaves_of(JAVA, "Cart.java", MEMBERS)
    found = set(scopes(leaves))
    assert "Cart.add" in found  # Cart.java's class Cart is named once (java_class_scopes)
    assert any(scope.startswith("Cart.Line") for scope in found)


def test_ruby_modules_classes_and_methods() -> None:
    leaves = leaves_of(RUBY, "lib/cart.rb", MEMBERS)
    found = set(scopes(leaves))
    assert {"lib.cart.Shop.Cart.initialize", "lib.cart.Shop.Cart.add", "lib.cart.Shop.Cart.empty"} <= found
    add = next(leaf for leaf in leaves if leaf.scope == "lib.cart.Shop.Cart.add")
    assert add.text.startswith("# Adds an item")


def test_oversized_function_is_split_into_packed_pieces_with_its_scope() -> None:
    body = "\n".join(f"        total = total + values[{i}] * {i}  # step {i}" for i in range(200))
    source = (
        "import math\n\n\nclass Report:\n"
        "    def summarise(self, values):\n"
        '        """Add everything up, one line at a time."""\n'
        "        total = 0\n"
        f"{body}\n"
        "        return math.floor(total)\n\n\n"
        "def after():\n    return 1\n"
    )
    params = Parameters(minimum_chunk_token_length=24, maximum_chunk_token_length=128)
    leaves = leaves_of(source, "pkg/report.py", params)
    pieces = [leaf for leaf in leaves if leaf.scope == "pkg.report.Report.summarise"]
    assert len(pieces) >= 10
    assert all(leaf.token_count <= 128 for leaf in leaves)
    # Greedy packing: many statements per piece, not one leaf per statement.
    assert len(pieces) < 200 / 4
    assert "def summarise(self, values):" in pieces[0].text
    assert pieces[0].node_type == "function_definition"
    assert "return math.floor(total)" in pieces[-1].text
    assert leaves[-1].scope in ("pkg.report.after", "pkg.report")


def test_oversized_class_is_split_into_members() -> None:
    methods = "\n\n".join(
        f"    def method_{i}(self, value):\n        return value * {i} + self.offset - {i * 7}"
        for i in range(30)
    )
    source = f'class Big(Base):\n    """A large class."""\n\n    offset = 3\n\n{methods}\n'
    params = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=64)
    leaves = leaves_of(source, "big.py", params)
    assert leaves[0].text == 'class Big(Base):\n    """A large class."""'
    assert leaves[0].scope == "big.Big"
    method_scopes = [leaf.scope for leaf in leaves if leaf.text.startswith("def method_")]
    assert method_scopes == [f"big.Big.method_{i}" for i in range(30)]


def test_tiny_pieces_are_merged_and_nothing_is_lost() -> None:
    source = "\n\n".join(f"def f{i}():\n    return {i}" for i in range(12)) + "\n"
    unmerged = leaves_of(source, "tiny.py", Parameters(minimum_chunk_token_length=0))
    merged = leaves_of(source, "tiny.py", Parameters(minimum_chunk_token_length=24))
    assert len(unmerged) == 12
    assert len(merged) < len(unmerged)
    assert all(leaf.token_count >= 24 for leaf in merged[:-1])

    def lines(leaves: list[Leaf]) -> set[int]:
        return {n for leaf in leaves for n in range(leaf.start_line, leaf.end_line + 1)}

    assert lines(merged) >= lines(unmerged)
    # Siblings of different names share their parent's scope once merged.
    assert merged[0].scope == "tiny"


def test_merge_prefers_the_following_unit_and_keeps_the_larger_scope() -> None:
    source = (
        "import os\n\n\ndef walk(top):\n"
        + "\n".join(f"    print(os.path.join(top, 'entry_{i}'))" for i in range(8))
        + "\n"
    )
    leaves = leaves_of(source, "tool.py")
    assert len(leaves) == 1  # the small import joined the function after it
    assert leaves[0].scope == "tool.walk"
    assert leaves[0].node_type == "function_definition"


def test_a_small_sibling_merged_into_a_large_definition_keeps_the_large_ones_scope() -> None:
    source = (
        "type Id = string;\n\nexport function describe(id: Id, verbose: boolean): string {\n"
        + "".join(f"  const part{i} = id.slice({i}, {i + 1}).toUpperCase();\n" for i in range(8))
        + "  return verbose ? id : part0;\n}\n"
    )
    leaves = leaves_of(source, "src/ids.ts")
    assert len(leaves) == 1
    assert leaves[0].scope == "src.ids.describe"
    assert leaves[0].node_type == "function_declaration"


def test_statement_blocks_are_typed_by_their_statements() -> None:
    source = "import os\nimport sys\n\n\ndef main():\n    return os.sep + sys.prefix\n\n\nX = 1\nprint(X)\n"
    leaves = leaves_of(source, "app.py", Parameters(minimum_chunk_token_length=0))
    assert [(leaf.node_type, leaf.scope) for leaf in leaves] == [
        ("import_statement", "app"),
        ("function_definition", "app.main"),
        ("statement_block", "app"),
    ]


def test_a_50000_character_line_is_split_by_tokens() -> None:
    words = " ".join(f"word{i}" for i in range(10_000))[:50_000]
    for path, source in (("notes.txt", words + "\n"), ("blob.py", f"BLOB = '{words}'\n")):
        params = Parameters(maximum_chunk_token_length=200)
        leaves = leaves_of(source, path, params)
        assert len(leaves) > 10
        assert all(leaf.token_count <= 200 for leaf in leaves)
        assert all(leaf.start_line == leaf.end_line == 1 for leaf in leaves)


def test_multibyte_characters_keep_byte_offsets_right() -> None:
    source = 'def greet():\n    return "héllo wörld ✓ 🎉"\n\n\nNAME = "Zoë"\n' + "π = 3.14159  # ≈\n" * 3
    leaves = leaves_of(source, "greet.py", Parameters(minimum_chunk_token_length=0))
    assert any("🎉" in leaf.text for leaf in leaves)
    emoji_line = "🎉" * 3000 + "\n"
    assert_covers(emoji_line, chunk_fallback(emoji_line, "e.txt", "text", Parameters(), COUNTER))


def test_crlf_line_endings() -> None:
    source = "import os\r\n\r\ndef f():\r\n    return os.sep\r\n"
    leaves = leaves_of(source, "crlf.py", Parameters(minimum_chunk_token_length=0))
    assert [leaf.text for leaf in leaves] == ["import os", "def f():\r\n    return os.sep"]


def test_syntax_errors_still_cover_and_report_the_line() -> None:
    source = (
        "import os\n\n\ndef fine():\n    return 1\n\n\n"
        "def broken(:\n    return (\n\n\nclass After:\n    def m(self):\n        return os.sep\n"
    )
    leaves, errors = construct_fine_grained_chunks_from_ast(source, "bad.py", "python", DEFAULT, COUNTER)
    assert_covers(source, leaves)
    assert errors and errors[0] in (8, 9)


def test_markdown_sections_then_paragraphs() -> None:
    leaves = leaves_of(MARKDOWN, "README.md", Parameters(minimum_chunk_token_length=0))
    assert [leaf.node_type for leaf in leaves] == ["section"] * 4
    assert [leaf.text.split("\n")[0] for leaf in leaves] == [
        "# Inventory service",
        "## Installation",
        "## Usage",
        "Setext heading",
    ]
    # The blank line inside the fenced block does not end the section's code.
    assert "inventory --help\n```" in leaves[1].text
    small = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=16)
    split = leaves_of(MARKDOWN, "README.md", small)
    assert "paragraph" in {leaf.node_type for leaf in split}
    assert all(leaf.token_count <= 16 for leaf in split)
    fence = next(leaf for leaf in leaves_of(MARKDOWN, "README.md", MEMBERS) if "pip install" in leaf.text)
    assert "inventory --help" in fence.text


def test_text_is_cut_at_blank_lines() -> None:
    leaves = leaves_of(TEXT, "CHECKLIST.txt", Parameters(minimum_chunk_token_length=0))
    assert [leaf.text.split("\n")[0] for leaf in leaves] == [
        "Release checklist",
        "1. bump the version",
        "3. tag the release",
    ]
    assert {leaf.node_type for leaf in leaves} == {"lines"}
    merged = leaves_of(TEXT, "CHECKLIST.txt")
    assert len(merged) == 1


def test_unknown_language_falls_back_to_text() -> None:
    leaves, errors = parse_source("a = 1\n\nb = 2\n", "x.cfg", "ini", DEFAULT, COUNTER)
    assert errors == [] and [leaf.chunker for leaf in leaves] == ["lines"]


def test_a_split_export_keeps_its_keyword_on_the_header_line() -> None:
    body = "\n".join(f"  const value{i} = compute(input, {i}) * factor + offset;" for i in range(40))
    header = "/** Does many things. */\nexport function manyThings(input: number): number {"
    source = f"{header}\n{body}\n  return 0;\n}}\n"
    leaves = leaves_of(source, "many.ts", Parameters(maximum_chunk_token_length=120))
    assert len(leaves) > 2
    assert leaves[0].text.splitlines()[1].startswith("export function manyThings")
    for before, after in zip(leaves, leaves[1:]):
        assert before.end_line < after.start_line


def test_deeply_nested_expression_does_not_hit_the_recursion_limit() -> None:
    source = "VALUE = " + "(" * 300 + "1" + ")" * 300 + "\n" + "TOTAL = " + " + ".join(["x"] * 5000) + "\n"
    leaves = leaves_of(source, "deep.py", Parameters(maximum_chunk_token_length=32))
    assert all(leaf.token_count <= 32 for leaf in leaves)


def test_sample_repositories_are_covered() -> None:
    assert SAMPLE_REPOS.is_dir(), "hsc/samples/ is part of the repository"
    settings = Settings()
    paths = list(walk_repository(SAMPLE_REPOS))
    assert len(paths) >= 10
    for params in (DEFAULT, Parameters(minimum_chunk_token_length=16, maximum_chunk_token_length=48)):
        indexed = 0
        for rel_path in paths:
            parsed = load_file(SAMPLE_REPOS, rel_path, params, settings, COUNTER)
            assert parsed.report.status != "error", parsed.report
            if parsed.report.status != "indexed":
                continue
            source = (SAMPLE_REPOS / rel_path).read_bytes().decode("utf-8").removeprefix("\ufeff")
            assert_covers(source, parsed.leaves)
            assert all(leaf.token_count <= params.maximum_chunk_token_length for leaf in parsed.leaves)
            if params is DEFAULT:
                # No two leaves on one line: at the default sizes every cut here falls
                # between lines (a 48-token maximum must cut inside some signatures).
                for before, after in zip(parsed.leaves, parsed.leaves[1:]):
                    assert before.end_line < after.start_line, (rel_path, before.scope, after.scope)
            indexed += 1
        assert indexed >= 10
