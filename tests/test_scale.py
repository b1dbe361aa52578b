"""Compact vector storage and the leaf table's side files, on real SQLite files."""

from __future__ import annotations

import numpy as np
import pytest

from hsc.api import Index
from hsc.bench.app import synthetic_leaf, write_synthetic_index
from hsc.bench.scale import measure_database
from hsc.embed import normalise
from hsc.hierarchy.summarize import DigestSummarizer
from hsc.model import FileReport
from hsc.params import Settings
from hsc.search.lexical import TermCounts, match_expression, terms
from hsc.store import Store


def unit_vectors(count: int, seed: int = 0) -> np.ndarray:
    return normalise(np.random.default_rng(seed).standard_normal((count, 384)).astype(np.float32))


def test_float16_vectors_round_trip_within_its_precision_and_are_searched_as_float32(tmp_path):
    store = Store(tmp_path / "index.db")
    store.vector_storage = "float16"
    vectors = unit_vectors(3)
    store.save_vectors("m", {f"h{i}": v for i, v in enumerate(vectors)})
    stored = store.row("SELECT LENGTH(vector) AS bytes, dimension FROM embeddings WHERE content_hash = 'h0'")
    assert stored == {"bytes": 2 * 384, "dimension": 384}
    found = store.cached_vectors("m", ["h0", "h1", "h2"])
    for i, vector in enumerate(vectors):
        assert found[f"h{i}"].dtype == np.float32
        np.testing.assert_allclose(found[f"h{i}"], vector, atol=1e-3)  # float16: 11 bits of mantissa
    assert not np.array_equal(found["h0"], vectors[0])  # it really was rounded


def test_the_setting_reaches_the_store_and_refuses_other_values(tmp_path):
    with Index.open(tmp_path / "index.db", Settings(vector_storage="float16")) as index:
        assert index.store.vector_storage == "float16"
    with pytest.raises(ValueError, match="vector_storage"):
        Settings(vector_storage="int8")


def test_float16_and_float32_vectors_side_by_side_are_each_read_as_stored(tmp_path):
    """Same content, same key: whichever way a vector was stored, it is decoded by
    its own length, in the cache and in a leaf table that mixes both."""
    store = Store(tmp_path / "index.db")
    repository_id = store.upsert_repository("/r", "r")
    leaves = [synthetic_leaf("a.py", f"a.f{i}", 12 * i + 1, 40, i) for i in range(4)]
    vectors = unit_vectors(4, seed=1)
    store.save_vectors("m", {leaves[0].content_hash: vectors[0], leaves[1].content_hash: vectors[1]})
    store.vector_storage = "float16"
    store.save_vectors("m", {leaves[2].content_hash: vectors[2], leaves[3].content_hash: vectors[3]})
    store.replace_file(repository_id, FileReport("a.py", "python", "indexed"), leaves, "k", "m")
    table = store.leaf_table(repository_id, "m")
    assert table.vectors.dtype == np.float32
    np.testing.assert_array_equal(table.vectors[:2], vectors[:2])  # float32 exactly
    np.testing.assert_allclose(table.vectors[2:], vectors[2:], atol=1e-3)
    # The same content written again the other way replaces it, and is still read right.
    store.save_vectors("m", {leaves[0].content_hash: vectors[0]})
    again = store.cached_vectors("m", [leaves[0].content_hash])[leaves[0].content_hash]
    np.testing.assert_allclose(again, vectors[0], atol=1e-3)
    assert store.leaf_table(repository_id, "m").vectors.shape == (4, 384)


def same_table(a, b) -> None:
    np.testing.assert_array_equal(a.leaf_ids, b.leaf_ids)
    np.testing.assert_array_equal(a.file_index, b.file_index)
    assert list(a.paths) == list(b.paths)
    assert list(a.scopes) == list(b.scopes)
    np.testing.assert_array_equal(a.start_lines, b.start_lines)
    np.testing.assert_array_equal(a.end_lines, b.end_lines)
    np.testing.assert_array_equal(a.token_counts, b.token_counts)
    np.testing.assert_array_equal(a.vectors, b.vectors)


def owners_from_sqlite(store: Store, hierarchy_id: int, leaf_ids: np.ndarray) -> list[int]:
    membership = store.memberships(hierarchy_id)
    return [membership.get(int(i), -1) for i in leaf_ids]


