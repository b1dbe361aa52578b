"""Tuning the encoder: pair mining with the quality corpus's rules, a toy training run
end to end to an int8 ONNX file that the ONNX backend loads, and the tuned folder's
own cache key. Real tree-sitter parses, the real model, real ONNX Runtime."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsc.bench.encoder_quality import held_out_files
from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.cli import main
from hsc.embed import EncoderSpec, make_embedder
from hsc.embed.base import encoder_cache_dir
from hsc.embed.tuned import ENCODER_FILE, META_FILE
from hsc.encoder.negatives import hardest_negatives
from hsc.encoder.pairs import STDLIB_SKIPPED, Pair, mine_pairs, split_by_file, stdlib_training_sources
from hsc.params import Parameters
from hsc.quality.corpus import STDLIB_PACKAGES

PYTHON = '''"""Module docstring that must go."""


class Shelf:
    """Books on one shelf, left to right."""

    def widest(self):
        """Find the widest book standing on this shelf."""
        best = None
        for book in self.books:
            if best is None or book.width > best.width:
                best = book
        return best

    def short(self):
        """Too short."""
        return 1


def copy_one(x):
    """Return the value it is given unchanged."""
    y = x
    z = y
    return z


def copy_two(x):
    """Return the value it is given unchanged."""
    a = x
    b = a
    return b
'''

GO = """package sums

// Largest picks the greatest number of a non-empty slice.
func Largest(values []int) int {
\tbest := values[0]
\tfor _, v := range values[1:] {
\t\tif v > best {
\t\t\tbest = v
\t\t}
\t}
\treturn best
}
"""


def test_pairs_follow_the_corpus_rules_with_docs_blanked_and_scope_first(tmp_path):
    source = tmp_path / "src"
    (source / "books").mkdir(parents=True)
    (source / "books" / "shelf.py").write_text(PYTHON)
    (source / "sums.go").write_text(GO)
    (source / "tests").mkdir()
    (source / "tests" / "test_shelf.py").write_text(PYTHON)  # tests are never mined
    pairs = {p.query: p for p in mine_pairs([(source, "shop")])}
    # "Too short" fails the word rule; the sentence two functions share has no single answer.
    assert set(pairs) == {
        "Find the widest book standing on this shelf.",
        "picks the greatest number of a non-empty slice.",
    }
    widest = pairs["Find the widest book standing on this shelf."]
    assert widest.path == "shop/books/shelf.py"
    scope, code = widest.code.split("\n", 1)
    assert scope == "shop.books.shelf.Shelf.widest"
    assert code.startswith("def widest(self):") and "best = book" in code
    assert "widest book standing" not in code and "left to right" not in code
    go = pairs["picks the greatest number of a non-empty slice."]
    assert go.code.startswith("shop.sums.Largest\nfunc Largest(") and "greatest" not in go.code


COMMENTED = '''def settle(orders, ledger):
    """Settle every open order against the ledger in one pass."""
    total = 0
    for order in orders:
        # Orders paid by voucher never reach the card processor at all.
        if order.voucher:
            continue
        total += ledger.charge(order)
    return total
'''


def test_body_comments_pair_with_their_function_when_asked(tmp_path):
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "billing.py").write_text(COMMENTED)
    docs_only = mine_pairs([(tmp_path / "shop", "shop")])
    both = {p.query: p for p in mine_pairs([(tmp_path / "shop", "shop")], body_comments=True)}
    assert [p.query for p in docs_only] == ["Settle every open order against the ledger in one pass."]
    assert set(both) == {docs_only[0].query, "Orders paid by voucher never reach the card processor at all."}
    comment = both["Orders paid by voucher never reach the card processor at all."]
    assert comment.code.startswith("shop.billing.settle\ndef settle(orders, ledger):")
    # Neither the comment asked about nor the docstring is left in the code it is paired with;
    # the docstring's pair keeps the comment (it is code the query may point into).
    assert "voucher never" not in comment.code and "Settle every" not in comment.code
    assert "if order.voucher:" in comment.code and "voucher never" in docs_only[0].code


NESTED = '''import functools


class Catalogue:
    class Entry:
        def label(self):
            """Spell out the entry as a catalogue card would."""
            words = [self.title, self.author]
            words.append(self.year)
            return " / ".join(words)

    @functools.lru_cache
    def lookup(self, key):
        """Look up one entry by its shelf mark in the catalogue."""
        found = self.entries.get(key)
        if found is None:
            raise KeyError(key)
        return found
'''


RUST_IMPL = """pub struct Shelf { books: Vec<u32> }

