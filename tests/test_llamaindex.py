"""The LlamaIndex parser and retriever, run by llama-index-core itself:
its reader, docstore, vector index and AutoMergingRetriever."""

from __future__ import annotations

from pathlib import Path

import pytest
from extras import require

require("llama_index.core", "llamaindex")

from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex  # noqa: E402
from llama_index.core.node_parser import get_leaf_nodes, get_root_nodes  # noqa: E402
from llama_index.core.retrievers import AutoMergingRetriever  # noqa: E402
from llama_index.core.schema import NodeRelationship  # noqa: E402
from llama_index.core.storage.docstore import SimpleDocumentStore  # noqa: E402

from hsc.integrations.llamaindex import HscEmbedding, HscNodeParser, HscRetriever, hierarchy_nodes  # noqa: E402

QUERY = "apply a percentage discount to a price"


def _check_links(nodes: list) -> dict:
    by_id = {node.node_id: node for node in nodes}
    assert len(by_id) == len(nodes)
    for node in nodes:
        level = node.metadata["level"]
        parent = node.parent_node
        assert (parent is None) == (level == "top")
        if parent is not None:
            assert node.node_id in [c.node_id for c in by_id[parent.node_id].child_nodes]
            assert by_id[parent.node_id].metadata["level"] == {"leaf": "mid", "mid": "top"}[level]
        assert (node.child_nodes is None) == (level == "leaf")
        following = node.next_node
        if following is not None:
            assert level == "leaf" and by_id[following.node_id].prev_node.node_id == node.node_id
            assert by_id[following.node_id].metadata["path"] == node.metadata["path"]
    return by_id


def _merged(results: list, by_id: dict) -> list:
    """Results that AutoMergingRetriever put in place of their retrieved children."""
    return [r for r in results if by_id[r.node.node_id].metadata["level"] != "leaf"]


def test_node_parser_builds_hsc_hierarchy_for_auto_merging(indexed_samples, embedder) -> None:
    index, root, _ = indexed_samples
    repo = root / "inventory_py"
    documents = SimpleDirectoryReader(str(repo), recursive=True, required_exts=[".py"]).load_data()
    parser = HscNodeParser(embedder=embedder, root=str(repo))
    nodes = parser.get_nodes_from_documents(documents)
    by_id = _check_links(nodes)

    leaves = get_leaf_nodes(nodes)
    assert len(get_root_nodes(nodes)) == len(documents)
    # The same leaves as hsc's own index of the repository (same stages, same parameters).
    stored = {
        (r["path"], r["start_line"], r["end_line"], r["scope"])
        for r in index.leaves(index.repository_id(repo))
    }
    parsed = {tuple(n.metadata[k] for k in ("path", "start_line", "end_line", "scope")) for n in leaves}
    assert parsed == {row for row in stored if row[0].endswith(".py")}
    for node in nodes:  # offsets point at the node's own text in its file
        source = next(d for d in documents if d.doc_id == node.ref_doc_id).text
        assert source[node.start_char_idx : node.end_char_idx] == node.text

    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)
    vectors = VectorStoreIndex(leaves, storage_context=storage, embed_model=HscEmbedding(embedder))
    base = vectors.as_retriever(similarity_top_k=10)
    first = base.retrieve(QUERY)[0]
    assert first.node.metadata["scope"] == "inventory.pricing.apply_discount"
    results = AutoMergingRetriever(base, storage, simple_ratio_thresh=0.3).retrieve(QUERY)
    merged = _merged(results, by_id)
    assert merged and any("def apply_discount" in r.node.text for r in merged)
    kept = {r.node.node_id for r in results}
    for result in merged:  # a merged group replaces its children
        assert not kept & {c.node_id for c in result.node.child_nodes}


def test_retriever_over_an_index_with_auto_merging(indexed_samples) -> None:
    index, root, _ = indexed_samples
    repo = index.repository_id(root / "inventory_py")
    nodes = hierarchy_nodes(index, repository_id=repo)
    by_id = _check_links(nodes)
    assert sum(1 for n in nodes if n.metadata["level"] == "leaf") == len(index.leaves(repo))
    for node in nodes:
        assert node.node_id.split(":")[0] == node.metadata["level"]
        if node.parent_node:
            assert index.node(node.node_id).parent_id == node.parent_node.node_id

    hits = HscRetriever(index, repository_id=repo, k=8).retrieve(QUERY)
    assert len(hits) == 8 and hits[0].node.node_id == "leaf:" + hits[0].node.node_id.split(":")[1]
    assert hits[0].node.metadata["scope"] == "inventory.pricing.apply_discount"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert (
        hits[0].node.relationships[NodeRelationship.PARENT].node_id
        == index.node(hits[0].node.node_id).parent_id
    )

    storage = StorageContext.from_defaults(docstore=SimpleDocumentStore())
    storage.docstore.add_documents(nodes)
    base = HscRetriever(index, repository_id=repo, k=8)
    results = AutoMergingRetriever(base, storage, simple_ratio_thresh=0.3).retrieve(QUERY)
    merged = _merged(results, by_id)
    assert merged and merged[0].node.node_id.startswith(("mid:", "top:"))
    assert any("def apply_discount" in r.node.text for r in merged)

    regions = HscRetriever(index, repository_id=repo, k=4, regions=True).retrieve(QUERY)
    assert len(regions) == 4 and {r.node.metadata["level"] for r in regions} <= {"file", "definition"}
    assert [r.score for r in regions] == sorted((r.score for r in regions), reverse=True)
    named = {r.node.metadata["name"]: r for r in regions}
    assert "def apply_discount" in named["inventory.pricing.apply_discount"].node.text
    defined = HscRetriever(index, repository_id=repo, k=4, regions=True, level="definition").retrieve(QUERY)
    assert defined and {r.node.metadata["level"] for r in defined} == {"definition"}
    assert "file" in {r.node.metadata["level"] for r in regions}  # the mixed list had one
    typed = HscRetriever(index, repository_id=repo, k=4, regions=True, level="type").retrieve(QUERY)
    assert typed and all(r.node.text.lstrip().startswith(("class ", "@")) for r in typed)  # classes alone
    with pytest.raises(ValueError, match="level must be one of any, definition, type"):
        HscRetriever(index, regions=True, level="folder")

    flat = HscRetriever(index, repository_id=repo, k=3, mode="flat").retrieve(QUERY)
    assert flat[0].node.node_id == hits[0].node.node_id
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        HscRetriever(index, mode="sideways")


def test_parser_skips_empty_documents(embedder, tmp_path: Path) -> None:
    from llama_index.core.schema import Document

    parser = HscNodeParser(embedder=embedder)
    assert parser.get_nodes_from_documents([Document(text="   \n", metadata={"file_path": "empty.py"})]) == []
