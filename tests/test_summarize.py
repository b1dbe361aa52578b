"""Summaries: the embedded digest, and Ollama through the real client against a
fake server on 127.0.0.1 (and a real one when OLLAMA_HOST answers)."""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Iterator

import ollama
import pytest

from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import TiktokenCounter, get_counter
from hsc.hierarchy.summarize import (
    DigestSummarizer,
    OllamaSummarizer,
    Summary,
    SummaryRequest,
    check_ollama,
    describe_summarizer,
    fallback_note,
    make_summarizer,
)
from hsc.model import LeafFacts, common_scope
from hsc.params import Parameters, Settings

try:  # tests/ is not a package today; if it becomes one, the helper is found through it
    from fake_ollama import DEFAULT_REPLY, FakeOllama, free_port
except ImportError:  # pragma: no cover - depends on how pytest was configured
    from tests.fake_ollama import DEFAULT_REPLY, FakeOllama, free_port


@pytest.fixture(scope="module")
def counter() -> TiktokenCounter:
    return get_counter()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


PRICING_LEAVES = [
    '''def round_money(amount: Decimal, currency: str = "USD") -> Decimal:
    """Round an amount to the smallest unit of its currency.

    Uses banker's rounding so that large batches do not drift upwards.
    """
    if currency in ZERO_DECIMAL_CURRENCIES:
        return amount.quantize(Decimal("1"), rounding=ROUND_HALF_EVEN)
    return amount.quantize(CENT, rounding=ROUND_HALF_EVEN)''',
    '''def apply_discount(price: Decimal, percent: Decimal) -> Decimal:
    """Take a percentage off a price.

    Values outside 0..100 are rejected rather than clamped.
    """
    if percent < 0 or percent > 100:
        raise ValueError(f"discount percent must be between 0 and 100, got {percent}")
    return price * (Decimal(100) - percent) / Decimal(100)''',
    '''def tax_rate_for(
    region: str,
    default: Decimal = ZERO,
) -> Decimal:
    """Look up the sales tax or VAT rate for a region code such as "US-CA" or "DE"."""
    code = region.strip().upper()
    if code in TAX_RATES:
        return TAX_RATES[code]
    return TAX_RATES.get(code.split("-", 1)[0], default)''',
    '''class PriceBook:
    """Keeps list prices per SKU and applies promotions to them."""

    def __init__(self, prices: dict[str, Decimal]) -> None:
        self._prices = dict(prices)

    def price_of(self, sku: str) -> Decimal:
        """Return the list price of a SKU, raising KeyError for unknown ones."""
        return self._prices[sku]

    # Reload prices from a remote source; keeps old ones on failure.
    async def refresh(self, source) -> None:
        self._prices.update(await source.fetch())''',
]
PRICING_SCOPES = [
    "inventory.pricing.round_money",
    "inventory.pricing.apply_discount",
    "inventory.pricing.tax_rate_for",
    "inventory.pricing.PriceBook",
]

GO_LEAVES = [
    """// Stack is a bounded LIFO stack of strings. The zero value is not usable; call New.
type Stack struct {
	items    []string
	capacity int
}""",
    """// New creates an empty stack that holds at most capacity items.
func New(capacity int) *Stack {
	return &Stack{capacity: capacity}
}""",
    """// Push adds an item on top. It fails with ErrFull when the stack is at capacity.
func (s *Stack) Push(item string) error {
	if len(s.items) >= s.capacity {
		return fmt.Errorf("push %q: %w", item, ErrFull)
	}
	s.items = append(s.items, item)
	return nil
}""",
    """// Pop removes and returns the top item; ok is false when the stack is empty.
func (s *Stack) Pop() (item string, ok bool) {
	if len(s.items) == 0 {
		return "", false
	}
	item = s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return item, true
}""",
]


def cut_request(kind: str, path: str, language: str, source: str, budget: int) -> SummaryRequest:
    """A request as the pipeline makes it: the leaves of a real cut and the facts its syntax tree gave."""
    cut = cut_file(source, path, language, Parameters(), get_counter())
    scopes = [leaf.scope for leaf in cut.leaves]
    return SummaryRequest(
        kind,
        path,
        language,
        common_scope(scopes),
        [leaf.text for leaf in cut.leaves],
        scopes,
        budget,
        tuple(cut.definitions),
        tuple(cut.facts),
    )


