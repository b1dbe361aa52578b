"""A re-index after a few edits replaces only the changed files' groups and
documents, and gives exactly the hierarchy a full rebuild gives."""

from __future__ import annotations

import shutil

from conftest import SAMPLE_REPOS

from hsc.api import Index
from hsc.params import Parameters


def hierarchy_snapshot(index: Index, hierarchy_id: int) -> dict:
    """Everything stored about a hierarchy, with database ids replaced by what they point at."""
    leaf_key = {f"leaf:{row['id'].split(':')[1]}": (row["path"], row["ordinal"]) for row in index.leaves()}

    def node_key(view) -> tuple:
        return (view.level, view.path, view.start_line, view.end_line)

    documents = index.documents(hierarchy_id)
    groups = index.groups(hierarchy_id)
    top_key = {view.id: node_key(view) for view in documents}
    info = index.hierarchy(hierarchy_id)
    return {
        "counts": {k: info[k] for k in ("leaf_count", "group_count", "document_count", "topic_boundaries")},
        "documents": [
            (node_key(v), v.token_count, v.summary, v.summariser, len(v.children)) for v in documents
        ],
        "groups": [
            (node_key(v), top_key[v.parent_id], v.token_count, v.summary, [leaf_key[c] for c in v.children])
            for v in groups
        ],
    }


def test_an_edit_updates_only_its_files_and_equals_a_full_rebuild(tmp_path, embedder):
    repo = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", repo)
    strict = Parameters(similarity_drop_threshold=0.6, maximum_merged_chunk_token_length=200)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        first = index.index(repo)
        index.build(first.repository_id, strict, name="strict")
        ids_before = {row["name"]: row["id"] for row in index.hierarchies()}
        untouched = index.node(
            next(v.id for v in index.documents(ids_before["default"]) if "models" in v.path)
        )

        # One function edited, one file removed, one added.
        pricing = repo / "inventory" / "pricing.py"
        source = pricing.read_text()
        at = source.index("(", source.index("def "))
        pricing.write_text(source[:at] + "_renamed" + source[at:])
        (repo / "inventory" / "reporting.py").unlink()
        (repo / "inventory" / "extra.py").write_text(
            "def shipping_cost(weight_kg: float) -> float:\n    return 4.5 + 1.2 * weight_kg\n"
        )
        report = index.index(repo)
        assert sorted(report.changed_paths) == [
            "inventory/extra.py",
            "inventory/pricing.py",
            "inventory/reporting.py",
        ]
        assert report.leaves_embedded <= 3
        # Updated in place: same hierarchies, and an untouched file's document kept its node.
        assert {row["name"]: row["id"] for row in index.hierarchies()} == ids_before
        assert index.node(untouched.id).summary == untouched.summary
        incremental = {name: hierarchy_snapshot(index, i) for name, i in ids_before.items()}
        assert not any(v.path == "inventory/reporting.py" for v in index.documents(ids_before["default"]))
        # Queries see the new hierarchy (its HNSW file was dropped with the old groups).
        hit = index.query("shipping cost for a parcel by weight").results[0]
        assert hit.path == "inventory/extra.py"

        for name, params in (("default", Parameters()), ("strict", strict)):
            rebuilt = index.build(first.repository_id, params, name=name)
            assert hierarchy_snapshot(index, rebuilt["id"]) == incremental[name]


def test_leaf_ids_are_never_reused_so_a_loaded_hierarchy_never_shows_a_stranger(tmp_path, embedder):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def alpha(x):\n    return x + 1\n")
    last = repo / "b.py"  # written last: its leaves hold the largest ids
    last.write_text("def gamma(z):\n    return z - 3\n")
    with Index.open(tmp_path / "index.db", embedder=embedder) as reader:
        reader.index(repo)
        ids_before = {row["id"] for row in reader.leaves()}
        reader.query("subtract three")  # the reader now holds the hierarchy's leaf table

        with Index.open(tmp_path / "index.db", embedder=embedder) as writer:  # another process's edit
            last.write_text("def gamma(z):\n    return z - 3\n\n\ndef epsilon(q):\n    return q**5\n")
            writer.index(repo)
            new_ids = {row["id"] for row in writer.leaves() if row["path"] == "b.py"}
        assert new_ids and not new_ids & ids_before
        # The reader sees the hierarchy's new state (updated in place, same id) at its next
        # query, and answers as a fresh process does: the new leaf, under its own id.
        answer = reader.query("raise to the fifth power", mode="two-stage")
        with Index.open(tmp_path / "index.db", embedder=embedder) as fresh:
            truth = fresh.query("raise to the fifth power", mode="two-stage", record=False)
        shown = [(r.leaf_id, r.scope, r.text) for r in answer.results + answer.flat]
        assert shown == [(r.leaf_id, r.scope, r.text) for r in truth.results + truth.flat]
        assert "def epsilon" in answer.results[0].text and answer.results[0].leaf_id in new_ids
