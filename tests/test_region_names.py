"""Name evidence: a region gains the share of its own name's words a question matches, on a real
index of the bundled sample and the bundled encoder."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from hsc.params import Parameters
from hsc.search.region_names import name_share, name_words, query_words

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "A repository of items kept in a database"


def test_a_name_is_matched_word_by_word_plurals_and_prefixes_alike():
    words = query_words("Base class for message headers.")
    assert words == {"base", "message", "header"}  # "class" and "for" say nothing of the region
    assert name_share("BaseHeader", words) == 1.0
    assert name_share("HeaderRegistry", words) == 0.5
    assert name_share("Parser", words) == 0.0
    # A word of four letters or more matches one it begins; shorter ones must be equal.
    assert name_share("ModuleSpec", query_words("The specification for a module")) == 1.0
    assert name_share("Io", query_words("io operations")) == 1.0
    assert name_share("Io", query_words("iota of data")) == 0.0
    assert name_words("__init__") == ("init",)
    assert name_share("Object", query_words("an object")) == 0.0  # no word of its own
    assert name_share("Thing", frozenset()) == 0.0


def _region_scores(index, params) -> dict[tuple[str, str], float]:
    response = index.query(QUESTION, params=params, record=False, compare=False)
    return {(r.level, r.name): r.score for r in response.regions}


def test_a_listed_region_gains_the_weight_times_the_share_of_its_name_the_question_says(tmp_path, embedder):
    from hsc.api import Index
    from hsc.search.regions import NAME_WEIGHT

    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        on = _region_scores(index, Parameters())  # region_names = evidence, the default
        off = _region_scores(index, dataclasses.replace(Parameters(), region_names="off"))
    assert Parameters().region_names == "evidence"
    gains = {key: on[key] - off[key] for key in set(on) & set(off)}
    # ItemRepository: both its words are the question's ("items" is "item"); RepositoryError one of
    # its two; the file persistence.py and the regions named otherwise gain nothing.
    expected = {"ItemRepository": NAME_WEIGHT, "RepositoryError": NAME_WEIGHT / 2}
    assert ("definition", "inventory.persistence.ItemRepository") in gains
    assert gains[("file", "persistence.py")] == pytest.approx(0.0, abs=1e-6)
    for (_, name), gain in gains.items():
        assert gain == pytest.approx(expected.get(name.rsplit(".", 1)[-1], 0.0), abs=1e-6), name


RUST = """pub struct Chain<T, U> {
    a: T,
    b: U,
}

impl<T, U> Chain<T, U> {
    pub fn new(a: T, b: U) -> Self {
        Chain { a, b }
    }

    pub fn first_ref(&self) -> &T {
        &self.a
    }
}

impl<T: Clone, U: Clone> Clone for Chain<T, U> {
    fn clone(&self) -> Self {
        Chain { a: self.a.clone(), b: self.b.clone() }
    }
}

pub fn total(values: &[u64]) -> u64 {
    values.iter().sum()
}
"""


def test_a_name_several_regions_share_lifts_only_the_best_scored_of_them(tmp_path, embedder):
    from hsc.api import Index
    from hsc.search.regions import NAME_WEIGHT

    repo = tmp_path / "chain_rs"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "chain.rs").write_text(RUST)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        question = "a chain of two buffers read one after the other"
        on = index.query(question, record=False, compare=False).regions
        off = index.query(
            question,
            params=dataclasses.replace(Parameters(), region_names="off"),
            record=False,
            compare=False,
        ).regions
    chains = [r for r in off if r.level == "definition" and r.name.endswith(".Chain")]
    assert len(chains) >= 2  # the struct and its impl blocks share its name
    before = {(r.start_line, r.end_line): r.score for r in off}
    gains = sorted(
        round(r.score - before[(r.start_line, r.end_line)], 6) for r in on if r.name.endswith(".Chain")
    )
    # One of them gains the whole weight (its one word is the question's), the others nothing.
    assert gains[-1] == pytest.approx(NAME_WEIGHT, abs=1e-6)
    assert all(gain == pytest.approx(0.0, abs=1e-6) for gain in gains[:-1])
