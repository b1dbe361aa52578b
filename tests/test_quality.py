"""The retrieval-quality benchmark: corpus, hits, systems and sweep, on real parts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hsc.quality.corpus import Target, build_corpus, is_hit
from hsc.quality.doc_finder import first_sentence
from hsc.quality.metrics import first_hit, mrr_at, ndcg_at, recall_at

PYTHON = '''"""Module docstring that must go."""


def load_rows(path):
    """Read the comma separated rows of a file into tuples.

    More words that are not the first sentence.
    """
    rows = []
    with open(path) as handle:
        for line in handle:
            rows.append(tuple(line.split(",")))
    return rows


def short(x):
    """Too short."""
    return x


def tiny(x):
    """Return the value it is given unchanged."""
    return x


class Ledger:
    """A ledger of entries, kept in order."""

    def total(self):
        """Sum every entry of the ledger in cents."""
        value = 0
        for entry in self.entries:
            value += entry
        return value
'''

GO = """package sums

// Sum adds every number of the slice together.
// It returns zero for an empty slice.
func Sum(values []int) int {
\ttotal := 0
\tfor _, v := range values {
\t\ttotal += v
\t}
\treturn total
}
"""


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "rows.py").write_text(PYTHON)
    (source / "sums.go").write_text(GO)
    return source


def test_corpus_blanks_docs_keeps_lines_and_picks_long_documented_functions(tmp_path):
    corpus = build_corpus([(_source(tmp_path), "")], tmp_path / "out" / "corpus", None, 0)
    blanked = (corpus.root / "pkg" / "rows.py").read_text()
    assert len(blanked.splitlines()) == len(PYTHON.splitlines())
    for words in ("Module docstring", "comma separated", "Too short", "A ledger", "Sum every entry"):
        assert words not in blanked
    assert "rows.append(tuple(line.split" in blanked  # the code itself stays
    compile(blanked, "rows.py", "exec")  # and still parses
    go = (corpus.root / "sums.go").read_text()
    assert "adds every number" not in go and len(go.splitlines()) == len(GO.splitlines())
    found = {t.name: t for t in corpus.targets}
    # short/tiny: fewer than 4 words or 5 lines; the Go sentence loses its leading name.
    assert set(found) == {"load_rows", "total", "Sum"}
    assert found["load_rows"].query == "Read the comma separated rows of a file into tuples."
    lines = PYTHON.splitlines()
    assert (found["load_rows"].start_line, found["load_rows"].end_line) == (
        4,
        lines.index("    return rows") + 1,
    )
    assert found["total"].path == "pkg/rows.py"
    assert found["total"].start_line == lines.index("    def total(self):") + 1
    assert found["Sum"].query == "adds every number of the slice together."
    saved = json.loads((tmp_path / "out" / "queries.json").read_text())
    assert len(saved["targets"]) == 3


def test_query_draw_is_deterministic_for_a_seed(tmp_path):
    source = _source(tmp_path)
    draws = [
        [t.name for t in build_corpus([(source, "")], tmp_path / f"o{i}" / "corpus", 2, seed).targets]
        for i, seed in enumerate((5, 5))
    ]
    assert draws[0] == draws[1] and len(draws[0]) == 2


def test_a_hit_needs_overlapping_lines_in_the_same_file():
    target = Target("q", "a.py", 10, 20, "f")
    assert is_hit(target, "a.py", 20, 30) and is_hit(target, "a.py", 1, 10) and is_hit(target, "a.py", 12, 14)
    assert not is_hit(target, "a.py", 21, 30)
    assert not is_hit(target, "a.py", 1, 9)
    assert not is_hit(target, "b.py", 10, 20)


def test_metrics_count_the_first_hit_only():
    assert first_hit([False, True, True]) == 2 and first_hit([False]) is None
    ranks = [1, 3, None, 11]
    assert recall_at(ranks, 1) == 0.25 and recall_at(ranks, 10) == 0.5
    assert mrr_at(ranks) == (1 + 1 / 3) / 4
    assert abs(ndcg_at(ranks) - (1 + 0.5) / 4) < 1e-9
    assert first_sentence("Do a thing. Then more.\n\nBody") == "Do a thing."


def test_systems_rank_the_index_leaves_and_the_sweep_writes_its_files(tmp_path, embedder):
    from hsc.quality.report import write_run
    from hsc.quality.sweep import Options, evaluate, main_systems, prepare, run_quality

    repo = tmp_path / "inventory_py"
    shutil.copytree(Path(__file__).parent.parent / "hsc" / "samples" / "inventory_py", repo)
    options = Options(path=repo, queries=12, out=tmp_path / "q")
    prepared = prepare(options, report=lambda _: None, embedder=embedder)
    rows = prepared.corpus.store.leaf_rows(prepared.corpus.repository_id, with_text=False)
    leaf_ids = {int(row["id"]) for row in rows}
    names = []
    for system, _, _ in main_systems(prepared, report=lambda _: None):
        names.append(system.name)
        ranking = system.search(prepared.query_vectors[0], prepared.targets[0].query, 10)
        assert 0 < len(ranking.rows) <= 10
        returned = {int(system.units.leaf_ids[r]) for r in ranking.rows}
        if system.name.startswith("windows"):
            assert returned == {-1}
        else:
            assert returned <= leaf_ids, system.name
        row = evaluate(system, prepared)
        assert len(row["ranks"]) == len(prepared.targets)
    assert {"flat", "two-stage", "hybrid", "collapsed-tree", "contextual-flat"} <= set(names)

    result = run_quality(options, report=lambda _: None, embedder=embedder)
    files = write_run(result, tmp_path / "run")
    for kind in ("json", "table_csv", "sweep_csv", "html", "png"):
        assert Path(files[kind]).stat().st_size > 0, kind
    assert Path(files["png"]).read_bytes()[:4] == b"\x89PNG"
    assert "plotly" in Path(files["html"]).read_text()[:20000].lower()
    saved = json.loads(Path(files["json"]).read_text())
    assert len(saved["sweep"]) > len(saved["systems"])
    assert len(Path(files["sweep_csv"]).read_text().splitlines()) == len(saved["sweep"]) + 1


def test_identifier_terms_keep_the_joined_form_and_its_parts():
    from hsc.search.lexical import terms

    assert terms("parseHTTPHeader(x_value)") == [
        "parsehttpheader",
        "parse",
        "http",
        "header",
        "xvalue",
        "x",
        "value",
    ]


def test_hybrid_modes_rank_by_dense_and_bm25(indexed_samples):
    from hsc.params import RETRIEVAL_MODES

    index, root, _ = indexed_samples
    repository_id = index.repository_id(root / "inventory_py")
    leaf_ids = {row["id"] for row in index.leaves(repository_id, with_text=False)}
    for mode in ("hybrid", "hybrid-flat"):
        assert mode in RETRIEVAL_MODES
        response = index.query("apply a discount to a price", repository_id, mode=mode, record=False)
        assert response.mode == mode and response.results
        assert {r.leaf_id for r in response.results} <= leaf_ids
        assert response.results[0].scope.endswith("apply_discount")
    # BM25 alone decides a query made of a name the model has never seen in that form.
    found = index.store.lexical_search(repository_id, '"applydiscount"', 5, 1.0)
    assert found and index.node(f"leaf:{found[0][0]}").scope.endswith("apply_discount")


COMMENTED = '''def settle(accounts, day):
    """Settle every account that is due on the given day."""
    due = [a for a in accounts if a.due == day]
    # Accounts that were frozen by the bank stay open until the next run.
    # This second line belongs to the same block.
    open_ones = [a for a in due if not a.frozen]
    # x = compute(a, b)
    total = sum(a.balance for a in open_ones)  # noqa: E501 keep the old behaviour around here
    # short note here
    return total


# A comment of prose at module level is no function's.
LIMIT = 3
'''


def test_comment_queries_are_prose_comments_inside_bodies_and_are_blanked(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "settle.py").write_text(COMMENTED)
    corpus = build_corpus([(source, "")], tmp_path / "out" / "corpus", None, 0, kind="comment")
    lines = COMMENTED.splitlines()
    (target,) = corpus.targets  # code, a pragma, a short note and a module comment are not queries
    assert target.query == ("Accounts that were frozen by the bank stay open until the next run.")
    assert target.name == "settle"
    first = lines.index("    # Accounts that were frozen by the bank stay open until the next run.") + 1
    statement = lines.index("    open_ones = [a for a in due if not a.frozen]") + 1
    assert (target.start_line, target.end_line) == (first, statement)  # the comment to its statement
    blanked = (corpus.root / "settle.py").read_text()
    assert len(blanked.splitlines()) == len(lines)
    for words in ("frozen by the bank", "same block", "Settle every account"):
        assert words not in blanked
    assert "# x = compute(a, b)" in blanked and "# short note here" in blanked  # not asked about: kept
    compile(blanked, "settle.py", "exec")
    # The docstring kind of the same file is unchanged by the comment kind.
    docs = build_corpus([(source, "")], tmp_path / "doc" / "corpus", None, 0)
    assert [t.query for t in docs.targets] == ["Settle every account that is due on the given day."]
    assert "frozen by the bank" in (docs.root / "settle.py").read_text()


def test_paired_bootstrap_sees_a_real_gain_and_no_gain():
    from hsc.quality.metrics import paired_bootstrap

    base = [None] * 50 + [3] * 50
    better = [1] * 30 + [None] * 20 + [3] * 50
    gain = paired_bootstrap(base, better)
    assert gain["recall_at_10"] == 0.3 and gain["recall_at_10_ci"][0] > 0.15
    same = paired_bootstrap(base, base)
    assert same["recall_at_10"] == 0 and same["recall_at_10_ci"] == [0, 0]