impl Shelf {
    /// Pick the widest volume that stands on this shelf.
    pub fn widest(&self) -> u32 {
        let mut best = 0;
        for b in &self.books {
            if *b > best { best = *b; }
        }
        best
    }
}
"""


def test_pair_scopes_are_the_scopes_of_hscs_own_leaves(tmp_path):
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "cards.py").write_text(NESTED)
    (tmp_path / "library" / "shelf.rs").write_text(RUST_IMPL)
    pairs = mine_pairs([(tmp_path / "library", "lib")])
    scopes = {p.code.split("\n", 1)[0] for p in pairs}
    # A Rust method is named by its impl's type, as hsc's leaves name it.
    assert scopes == {
        "lib.cards.Catalogue.Entry.label",
        "lib.cards.Catalogue.lookup",
        "lib.shelf.Shelf.widest",
    }
    # The chunker gives the leaves holding them the same scopes: one reading of the tree.
    small = Parameters(maximum_chunk_token_length=40)
    leaves = cut_file(NESTED, "lib/cards.py", "python", small, get_counter()).leaves
    leaves += cut_file(RUST_IMPL, "lib/shelf.rs", "rust", small, get_counter()).leaves
    assert scopes <= {leaf.scope for leaf in leaves}


def test_hard_negatives_are_other_pairs_near_misses_never_a_copy(tmp_path):
    pairs = mine_pairs([(_write(tmp_path / "jobs.py", _functions(20)), "")])
    twin = pairs[0]
    # The same code under another name is a right answer, not a negative.
    copy = Pair(
        "Check an invoice before the stored copy is kept.", twin.code.replace("_0(", "_copy("), "twin.py"
    )
    pairs.append(copy)
    spec = EncoderSpec("all-MiniLM-L6-v2", "onnx-int8", 128)
    embedder = make_embedder(spec, encoder_cache_dir(tmp_path), "cpu")
    mined = hardest_negatives(pairs, lambda texts: embedder.embed(texts))
    codes = {p.code for p in pairs}
    assert [p.code for p in mined] == [p.code for p in pairs]
    for pair in mined:
        assert pair.negative in codes and pair.negative != pair.code
    assert mined[0].negative != copy.code and mined[-1].negative != twin.code
    # A near miss: each negative shares the query's verb or its noun (_functions' names).
    for pair in mined[:20]:
        verb, noun = pair.query.split()[:3:2]
        assert verb.lower() in pair.negative or noun in pair.negative


def _write(path, text):
    path.write_text(text)
    return path


def test_split_by_file_keeps_a_file_on_one_side(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for number in range(10):
        (source / f"m{number}.py").write_text(_functions(3, offset=number * 3))
    train, held = split_by_file(mine_pairs([(source, "")]), 0.2, seed=3)
    assert len(held) == 6 and len(train) == 24
    assert not {p.path for p in train} & {p.path for p in held}


def test_stdlib_training_sources_leave_out_the_benchmark_packages():
    names = {name.removesuffix(".py") for _, name in stdlib_training_sources()}
    assert names and not names & set(STDLIB_PACKAGES) and not names & STDLIB_SKIPPED
    assert {"argparse", "collections"} <= names


def _functions(count: int, offset: int = 0) -> str:
    nouns = [
        "invoice",
        "parcel",
        "ticket",
        "sensor",
        "ledger",
        "budget",
        "report",
        "folder",
        "signal",
        "window",
    ]
    verbs = ["Validate", "Archive", "Measure", "Rotate", "Encrypt", "Compress", "Schedule", "Render"]
    out = []
    for number in range(offset, offset + count):
        noun, verb = nouns[number % len(nouns)], verbs[number // len(nouns) % len(verbs)]
        out.append(
            f"def {verb.lower()}_{noun}_{number}(item, limit):\n"
            f'    """{verb} the {noun} number {number} before it is stored."""\n'
            f"    checked = [{verb.lower()!r}, {noun!r}, item]\n"
            f"    if len(checked) > limit:\n"
            f"        checked = checked[:limit]\n"
            f"    return checked\n"
        )
    return "\n\n".join(out)


def test_toy_training_end_to_end_to_a_loadable_int8_encoder(tmp_path, capsys):
    source = tmp_path / "toy"
    source.mkdir()
    for number in range(4):
        (source / f"jobs{number}.py").write_text(_functions(12, offset=12 * number))
    out = tmp_path / "tuned"
    arguments = ["--out", str(out), "--batch", "8", "--max-steps", "2", "--held-out", "0.25"]
    arguments += ["--negatives", "hybrid"]
    assert main(["encoder", "train", "--from", str(source), *arguments]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["steps"] == 2 and printed["pairs"] == 36  # one file of four held out
    recipe = json.loads((out / META_FILE).read_text())
    assert recipe["recipe"]["batch_size"] == 8 and recipe["recipe"]["seed"] == 0
    assert recipe["recipe"]["negatives"] == "hybrid"
    assert recipe["int8_reduce_range"] is True  # a tuned build's int8 weights are 7-bit
    assert recipe["data"]["pairs"] == 48 and recipe["versions"]["torch"]
    (held,) = recipe["data"]["held_out_files"]
    assert held.startswith("toy/jobs") and held_out_files(out) == {held.removeprefix("toy/")}
    assert (out / ENCODER_FILE).stat().st_size > 10_000_000  # int8 weights of a 6-layer MiniLM
    spec = EncoderSpec(str(out), "onnx-int8", 128)
    embedder = make_embedder(spec, tmp_path / "cache", "cpu")
    assert not (tmp_path / "cache").exists()  # the folder's own file, no export
    texts = ["def rotate_parcel(item, limit): ...", "Validate the invoice before it is stored."]
    vectors = embedder.embed(texts)
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # The fp32 model kept beside it runs on torch, and the int8 file agrees with it.
    torch_vectors = make_embedder(EncoderSpec(str(out), "torch", 128), tmp_path / "cache", "cpu").embed(texts)
    assert float(np.min(np.sum(vectors * torch_vectors, axis=1))) > 0.95
    # Two steps moved the weights: the tuned vectors are not the base model's.
    base = make_embedder(EncoderSpec("all-MiniLM-L6-v2", "torch", 128), tmp_path / "cache", "cpu").embed(
        texts
    )
    assert float(np.max(np.abs(torch_vectors - base))) > 1e-3
    # Its vectors are cached under their own key.
    assert spec.key != EncoderSpec("all-MiniLM-L6-v2", "onnx-int8", 128).key
    # Training on from its fp32 model records the first build under continued_from, and the first
    # build's base as its own: no path of this machine, a base the torch backend can run.
    again = tmp_path / "again"
    arguments = ["--out", str(again), "--batch", "8", "--max-steps", "1", "--int8-only"]
    assert main(["encoder", "train", "--from", str(source), "--base", str(out / "model"), *arguments]) == 0
    capsys.readouterr()
    record = json.loads((again / META_FILE).read_text())
    assert record["recipe"]["base_model"] == "all-MiniLM-L6-v2"
    first = record["continued_from"]
    assert first["model"] == "tuned" and first["recipe"] == recipe["recipe"]
    assert first["data"]["pairs_sha1"] == recipe["data"]["pairs_sha1"]


def test_train_refuses_too_few_pairs_and_a_missing_folder(tmp_path, capsys):
    source = tmp_path / "few"
    source.mkdir()
    (source / "jobs.py").write_text(_functions(3))
    assert (
        main(["encoder", "train", "--from", str(source), "--out", str(tmp_path / "o"), "--batch", "8"]) == 2
    )
    assert "make no batch of 8" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert main(["encoder", "train", "--from", str(tmp_path / "nowhere")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


@pytest.mark.parametrize("held_out", ["1", "-0.1"])
def test_train_refuses_a_held_out_share_outside_0_1(held_out, capsys):
    assert main(["encoder", "train", "--held-out", held_out, "--from", "."]) == 2
    assert "--held-out" in capsys.readouterr().err


SHELVES = '''"""Shelving for the reading room."""


@dataclass
class Shelf:
    """A wooden shelf that holds bound volumes in call-number order."""

    width: int

    def place(self, volume):
        """Put a volume where its call number says it belongs."""
        self.volumes.append(volume)
        self.volumes.sort()
        self.count += 1
        return self.count

    def widest(self):
        return max(self.volumes)


class Tiny:
    """Too short a class for a question of its own."""
'''


def test_class_pairs_give_a_class_question_the_outline_the_index_embeds(tmp_path, embedder):
    from hsc.api import Index
    from hsc.index.outlines import repository_outlines

    (tmp_path / "room").mkdir()
    (tmp_path / "room" / "shelves.py").write_text(SHELVES)
    plain = mine_pairs([(tmp_path / "room", "")])
    with_classes = mine_pairs([(tmp_path / "room", "")], class_pairs=True)
    assert [p.query for p in plain] == ["Put a volume where its call number says it belongs."]
    added = [p for p in with_classes if p not in plain]
    # The class's question (a decorated class starts at its decorator); not the 2-line class.
    assert [p.query for p in added] == ["A wooden shelf that holds bound volumes in call-number order."]
    outline = added[0].code
    assert outline.split("\n")[:3] == ["shelves.Shelf", "class Shelf", "    def place(self, volume)"]
    assert "wooden" not in outline and "call number" not in outline  # no docstring in it
    # The very text an index of the same file embeds as the class's outline.
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(tmp_path / "room")
        texts = repository_outlines(index.store, index.repositories()[0]["id"])
    assert outline in texts.values()