def python_group(budget: int = 200) -> SummaryRequest:
    return cut_request("group", "inventory/pricing.py", "python", "\n\n\n".join(PRICING_LEAVES), budget)


def go_group(budget: int = 150) -> SummaryRequest:
    source = "package stack\n\n" + "\n\n".join(GO_LEAVES)
    return cut_request("group", "stack/stack.go", "go", source, budget)


# ------------------------------------------------------------------------------------------------------
# SummaryRequest


def test_content_hash_is_stable_and_covers_what_the_summary_depends_on() -> None:
    base = python_group()
    assert base.content_hash() == python_group().content_hash()
    assert len(base.content_hash()) == 64
    changed = [
        dataclasses.replace(base, kind="document"),
        dataclasses.replace(base, path="other.py"),
        dataclasses.replace(base, language="cython"),
        dataclasses.replace(base, scope="inventory"),
        dataclasses.replace(base, texts=[*base.texts[:-1], "x"]),
        dataclasses.replace(base, scopes=[*base.scopes[:-1], "y"]),
        dataclasses.replace(base, token_budget=201),
    ]
    hashes = {request.content_hash() for request in changed}
    assert base.content_hash() not in hashes and len(hashes) == len(changed)
    # Where one text ends and the next begins matters too.
    split_one = SummaryRequest("group", "a.py", "python", "a", ["ab", "c"], ["a", "a"], 10)
    split_two = SummaryRequest("group", "a.py", "python", "a", ["a", "bc"], ["a", "a"], 10)
    assert split_one.content_hash() != split_two.content_hash()


def test_request_rejects_unknown_kind_and_unparallel_scopes() -> None:
    with pytest.raises(ValueError, match="kind"):
        SummaryRequest("chapter", "a.py", "python", "a", ["x"], ["a"], 10)
    with pytest.raises(ValueError, match="differ in length"):
        SummaryRequest("group", "a.py", "python", "a", ["x", "y"], ["a"], 10)


# ------------------------------------------------------------------------------------------------------
# Digest


def test_python_group_digest_has_signatures_docs_and_terms_within_budget(counter: TiktokenCounter) -> None:
    summary = DigestSummarizer(counter).summarise(python_group(400))
    text = summary.text
    assert (summary.summariser, summary.model, summary.note) == ("digest", "digest-v2", "")
    first_line = text.splitlines()[0]
    assert first_line.startswith("Part of inventory/pricing.py (inventory.pricing)")
    assert "3 functions" in first_line and "1 class" in first_line and "3 methods" in first_line
    assert 'def round_money(amount: Decimal, currency: str = "USD") -> Decimal' in text
    assert "Round an amount to the smallest unit of its currency." in text
    assert "Take a percentage off a price." in text
    # A multi-line parameter list is joined into one signature.
    assert "def tax_rate_for(region: str, default: Decimal = ZERO) -> Decimal" in text
    assert "class PriceBook — Keeps list prices per SKU and applies promotions to them." in text
    assert "  def price_of(self, sku: str) -> Decimal — Return the list price of a SKU" in text
    assert "  async def refresh(self, source) -> None — Reload prices from a remote source;" in text
    assert "Key terms:" in text and "price" in text.split("Key terms:")[1]
    assert counter.count(text) <= 400


def test_go_group_digest_has_signatures_and_doc_sentences(counter: TiktokenCounter) -> None:
    text = DigestSummarizer(counter).summarise(go_group(150)).text
    assert "type Stack struct — Stack is a bounded LIFO stack of strings." in text
    assert "func New(capacity int) *Stack — New creates an empty stack" in text
    assert "func (s *Stack) Push(item string) error — Push adds an item on top." in text
    assert "func (s *Stack) Pop() (item string, ok bool)" in text
    assert "2 methods" in text.splitlines()[0]
    assert counter.count(text) <= 150


