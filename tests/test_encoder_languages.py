"""Training the encoder on other languages than Python: the pinned registry packages (never a
benchmark's), their files mined with the quality corpus's doc-comment rules, the per-language cap,
and the recipe naming every source. Real tree-sitter parses of the bundled samples, the real model;
the samples stand in for packages already fetched (a kept download is what a rerun reads), since
tests download nothing."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from hsc.bench.corpora import LANGUAGE_PACKAGES, download_folder
from hsc.cli import main
from hsc.embed.tuned import ENCODER_FILE, META_FILE
from hsc.encoder.pairs import mine_pairs
from hsc.encoder.sources import (
    TRAINING_LANGUAGES,
    TRAINING_PACKAGES,
    benchmark_overlap,
    cap_per_language,
    language_sources,
    package_names,
    parse_languages,
)

SAMPLES = Path(__file__).resolve().parent.parent / "hsc" / "samples"
STAND_INS = {"go": SAMPLES / "shortlink_go", "ts": SAMPLES / "ui_utils_ts" / "src"}


def _stage(downloads: Path, languages: tuple[str, ...]) -> None:
    """Each language's first package holds a bundled sample, the others nothing, as fetched."""
    for language in languages:
        for number, package in enumerate(TRAINING_PACKAGES[language]):
            unpacked = download_folder(package, downloads)
            root = unpacked / package.folder
            if number == 0:
                shutil.copytree(STAND_INS[language], root)
            else:
                root.mkdir(parents=True)
            (unpacked / ".done").write_text("")


def test_no_training_package_is_one_a_benchmark_scores():
    assert benchmark_overlap() == set()
    scored = {p.corpus_name for packages in LANGUAGE_PACKAGES.values() for p in packages}
    trained = [p for packages in TRAINING_PACKAGES.values() for p in packages]
    assert not scored & {p.corpus_name for p in trained}
    assert set(TRAINING_LANGUAGES) == {"go", "rust", "js", "ts"}
    # Debian and npm alone, each at an exact version, so a rerun mines the same files.
    assert {p.registry for p in trained} == {"debian", "npm"}
    assert all(p.version[0].isdigit() and p.folder for p in trained)
    assert len(package_names(TRAINING_LANGUAGES)) == len(trained)


def test_languages_are_parsed_in_a_fixed_order_and_unknown_ones_named():
    assert parse_languages("ts,go") == ("go", "ts")
    assert parse_languages("all") == TRAINING_LANGUAGES
    with pytest.raises(ValueError, match="unknown cobol"):
        parse_languages("go,cobol")


def test_each_languages_doc_comments_become_pairs_named_by_language_and_package(tmp_path):
    _stage(tmp_path, ("go", "ts"))
    sources = language_sources(("go", "ts"), tmp_path)
    assert {name.split("/")[1] for _, name in sources} == {"tools", "effect"}
    pairs = mine_pairs(sources)
    by_language = Counter(p.path.split("/")[0] for p in pairs)
    assert by_language["go"] >= 20 and by_language["ts"] >= 20
    go = next(p for p in pairs if p.path.startswith("go/tools/"))
    # The doc comment is the query and is blanked out of the code, which starts at its scope.
    assert go.query.lower() not in go.code.lower() and go.code.split("\n")[1].startswith("func ")
    # A test file is never a source (the corpus's rule): the sample has none, so add one.
    (download_folder(TRAINING_PACKAGES["go"][0], tmp_path)).joinpath(
        TRAINING_PACKAGES["go"][0].folder, "codes_test.go"
    ).write_text((STAND_INS["go"] / "codes.go").read_text())
    assert all(not name.endswith("_test.go") for _, name in language_sources(("go",), tmp_path))


def test_the_cap_keeps_at_most_so_many_pairs_a_language_the_same_ones_each_time(tmp_path):
    _stage(tmp_path, ("go", "ts"))
    pairs = mine_pairs(language_sources(("go", "ts"), tmp_path))
    capped = cap_per_language(pairs, 10, seed=0)
    assert Counter(p.path.split("/")[0] for p in capped) == {"go": 10, "ts": 10}
    assert capped == cap_per_language(pairs, 10, seed=0)
    assert capped != cap_per_language(pairs, 10, seed=1)
    assert [p for p in pairs if p in capped] == capped  # mined order kept
    assert cap_per_language(pairs, 0, seed=0) == pairs


def test_train_mixes_languages_and_the_recipe_names_every_source(tmp_path, capsys):
    downloads, out = tmp_path / "downloads", tmp_path / "tuned"
    _stage(downloads, ("go", "ts"))
    python = SAMPLES / "inventory_py"
    arguments = ["--from", str(python), "--languages", "ts,go", "--downloads", str(downloads)]
    arguments += ["--pairs-per-language", "12", "--batch", "8", "--max-steps", "1", "--int8-only"]
    assert main(["encoder", "train", *arguments, "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    record = json.loads((out / META_FILE).read_text())
    python_pairs = len(mine_pairs([(python, python.name)]))
    assert record["data"]["pairs"] == printed["pairs"] == python_pairs + 12 + 12
    assert record["recipe"]["languages"] == ["go", "ts"] and record["recipe"]["pairs_per_language"] == 12
    sources = record["data"]["sources"]
    assert sources[0] == str(python)
    assert sources[1:] == package_names(("go", "ts"))
    assert "debian:golang-golang-x-tools-dev=1:0.5.0+ds-1" in sources
    assert (out / ENCODER_FILE).exists() and not (out / "model").exists()


def test_an_unknown_language_is_one_clear_line_and_nothing_is_written(tmp_path, capsys):
    out = tmp_path / "tuned"
    assert main(["encoder", "train", "--languages", "go,cobol", "--from", ".", "--out", str(out)]) == 2
    assert "--languages: unknown cobol" in capsys.readouterr().err
    assert main(["encoder", "train", "--pairs-per-language", "-1", "--from", ".", "--out", str(out)]) == 2
    assert "--pairs-per-language must be 0 (all) or more, got -1" in capsys.readouterr().err
    assert not out.exists()
