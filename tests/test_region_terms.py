"""Class-level lexical evidence for regions (hsc.search.region_terms): a definition's terms are all
its leaves' stored terms, BM25 scores them, and ``region_lexical`` adds that to a region's score."""

from __future__ import annotations

import numpy as np
import pytest

from hsc.search.region_table import DEFINITION, FILE, build_regions
from hsc.search.region_terms import (
    bm25,
    build_region_terms,
    region_lexical,
    region_terms_arrays,
    region_terms_from_arrays,
)

# The question's words (date, total) are spread over the class's methods: no one leaf holds both.
# Each method long enough to be a leaf of its own (the chunker merges small neighbours).
_FILLER = "".join(f"        step_{n} = len(str({n})) * {n}\n" for n in range(40))
SOURCE = f"""class Ledger:
    def __init__(self):
{_FILLER}        self.payments = []

    def add_payment(self, date, cents):
{_FILLER}        self.payments.append((date, cents))

    def total_cents(self):
{_FILLER}        return sum(cents for _, cents in self.payments)


def greet(name):
    return "hello " + name


def shout(name):
    return greet(name).upper() + "!"
"""
QUESTION = "ledger keeping the date of each payment and their total"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, index_files):
    root = tmp_path_factory.mktemp("region_terms")
    words = 'def spell(word):\n    """Spell a word."""\n    return list(word)\n'
    index = index_files(root, "ledger", {"ledger.py": SOURCE, "words.py": words})
    yield index, root
    index.close()


def _terms(index):
    table = index.leaf_table()
    repository_id = index.repositories()[0]["id"]
    regions = build_regions(table, index.store.definitions(repository_id))
    stored = index.store.leaf_term_texts(repository_id)
    ranked = (regions.levels == FILE) | ((regions.levels == DEFINITION) & regions.outermost)
    leaf_terms = [stored[int(leaf_id)] for leaf_id in table.leaf_ids]
    return table, regions, build_region_terms(regions.lo, regions.hi, ranked, leaf_terms), leaf_terms


def _row(regions, name):
    return next(r for r in range(len(regions)) if regions.names[r].endswith(name))


def test_a_class_holds_the_terms_of_all_its_leaves_and_outscores_them_on_spread_words(indexed):
    index, _ = indexed
    table, regions, terms, leaf_terms = _terms(index)
    ledger = _row(regions, "Ledger")
    held = range(int(regions.lo[ledger]), int(regions.hi[ledger]))
    assert len(held) >= 2  # the class is more than one leaf
    # No leaf of the class holds every word the question has; the class holds them all.
    words = {"date", "total"}
    assert not any(words <= set(leaf_terms[row][1].split()) for row in held)
    column = {term: terms.vocabulary[term] for term in words}
    assert all(terms.text[ledger, c] > 0 for c in column.values())
    # Its names field is an outline: the class's and its methods' names, not their bodies' words.
    assert terms.names[ledger, terms.vocabulary["add"]] > 0
    append = terms.vocabulary["append"]
    assert terms.names[ledger, append] == 0 < terms.text[ledger, append]
    scores = bm25(terms, QUESTION, "text")
    definitions = np.flatnonzero((regions.levels == DEFINITION) & regions.outermost)
    assert definitions[np.argmax(scores[definitions])] == ledger
    assert scores[_row(regions, "spell")] == 0.0
    # A term no region holds scores nothing; a rarer term counts more than a common one.
    assert not bm25(terms, "zebra", "text").any()
    spell = _row(regions, "spell")
    assert bm25(terms, "word", "text")[spell] > 0
    with pytest.raises(ValueError, match="region term field"):
        bm25(terms, QUESTION, "body")
    # Saved and read back, the terms score the same.
    again = region_terms_from_arrays(region_terms_arrays(terms))
    assert np.allclose(bm25(again, QUESTION, "names"), bm25(terms, QUESTION, "names"))


def test_files_get_their_own_or_their_best_definitions_evidence(indexed):
    index, _ = indexed
    _, regions, terms, _ = _terms(index)
    args = (terms, regions.levels, regions.lo, regions.outermost, QUESTION)
    own = region_lexical(*args, "text+names", "own")
    best = region_lexical(*args, "text+names", "best")
    none = region_lexical(*args, "text+names", "none")
    ledger, ledger_file = _row(regions, "Ledger"), _row(regions, "ledger.py")
    assert own[ledger] == best[ledger] == none[ledger] > 0
    assert none[ledger_file] == 0 and best[ledger_file] == pytest.approx(best[ledger])
    both = bm25(terms, QUESTION, "text") + bm25(terms, QUESTION, "names")
    assert own[ledger_file] == pytest.approx(both[ledger_file])


def test_region_lexical_raises_the_class_by_its_weight_and_keeps_its_terms_in_a_side_file(indexed):
    index, root = indexed
    plain = index.query(QUESTION, record=False, compare=False)
    weight = 0.3
    on = {"region_lexical": "text+names", "region_lexical_weight": weight}
    lexical = index.query(QUESTION, params=on, record=False, compare=False)
    saved = list((root / "hnsw").glob("*-region-terms-*.npz"))
    assert len(saved) == 1
    before = {(r.level, r.name): r.score for r in plain.regions}
    after = {(r.level, r.name): r.score for r in lexical.regions}
    ledger = next(key for key in after if key[0] == "definition" and key[1].endswith("Ledger"))
    # The Ledger class is the best definition by BM25: it gains the whole weight.
    assert after[ledger] == pytest.approx(before[ledger] + weight, abs=1e-4)
    spell = next(key for key in after if key[1].endswith("spell"))
    assert after[spell] == pytest.approx(before[spell], abs=1e-4)  # no word of the question
    # Off (the default) is the regions as before.
    off = index.query(QUESTION, params={"region_lexical": "off"}, record=False, compare=False)
    assert [r.to_json() for r in off.regions] == [r.to_json() for r in plain.regions]
    # A second process reads the side file and answers the same.
    from hsc.api import Index

    with Index.open(root / "index.db", embedder=index.embedder) as again:
        reread = again.query(QUESTION, params=on, record=False, compare=False)
    assert [r.to_json() for r in reread.regions] == [r.to_json() for r in lexical.regions]
    assert list((root / "hnsw").glob("*-region-terms-*.npz")) == saved