@pytest.mark.parametrize("budget", [1, 3, 10, 25, 40, 60, 90, 130, 200, 400, 1000])
def test_digest_stays_within_budget_and_drops_whole_lines(counter: TiktokenCounter, budget: int) -> None:
    summarizer = DigestSummarizer(counter)
    full_lines = summarizer.summarise(python_group(10_000)).text.splitlines()
    text = summarizer.summarise(python_group(budget)).text
    assert text and counter.count(text) <= budget
    header = full_lines[0]
    for line in text.splitlines():
        if line.startswith("Also defines: ") or line == text.splitlines()[0] and len(line) < len(header):
            continue  # the list of left-out names, or a header cut because nothing else fits
        # Kept lines are whole, or a signature whose doc sentence was left off.
        assert any(full == line or full.startswith(line + " — ") for full in full_lines), line
    if budget >= 60:
        assert text.splitlines()[0] == header  # the header is never cut when it fits


def test_tight_budget_keeps_signatures_before_docs_and_names_the_rest(counter: TiktokenCounter) -> None:
    text = DigestSummarizer(counter).summarise(python_group(70)).text
    assert "def round_money(" in text
    assert counter.count(text) <= 70
    roomy = DigestSummarizer(counter).summarise(python_group(110)).text
    assert "Round an amount" in roomy and "def apply_discount(" in roomy


def test_document_digest_gives_the_file_overview(counter: TiktokenCounter) -> None:
    module = '''"""Price calculations: discounts, tax and currency handling.

    Money values are Decimals, rounded only at the edges.
    """

from decimal import Decimal
import logging

CENT = Decimal("0.01")
'''
    source = "\n\n".join([module, *PRICING_LEAVES])
    request = cut_request("document", "inventory/pricing.py", "python", source, 300)
    text = DigestSummarizer(counter).summarise(request).text
    lines = text.splitlines()
    assert lines[0].startswith("inventory/pricing.py: Python file, ")
    assert lines[1] == "Price calculations: discounts, tax and currency handling."
    assert "def apply_discount(price: Decimal, percent: Decimal) -> Decimal" in text
    assert "Uses: decimal, logging" in text
    assert "CENT" in text  # module-level names are listed
    assert counter.count(text) <= 300


def test_methods_cut_out_of_their_class_are_named_with_it(counter: TiktokenCounter) -> None:
    source = (
        "class Item:\n"
        '    def with_price(self, new_price: Decimal) -> "Item":\n'
        '        """Return a copy with another price."""\n'
        "        return replace(self, unit_price=new_price)\n\n"
        "    def has_tag(self, tag: str) -> bool:\n        return tag in self.tags\n"
    )
    cut = cut_file(source, "inventory/models.py", "python", Parameters(), counter)
    methods = tuple(d for d in cut.definitions if d.kind == "method")
    assert [d.scope for d in methods] == ["inventory.models.Item.with_price", "inventory.models.Item.has_tag"]
    # A group that holds the methods but not the class header, as when a big class is split.
    texts = [source.split("\n\n")[0].split("\n", 1)[1], source.split("\n\n")[1]]
    request = SummaryRequest(
        "group",
        "inventory/models.py",
        "python",
        "inventory.models",
        texts,
        [d.scope for d in methods],
        100,
        methods,
        (LeafFacts(), LeafFacts()),
    )
    text = DigestSummarizer(counter).summarise(request).text
    with_price = 'def Item.with_price(self, new_price: Decimal) -> "Item"'
    assert f"{with_price} — Return a copy with another price." in text
    assert "def Item.has_tag(self, tag: str) -> bool" in text
    assert "2 methods" in text.splitlines()[0]


