"""Outline texts and vectors (hsc.embed.outlines, hsc.search.region_outlines) on real parts:
a real tree-sitter parse of the standard library, the bundled encoder, a real index."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.embed.outlines import FILE_KEY, file_outlines, module_scope
from hsc.params import Parameters
from hsc.search.region_outlines import OUTLINE_MODES, RegionOutlines, region_outline_texts
from hsc.search.region_table import DEFINITION, FILE, build_regions
from hsc.search.regions import rank_regions

ROOT = Path(__file__).resolve().parent.parent


def _outlines_of(path: Path, rel: str) -> dict[tuple[int, int], str]:
    cut = cut_file(path.read_text(encoding="utf-8"), rel, "python", Parameters(), get_counter())
    scope = module_scope(rel, cut.definitions, [leaf.scope for leaf in cut.leaves])
    starts = [leaf.start_line for leaf in cut.leaves]
    ends = [leaf.end_line for leaf in cut.leaves]
    return file_outlines(scope, cut.definitions, starts, ends)


def test_a_class_outline_is_its_scope_signature_and_members_signatures_without_docstrings():
    source = Path(sysconfig.get_paths()["stdlib"]) / "json" / "decoder.py"
    outlines = _outlines_of(source, "json/decoder.py")
    decoder = next(text for text in outlines.values() if text.startswith("json.decoder.JSONDecoder\n"))
    lines = decoder.split("\n")
    assert lines[1] == "class JSONDecoder(object)"
    members = [line.strip() for line in lines[2:]]
    assert [m.split("(")[0] for m in members] == ["def __init__", "def decode", "def raw_decode"]
    assert all(line.startswith("    def ") for line in lines[2:])  # one level below the class
    assert "object_hook=None" in members[0]  # parameters as written
    # What the docstrings say is left out: the question quotes it.
    assert "Simple JSON" not in decoder and "Python representation" not in decoder
    # A class cut into one leaf is embedded whole by that leaf: no outline of its own.
    assert not any(text.startswith("json.decoder.JSONDecodeError\n") for text in outlines.values())
    # The file's outline: its module, then its top-level names only.
    own = outlines[FILE_KEY].split("\n")
    assert own[0] == "json.decoder"
    assert "class JSONDecoder(object)" in own and not any(line.startswith(" ") for line in own)
    assert not any("raw_decode" in line for line in own)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder):
    from hsc.api import Index

    root = tmp_path_factory.mktemp("outlines")
    repo = root / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    index = Index.open(root / "index.db", embedder=embedder)
    index.index(repo)
    yield index
    index.close()


def test_outline_vectors_replace_or_join_the_pooled_vector_as_each_mode_says(indexed, embedder):
    index = indexed
    table = index.leaf_table()
    definitions = index.store.definitions(index.repositories()[0]["id"])
    regions = build_regions(table, definitions)
    texts = region_outline_texts(regions, table, definitions)
    # The stored definitions give the classes that span several leaves and every file with one.
    outlined = [r for r in texts if regions.levels[r] == DEFINITION]
    assert {regions.names[r] for r in outlined} >= {"inventory.persistence.ItemRepository"}
    assert all(regions.outermost[r] and regions.hi[r] - regions.lo[r] > 1 for r in outlined)
    assert {regions.levels[r] for r in texts} == {DEFINITION, FILE}
    outlines = RegionOutlines.from_texts(texts, embedder.embed)
    assert len(outlines) == len(texts)
    query = embedder.embed(["a repository that saves items to a SQLite database and loads them back"])[0]
    store = next(r for r in outlined if regions.names[r] == "inventory.persistence.ItemRepository")
    plain = next(r for r in range(len(regions)) if regions.levels[r] == DEFINITION and r not in texts)
    ids = np.array([store, plain])
    pooled = regions.vectors[ids] @ query
    outline = float(outlines.vectors[list(outlines.rows).index(store)] @ query)
    expected = {
        "off": pooled[0],
        "outline": outline,
        "max": max(pooled[0], outline),
        "mean": (pooled[0] + outline) / 2,
    }
    for mode in OUTLINE_MODES:
        got = outlines.cosines(regions, query, mode)(ids)
        assert got[0] == pytest.approx(expected[mode], abs=1e-5)
        assert got[1] == pytest.approx(pooled[1], abs=1e-5)  # no outline: its pooled vector
    assert outline != pytest.approx(float(pooled[0]), abs=1e-3)  # the outline is a vector of its own
    # Ranked by the vector part alone, the class scores its outline's cosine.
    scores = table.vectors @ query
    rows = np.argsort(-scores)[:20]
    found = rank_regions(
        regions,
        rows,
        scores[rows],
        query,
        50,
        0.0,
        "all",
        ("definition",),
        True,
        cosines=outlines.cosines(regions, query, "outline"),
    )
    by_name = {r.name: r.score for r in found}
    assert by_name["inventory.persistence.ItemRepository"] == pytest.approx(outline, abs=1e-5)
    # The nearest outlines are searched over all of them, candidate leaf or not.
    nearest = outlines.nearest(regions, query, 3)
    assert nearest[0] == store and all(regions.levels[r] == DEFINITION for r in nearest)
    with pytest.raises(ValueError, match="outline mode"):
        outlines.cosines(regions, query, "pooled")


QUESTION = "a repository that saves items to a SQLite database and loads them back"


def _region_scores(index, params) -> dict[tuple[str, str], float]:
    response = index.query(QUESTION, params=params, record=False, compare=False)
    return {(r.level, r.name): r.score for r in response.regions}


def test_indexing_stores_outlines_once_and_a_listed_definition_gains_their_evidence(tmp_path, embedder):
    import dataclasses

    from hsc.api import Index
    from hsc.params import with_values
    from hsc.search.regions import OUTLINE_WEIGHT

    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        report = index.index(repo)  # region_outlines = evidence, the default
        assert report.outlines >= 2 and report.outlines_embedded == report.outlines
        repository_id = index.repositories()[0]["id"]
        model = index.repositories()[0]["embedding_model"]
        spans, vectors = index.store.outline_vectors(repository_id, model)
        assert ("inventory/persistence.py", 48, 241) in [(p, s, e) for p, s, e in spans]
        assert vectors.shape == (len(spans), embedder.embed(["x"]).shape[1])
        # An outline whose text is unchanged is not embedded again.
        (repo / "inventory" / "cli.py").write_text((repo / "inventory" / "cli.py").read_text() + "\n# x\n")
        again = index.index(repo)
        assert again.outlines == report.outlines and again.outlines_embedded == 0
        assert index.index(repo).outlines == report.outlines  # nothing changed: the rows as they were
        stored = with_values(Parameters(), index.hierarchy(index.default_hierarchy())["parameters"])
        assert stored.region_outlines == "evidence"
        on = _region_scores(index, stored)
        off = _region_scores(index, dataclasses.replace(stored, region_outlines="off"))
    shared = set(on) & set(off)
    gains = {key: on[key] - off[key] for key in shared}
    # Files and definitions without an outline score as before; an outlined class gains at most
    # the weight, the best listed outline exactly the weight.
    assert all(gain == pytest.approx(0.0, abs=1e-6) for (level, _), gain in gains.items() if level == "file")
    assert gains[("definition", "inventory.persistence.ItemRepository")] > 0
    assert max(gains.values()) == pytest.approx(OUTLINE_WEIGHT, abs=1e-6)
    assert all(-1e-6 <= gain <= OUTLINE_WEIGHT + 1e-6 for gain in gains.values())


def test_an_index_without_outlines_answers_as_before_and_says_so_once(tmp_path, embedder):
    import dataclasses

    from hsc.api import Index
    from hsc.params import with_values

    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo, params=Parameters(region_outlines="off"))
        repository_id = index.repositories()[0]["id"]
        assert index.store.outline_vectors(repository_id, index.repositories()[0]["embedding_model"])[0] == []
        stored = with_values(Parameters(), index.hierarchy(index.default_hierarchy())["parameters"])
        before = _region_scores(index, stored)
        # As an index made before the option: no rows and no record of the value it was made with.
        index.store.set_meta(f"region_outlines:{repository_id}", None)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        asked = dataclasses.replace(stored, region_outlines="evidence")
        with pytest.warns(UserWarning, match="no outline vectors"):
            first = _region_scores(index, asked)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # said once: the second query is silent
            second = _region_scores(index, asked)
    assert first == pytest.approx(before) and second == pytest.approx(before)


def _killed_before_outlines(index, repo, monkeypatch) -> None:
    """An index run that dies after writing its files, before it makes their outlines."""
    import hsc.index.pipeline as pipeline

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "sync_outlines", killed)
    with pytest.raises(KeyboardInterrupt):
        index.index(repo)


def test_a_run_killed_before_its_outlines_leaves_them_to_the_next_run(tmp_path, embedder, monkeypatch):
    from hsc.api import Index

    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    persistence = repo / "inventory" / "persistence.py"
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        repository_id = index.repositories()[0]["id"]
        model = index.repositories()[0]["embedding_model"]
        before = index.store.outline_vectors(repository_id, model)[0]
        # The class's outline moves down a line; the run dies after writing the file, before its outlines.
        persistence.write_text("# moved\n" + persistence.read_text())
        _killed_before_outlines(index, repo, monkeypatch)
        monkeypatch.undo()
        assert ("inventory/persistence.py", 48, 241) in before
        assert index.store.outline_vectors(repository_id, model)[0] == before  # out of date
        # The next run has no file left to write, and still brings the outlines up to date.
        report = index.index(repo)
        assert report.files_unchanged == report.files_seen
        after = index.store.outline_vectors(repository_id, model)[0]
    assert ("inventory/persistence.py", 49, 242) in after
    assert ("inventory/persistence.py", 48, 241) not in after
    assert len(after) == len(before)


def test_a_run_makes_again_only_the_outlines_of_the_files_it_changed_and_all_after_a_killed_run(
    tmp_path, embedder, monkeypatch
):
    import hsc.index.pipeline as pipeline
    from hsc.api import Index
    from hsc.index.outlines import repository_outlines

    repo = tmp_path / "inventory_py"
    shutil.copytree(ROOT / "hsc" / "samples" / "inventory_py", repo)
    persistence, cli = repo / "inventory" / "persistence.py", repo / "inventory" / "cli.py"
    read: list[object] = []
    whole = pipeline.sync_outlines

    def watched(*args, **kwargs):
        read.append(args[6] if len(args) > 6 else kwargs.get("changed_paths"))
        return whole(*args, **kwargs)

    monkeypatch.setattr(pipeline, "sync_outlines", watched)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        repository_id = index.repositories()[0]["id"]
        model = index.repositories()[0]["embedding_model"]
        persistence.write_text("# moved\n" + persistence.read_text())
        index.index(repo)
        # Only the file written was read again, and the rows are what every file's make.
        assert read[-1] == ["inventory/persistence.py"]
        spans = index.store.outline_vectors(repository_id, model)[0]
        assert sorted(spans) == sorted(repository_outlines(index.store, repository_id))
        assert ("inventory/persistence.py", 49, 242) in spans

        # A run killed after writing a file leaves the next run, which writes another file, to make
        # every file's outlines again.
        persistence.write_text("# moved again\n" + persistence.read_text())
        _killed_before_outlines(index, repo, monkeypatch)
        monkeypatch.setattr(pipeline, "sync_outlines", watched)
        cli.write_text(cli.read_text() + "\n# touched\n")
        index.index(repo)
        assert read[-1] is None
        spans = index.store.outline_vectors(repository_id, model)[0]
    assert ("inventory/persistence.py", 50, 243) in spans
    assert ("inventory/persistence.py", 49, 242) not in spans