def test_side_files_are_made_used_and_replaced_when_a_file_changes(tmp_path):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=300)
    with Index.open(database) as index:
        hierarchy_id = index.default_hierarchy()
        loaded = index._load(hierarchy_id)
        side = sorted(p.name for p in (tmp_path / "hnsw").glob("index-*"))
        assert any(name.endswith(".npy") and "-leaves-" in name for name in side)
        assert any("-owners-" in name for name in side)
        assert loaded.mid_ids  # groups were found for the leaves
    with Index.open(database) as index:
        table = index.leaf_table()
        assert isinstance(table.vectors.base, np.memmap)  # read from the side file, mapped
        same_table(table, index.store.leaf_table(table_repository(index), model_of(index)))
        loaded = index._load(hierarchy_id)
        owners = np.repeat(loaded.mid_ids, loaded.group_ends - loaded.group_starts)
        assert owners.tolist() == owners_from_sqlite(index.store, hierarchy_id, table.leaf_ids)

    # One file is rewritten (new leaves, new vectors) and the hierarchy is updated in place
    # (same id), as an edit does: the old side files must not be read.
    with Index.open(database, summarizer=DigestSummarizer()) as index:
        repository_id, model = table_repository(index), model_of(index)
        path = index.leaf_table().paths[0]
        new_leaves = [synthetic_leaf(path, f"edited.f{i}", 3 * i + 1, 30, 10_000 + i) for i in range(3)]
        index.store.save_vectors(
            model, {leaf.content_hash: v for leaf, v in zip(new_leaves, unit_vectors(3, 9))}
        )
        index.store.replace_file(repository_id, FileReport(path, "python", "indexed"), new_leaves, "k", model)
        row = index.store.hierarchy(hierarchy_id)
        index._update(dict(row), index.hierarchy_parameters(hierarchy_id), [path], None)
        assert index.store.hierarchy(hierarchy_id) is not None
    with Index.open(database) as index:
        truth = index.store.leaf_table(repository_id, model)
        table = index.leaf_table()
        same_table(table, truth)
        assert {f"edited.f{i}" for i in range(3)} <= set(table.scopes)
        loaded = index._load(hierarchy_id)
        assert loaded.hierarchy_id == hierarchy_id
        owners = np.repeat(loaded.mid_ids, loaded.group_ends - loaded.group_starts)
        assert owners.tolist() == owners_from_sqlite(index.store, hierarchy_id, truth.leaf_ids)
    # Only the current state's files are left.
    leaves_files = [p for p in (tmp_path / "hnsw").glob("index-r*-leaves-*.npz")]
    assert len(leaves_files) == 1


def test_a_damaged_side_file_is_not_trusted(tmp_path):
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=120)
    with Index.open(database) as index:
        index.leaf_table()
    for path in (tmp_path / "hnsw").glob("index-r*-leaves-*.npy"):
        path.write_bytes(path.read_bytes()[:200])  # cut short, as by a full disk
    with Index.open(database) as index:
        table = index.leaf_table()
        same_table(table, index.store.leaf_table(table_repository(index), model_of(index)))


def test_a_loaded_table_reads_its_scopes_after_a_writer_replaced_its_side_files(tmp_path):
    """Scopes are read on first use, and a writer's next state removes this state's side files
    (a reader in another process saw FileNotFoundError): the loaded table keeps its own."""
    database = tmp_path / "index.db"
    write_synthetic_index(database, leaves=120)
    with Index.open(database) as index:
        index.leaf_table()  # this state's side files
    scopes_files = set((tmp_path / "hnsw").glob("index-r*-leaves-*.scopes"))
    assert len(scopes_files) == 1
    with Index.open(database) as reader:
        table = reader.leaf_table()
        assert isinstance(table.vectors.base, np.memmap)  # loaded from the side files
        truth = reader.store.leaf_table(table_repository(reader), model_of(reader))
        with Index.open(database) as writer:
            repository_id, model = table_repository(writer), model_of(writer)
            path = table.paths[0]
            new_leaves = [synthetic_leaf(path, f"edited.f{i}", 3 * i + 1, 30, 20_000 + i) for i in range(2)]
            writer.store.save_vectors(
                model, {leaf.content_hash: v for leaf, v in zip(new_leaves, unit_vectors(2, 5))}
            )
            writer.store.replace_file(
                repository_id, FileReport(path, "python", "indexed"), new_leaves, "k", model
            )
            assert "edited.f0" in writer.leaf_table().scopes  # the new state's side files
        assert not scopes_files & set((tmp_path / "hnsw").glob("index-r*-leaves-*.scopes"))
        assert list(table.scopes) == list(truth.scopes)


def table_repository(index: Index) -> int:
    return int(index.repositories()[0]["id"])


def model_of(index: Index) -> str:
    return index.repositories()[0]["embedding_model"]


def test_the_scale_bench_times_the_default_hybrid_query_with_and_without_common_terms(tmp_path):
    found = measure_database(2_000, tmp_path, queries=4)
    for way in ("sqlite", "side_file"):
        for mode in (
            "two-stage",
            "flat",
            "hybrid",
            "hybrid_every_term",
            "hybrid_region_lexical",
            "hybrid_region_names_off",
        ):
            assert found["open"][way][f"{mode}_whole_query"]["p50_ms"] > 0
    # The first region query of a fresh index: built (side file removed), then read from the side file.
    first = found["open"]["first_region_query"]
    assert set(first) == {
        "without_regions_seconds",
        "regions_built_seconds",
        "regions_read_seconds",
        "region_terms_built_seconds",
        "region_terms_read_seconds",
    }
    assert all(seconds > 0 for seconds in first.values())
    assert len(list((tmp_path / "hnsw").glob("scale-2000-h*-regions-*"))) == 2
    assert len(list((tmp_path / "hnsw").glob("scale-2000-h*-region-terms-*"))) == 1
    # What the hybrid queries meet: two words in every synthetic leaf, which the default leaves out.
    with Index(Store(tmp_path / "scale-2000.db")) as index:
        counts = TermCounts(index.store.term_documents, index.store.leaf_count)
        assert counts.common(terms("compute_48 value"), 0.2) == {"compute", "value"}
        repository_id = int(index.repositories()[0]["id"])
        assert index.store.lexical_search(repository_id, match_expression("compute_48 value"), 50, 1.0)