LANGUAGE_SAMPLES = {
    "typescript": (
        "src/color.ts",
        """/**
 * Colour helpers: parsing hex and checking contrast.
 */

import { clamp } from "./math";

/** Parse a hex colour such as "#1e90ff" into channels. Short forms work too. */
export function hexToRgb(hex: string): Rgb {
  return parse(hex);
}

/** Keep a number inside [min, max]. */
const clampChannel = (value: number, min: number, max: number): number =>
  Math.min(Math.max(value, min), max);

export class Palette {
  /** Add a named colour. */
  add(name: string, hex: string): void {
    this.colours.set(name, hex);
  }
}
""",
        [
            "Colour helpers: parsing hex and checking contrast.",
            'export function hexToRgb(hex: string): Rgb — Parse a hex colour such as "#1e90ff"',
            "const clampChannel = (value: number, min: number, max: number): number => — Keep a number",
            "export class Palette",
            "  add(name: string, hex: string): void — Add a named colour.",
        ],
    ),
    "rust": (
        "src/lib.rs",
        """//! A tiny LRU cache keyed by strings.

use std::collections::HashMap;

/// A least-recently-used cache. Evicts the oldest entry when full.
#[derive(Debug, Clone)]
pub struct LruCache<V> {
    map: HashMap<String, V>,
}

impl<V: Clone> LruCache<V> {
    /// Looks up a key and marks it as recently used.
    pub fn get<'a>(&'a mut self, key: &str) -> Option<&'a V> {
        self.map.get(key)
    }
}
""",
        [
            "A tiny LRU cache keyed by strings.",
            "pub struct LruCache<V> — A least-recently-used cache.",
            "impl<V: Clone> LruCache<V>",
            "  pub fn get<'a>(&'a mut self, key: &str) -> Option<&'a V> — Looks up a key and marks it",
            "Uses: std::collections::HashMap",
        ],
    ),
    "java": (
        "src/Inventory.java",
        """package com.example;

import java.util.Map;

/**
 * Keeps stock counts per SKU and refuses to go negative.
 */
public class Inventory {
    /**
     * Adds units of a SKU. Throws if the total passes the limit.
     * @param sku the stock-keeping unit
     */
    public void add(String sku, int units) {
        counts.merge(sku, units, Integer::sum);
    }

    public Map<String, Integer> snapshot() {
        return Map.copyOf(counts);
    }
}
""",
        [
            "public class Inventory — Keeps stock counts per SKU and refuses to go negative.",
            "  public void add(String sku, int units) — Adds units of a SKU.",
            "  public Map<String, Integer> snapshot()",
        ],
    ),
    "c": (
        "src/ring.c",
        """#include <stdlib.h>

/* A ring buffer; head is the next write position. */
struct ring {
    unsigned char *data;
    size_t head;
};

/* Allocate a ring of at least RING_MIN bytes. Returns NULL on failure. */
struct ring *ring_new(size_t size)
{
    struct ring *r = malloc(sizeof *r);
    if (r == NULL)
        return NULL;
    return r;
}
""",
        [
            "struct ring — A ring buffer; head is the next write position.",
            "struct ring *ring_new(size_t size) — Allocate a ring of at least RING_MIN bytes.",
            "Uses: stdlib.h",
        ],
    ),
    "cpp": (
        "src/shapes.cpp",
        """namespace geo {

// A shape with an area.
class Shape {
public:
    // Area in square units.
    virtual double area() const = 0;
};

// Total area of a list of shapes.
double total_area(const Shape* const* shapes, int count) {
    double total = 0;
    for (int i = 0; i < count; ++i) {
        total += shapes[i]->area();
    }
    return total;
}

}
""",
        [
            "class Shape — A shape with an area.",
            "  virtual double area() const = 0 — Area in square units.",
            "double total_area(const Shape* const* shapes, int count) — Total area of a list of shapes.",
        ],
    ),
    "ruby": (
        "lib/cart.rb",
        """# frozen_string_literal: true

# A shopping cart that totals line items.
class Cart
  # Adds a product; quantity defaults to one.
  def add(product, quantity = 1)
    @lines << [product, quantity]
  end

  def empty?
    @lines.empty?
  end
end
""",
        [
            "class Cart — A shopping cart that totals line items.",
            "  def add(product, quantity = 1) — Adds a product; quantity defaults to one.",
            "  def empty?",
        ],
    ),
    "markdown": (
        "README.md",
        """# inventory

A small stock-keeping service for a warehouse. It tracks items.

## Usage

Run `inventory report` to print stock levels.

```python
# not a heading
```
""",
        ["inventory — A small stock-keeping service for a warehouse.", "  Usage — Run `inventory report`"],
    ),
    "text": (
        "NOTES.txt",
        "Caching keeps embeddings per content hash. Vectors survive moves.\n\n"
        "Retries back off exponentially.\n",
        ["NOTES.txt: plain text file", "Caching keeps embeddings per content hash.", "Retries back off"],
    ),
}


