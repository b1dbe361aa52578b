"""The per-language benchmark's parts: McNemar's test, the corpus finder on JavaScript functions
given by assignment, the copy that leaves tests out, and the joined answers the quality benchmark
scores as a query gives them (real parses, the real bundled model on a standard-library package)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hsc.bench.corpora import LANGUAGE_PACKAGES, Package, build_language, fetch, source_files
from hsc.quality.corpus import blank, doc_targets
from hsc.quality.doc_finder import find_docs
from hsc.quality.metrics import mcnemar


def test_mcnemar_counts_the_discordant_queries_and_gives_the_exact_p() -> None:
    assert mcnemar([1, None, 3], [1, None, 3]) == {"only_first": 0, "only_second": 0, "p": 1.0}
    # Two queries found by the second only: 2 x (1/2)^2.
    assert mcnemar([None, None, 2], [4, 10, 2]) == {"only_first": 0, "only_second": 2, "p": 0.5}
    # One against nine: 2 x (1 + 10) / 2^10; a rank past 10 is a miss.
    first = [1] + [None] * 9
    second = [11] + [5] * 9
    assert mcnemar(first, second) == {"only_first": 1, "only_second": 9, "p": round(22 / 1024, 4)}
    with pytest.raises(ValueError, match="same queries"):
        mcnemar([1], [1, 2])


SCRIPT = b"""\
var Vector = {};

/**
 * Adds the two vectors and returns their sum as a new vector.
 */
Vector.add = function(vectorA, vectorB, output) {
    if (!output) output = {};
    output.x = vectorA.x + vectorB.x;
    output.y = vectorA.y + vectorB.y;
    return output;
};

/** Returns the perpendicular vector, clockwise or not. */
export const perp = (vector, negate) => {
    negate = negate === true ? -1 : 1;
    return {
        x: negate * -vector.y,
        y: negate * vector.x,
    };
};
"""


def test_the_finder_asks_about_javascript_functions_given_by_assignment() -> None:
    functions, blanks = find_docs(SCRIPT, "javascript")
    targets = [target for target, _ in doc_targets(functions, "v.js", SCRIPT, "javascript")]
    assert [(t.query, t.start_line) for t in targets] == [
        ("Adds the two vectors and returns their sum as a new vector.", 6),
        ("Returns the perpendicular vector, clockwise or not.", 14),
    ]
    blanked = blank(SCRIPT, blanks)
    assert b"Adds the two" not in blanked and b"perpendicular" not in blanked
    assert blanked.count(b"\n") == SCRIPT.count(b"\n")  # line numbers do not move


def test_the_copy_leaves_tests_declarations_and_examples_out(tmp_path: Path) -> None:
    for name in (
        "route.go",
        "route_test.go",
        "testdata/x.go",
        "a.ts",
        "a.d.ts",
        "a.spec.ts",
        "examples/b.ts",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert [p.name for p in source_files(tmp_path, (".go",))] == ["route.go"]
    assert [p.name for p in source_files(tmp_path, (".ts",))] == ["a.ts"]


def test_every_language_is_pinned_and_an_unknown_one_or_registry_is_refused(tmp_path: Path) -> None:
    assert set(LANGUAGE_PACKAGES) == {"go", "rust", "js", "ts", "python", "java"}
    for packages in LANGUAGE_PACKAGES.values():
        assert all(p.version and p.version[0].isdigit() for p in packages)
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        build_language("cobol", tmp_path)
    with pytest.raises(ValueError, match="unknown registry 'cpan'"):
        fetch(Package("cpan", "Moose", "2.2206", "", "moose"), tmp_path)


def test_joined_answers_find_what_the_leaves_do_at_a_rank_no_worse(tmp_path: Path) -> None:
    from hsc.quality.sweep import Options, run_quality

    options = Options(
        packages=("json", "logging"),
        queries=60,
        out=tmp_path / "q",
        sweep=False,
        systems=("hybrid", "hybrid+joined"),
    )
    result = run_quality(options, report=lambda line: None)
    ranks = {row["system"]: row["ranks"] for row in result["systems"]}
    for leaves, joined in zip(ranks["hybrid"], ranks["hybrid+joined"]):
        if leaves is not None:
            assert joined is not None and joined <= leaves
    [test] = result["mcnemar"]
    assert test["default"] == "hybrid+joined" and test["system"] == "hybrid" and test["only_second"] == 0