@pytest.mark.parametrize("language", sorted(LANGUAGE_SAMPLES))
def test_digest_reads_each_language(counter: TiktokenCounter, language: str) -> None:
    path, source, expected = LANGUAGE_SAMPLES[language]
    request = cut_request("document", path, language, source, 250)
    text = DigestSummarizer(counter).summarise(request).text
    for fragment in expected:
        assert fragment in text, f"{fragment!r} missing from:\n{text}"
    assert "not a heading" not in text
    assert counter.count(text) <= 250


def test_digest_is_deterministic(counter: TiktokenCounter) -> None:
    summarizer = DigestSummarizer(counter)
    assert summarizer.summarise(python_group(120)) == summarizer.summarise(python_group(120))


def test_digest_of_statements_only_and_of_empty_text(counter: TiktokenCounter) -> None:
    source = "import os\nimport json\n\nDEBUG = os.environ.get('DEBUG') == '1'\nLIMIT = 10"
    statements = cut_request("group", "app/config.py", "python", source, 80)
    text = DigestSummarizer(counter).summarise(statements).text
    assert "statements only" in text.splitlines()[0]
    assert "Uses: os, json" in text and "DEBUG" in text and "LIMIT" in text
    empty = SummaryRequest("group", "a.py", "python", "a", [""], ["a"], 50)
    assert DigestSummarizer(counter).summarise(empty).text.startswith("Part of a.py")
    no_budget = SummaryRequest("group", "a.py", "python", "a", ["x"], ["a"], 0)
    assert DigestSummarizer(counter).summarise(no_budget).text == ""


# ------------------------------------------------------------------------------------------------------
# The fake server speaks Ollama's wire format to the real client


def test_fake_server_answers_the_real_client_in_every_mode(fake: FakeOllama) -> None:
    client = ollama.Client(host=fake.url, timeout=5)
    generated = client.generate(model="llama3.2", prompt="hello", stream=False)
    assert generated.response == DEFAULT_REPLY and generated.done and generated.done_reason == "stop"
    assert generated.model == "llama3.2" and generated.eval_count and generated.total_duration
    parts = list(client.generate(model="llama3.2", prompt="hello", stream=True))
    assert "".join(part.response or "" for part in parts) == DEFAULT_REPLY
    assert parts[-1].done and not parts[0].done
    chat = client.chat(model="llama3.2:latest", messages=[{"role": "user", "content": "hi"}])
    assert chat.message.role == "assistant" and chat.message.content == DEFAULT_REPLY
    streamed = list(client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert "".join(part.message.content or "" for part in streamed) == DEFAULT_REPLY
    assert [model.model for model in client.list().models] == ["llama3.2:latest"]
    with pytest.raises(ollama.ResponseError) as missing:
        client.generate(model="nope", prompt="x")
    assert missing.value.status_code == 404
    assert missing.value.error == 'model "nope" not found, try pulling it first'
    assert fake.prompts() == ["hello", "hello", "hi", "hi", "x"]


# ------------------------------------------------------------------------------------------------------
# OllamaSummarizer


def ollama_summarizer(host: str, counter: TiktokenCounter, model: str = "llama3.2", timeout: float = 10.0):
    return OllamaSummarizer(host, model, timeout, counter, DigestSummarizer(counter))


def test_ollama_summary_comes_from_the_server(fake: FakeOllama, counter: TiktokenCounter) -> None:
    summary = ollama_summarizer(fake.url, counter).summarise(python_group(200))
    assert summary == Summary(DEFAULT_REPLY, "ollama", "llama3.2", "")
    [request] = fake.generation_requests()
    body = request.body or {}
    assert request.path == "/api/generate" and body["model"] == "llama3.2" and body["stream"] is False
    assert body["options"]["num_predict"] >= 200
    prompt = body["prompt"]
    for leaf in PRICING_LEAVES:
        assert leaf.rstrip() in prompt  # the code itself is sent, leaf by leaf
    assert "inventory/pricing.py" in prompt and "Python" in prompt
    assert "at most 120 words" in prompt


def test_ollama_answer_is_trimmed_to_the_budget(counter: TiktokenCounter) -> None:
    long_reply = " ".join(f"Sentence {n} explains one more detail of the pricing code." for n in range(200))
    with FakeOllama(reply=long_reply) as server:
        summary = ollama_summarizer(server.url, counter).summarise(python_group(60))
    assert summary.summariser == "ollama"
    assert counter.count(summary.text) <= 60
    assert summary.text.endswith("code.") and long_reply.startswith(summary.text)


def test_unknown_model_falls_back_with_a_clear_note(fake: FakeOllama, counter: TiktokenCounter) -> None:
    summarizer = ollama_summarizer(fake.url, counter, model="qwen9:404b")
    summary = summarizer.summarise(python_group())
    assert (summary.summariser, summary.model) == ("digest", "digest-v2")
    assert summary.text == DigestSummarizer(counter).summarise(python_group()).text
    assert f"Ollama at {fake.url}" in summary.note
    assert 'has no model "qwen9:404b"' in summary.note and "used the embedded digest" in summary.note
    # The model will not appear during the run, so the next group does not ask again.
    again = summarizer.summarise(go_group())
    assert again.note == summary.note and again.summariser == "digest"
    assert len(fake.generation_requests()) == 1


def test_nothing_listening_falls_back_quickly_and_is_not_retried(counter: TiktokenCounter) -> None:
    port = free_port()
    summarizer = ollama_summarizer(f"127.0.0.1:{port}", counter)
    first = summarizer.summarise(python_group())
    assert first.summariser == "digest" and first.text
    assert first.note.startswith(f"Ollama at http://127.0.0.1:{port} did not answer (connection refused)")
    assert "used the embedded digest" in first.note
    assert describe_summarizer(summarizer) == (
        f"Ollama llama3.2 at http://127.0.0.1:{port}; not answering, so the embedded digest is used"
    )

    # Something listens on the port now: a retry would connect to it; none may.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(8)
        listener.setblocking(False)
        later = [summarizer.summarise(go_group()) for _ in range(20)]
        with pytest.raises(BlockingIOError):  # digests only: nothing connected
            listener.accept()
    assert all(summary.note == first.note and summary.summariser == "digest" for summary in later)


def test_one_timeout_stops_the_asking_for_the_run(counter: TiktokenCounter) -> None:
    with FakeOllama(delay=3.0) as slow:
        summarizer = ollama_summarizer(slow.url, counter, timeout=0.3)
        first = summarizer.summarise(python_group())
        assert first.summariser == "digest"
        assert first.note == (
            f"Ollama at {slow.url} did not answer within 0.3 s; used the embedded digest "
            "and will not ask it again in this run"
        )
        later = [summarizer.summarise(python_group()) for _ in range(5)]
        assert all(summary.note == first.note for summary in later)
        assert len(slow.generation_requests()) == 1  # asked once: no second timeout
        assert summarizer.fallback_note == f"6 summaries by the fallback: {first.note}"
        assert fallback_note(summarizer) == f"summaries: 6 summaries by the fallback: {first.note}"
        summarizer.start_run()
        assert fallback_note(summarizer) == ""


def test_server_error_and_malformed_answer_fall_back_per_request(counter: TiktokenCounter) -> None:
    with FakeOllama(error_status=500) as failing:
        summarizer = ollama_summarizer(failing.url, counter)
        summary = summarizer.summarise(python_group())
        assert summary.summariser == "digest"
        assert "answered HTTP 500 (llama runner process has terminated" in summary.note
        summarizer.summarise(python_group())
        assert len(failing.generation_requests()) == 2  # a server error may pass, so the next one asks
    with FakeOllama(malformed=True) as garbled:
        summary = ollama_summarizer(garbled.url, counter).summarise(python_group())
        assert summary.summariser == "digest" and "sent a malformed answer" in summary.note
    with FakeOllama(reply="   ") as silent:
        summary = ollama_summarizer(silent.url, counter).summarise(python_group())
        assert summary.summariser == "digest" and "no response text" in summary.note


def test_a_long_document_is_cut_to_fit_the_model_context(fake: FakeOllama, counter: TiktokenCounter) -> None:
    texts = PRICING_LEAVES * 80  # far more than 8192 tokens
    request = SummaryRequest("document", "big.py", "python", "big", texts, PRICING_SCOPES * 80, 200)
    summary = ollama_summarizer(fake.url, counter).summarise(request)
    assert summary.summariser == "ollama"
    prompt = fake.prompts()[0]
    assert counter.count(prompt) < OllamaSummarizer.context_tokens
    assert "Outline of all of it:" in prompt and "def round_money(" in prompt


# ------------------------------------------------------------------------------------------------------
# check_ollama, make_summarizer, describe_summarizer


def test_check_ollama_reports_version_and_models(fake: FakeOllama) -> None:
    answers, message = check_ollama(fake.url)
    assert answers
    assert message == f"Ollama 0.6.5 at {fake.url} answers; models: llama3.2:latest"


def test_check_ollama_says_why_when_nothing_listens() -> None:
    port = free_port()
    answers, message = check_ollama(f"http://127.0.0.1:{port}", timeout=1.0)
    assert not answers
    assert message == f"Ollama at http://127.0.0.1:{port} did not answer (connection refused)"


def test_auto_picks_ollama_when_it_answers_and_digest_when_not(
    fake: FakeOllama, counter: TiktokenCounter
) -> None:
    chosen = make_summarizer(Settings(summariser="auto", ollama_host=fake.url), counter)
    assert isinstance(chosen, OllamaSummarizer) and chosen.model == "llama3.2"
    assert describe_summarizer(chosen) == f"Ollama llama3.2 at {fake.url}"
    assert chosen.summarise(go_group()).summariser == "ollama"

    port = free_port()
    down = make_summarizer(Settings(summariser="auto", ollama_host=f"http://127.0.0.1:{port}"), counter)
    assert isinstance(down, DigestSummarizer)
    assert describe_summarizer(down) == (
        f"Embedded digest (no server); Ollama at http://127.0.0.1:{port} did not answer (connection refused)"
    )
    assert down.summarise(go_group()).note.endswith("; used the embedded digest")

    unconfigured = make_summarizer(Settings(summariser="auto", ollama_host=""), counter)
    assert isinstance(unconfigured, DigestSummarizer)
    assert describe_summarizer(unconfigured) == "Embedded digest (no server)"
    assert unconfigured.summarise(go_group()).note == ""


def test_auto_uses_the_digest_when_the_model_is_missing(fake: FakeOllama, counter: TiktokenCounter) -> None:
    settings = Settings(summariser="auto", ollama_host=fake.url, ollama_model="mistral")
    chosen = make_summarizer(settings, counter)
    assert isinstance(chosen, DigestSummarizer)
    assert 'has no model "mistral"' in describe_summarizer(chosen)


def test_explicit_choices(fake: FakeOllama, counter: TiktokenCounter) -> None:
    digest = make_summarizer(Settings(summariser="digest", ollama_host=fake.url), counter)
    assert isinstance(digest, DigestSummarizer)
    port = free_port()
    forced = make_summarizer(Settings(summariser="ollama", ollama_host=f"127.0.0.1:{port}"), counter)
    assert isinstance(forced, OllamaSummarizer) and forced.host == f"http://127.0.0.1:{port}"
    assert "connection refused" in forced.summarise(go_group()).note
    with pytest.raises(ValueError, match="summariser must be"):
        make_summarizer(Settings(summariser="gpt"), counter)
    assert fake.generation_requests() == []


# ------------------------------------------------------------------------------------------------------
# A real server, when there is one


@pytest.mark.live_ollama
def test_live_ollama_writes_a_real_summary(counter: TiktokenCounter) -> None:
    host = os.environ.get("OLLAMA_HOST", "")
    if not host:
        pytest.skip("OLLAMA_HOST is not set, so there is no real Ollama server to ask")
    answers, message = check_ollama(host, timeout=3.0)
    if not answers:
        pytest.skip(f"no real Ollama server: {message}")
    model = os.environ.get("HSC_OLLAMA_MODEL", Settings().ollama_model)
    pulled = [entry.model or "" for entry in ollama.Client(host=host, timeout=10).list().models]
    if model not in pulled and f"{model}:latest" not in pulled:
        pytest.skip(f"model {model!r} is not pulled on {host} ({message}); set HSC_OLLAMA_MODEL")
    summarizer = ollama_summarizer(host, counter, model=model, timeout=300.0)
    summary = summarizer.summarise(python_group(120))
    assert summary.note == "", summary.note
    assert (summary.summariser, summary.model) == ("ollama", model)
    assert len(summary.text.split()) >= 5 and counter.count(summary.text) <= 120
