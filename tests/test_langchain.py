"""The LangChain retriever and loader, run by langchain-core itself."""

from __future__ import annotations

import pytest
from extras import require

require("langchain_core", "langchain")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.prompts import PromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402

from hsc.integrations.langchain import HscLoader, HscRetriever  # noqa: E402
from hsc.params import RETRIEVAL_MODES  # noqa: E402

QUERY = "apply a percentage discount to a price"


def _inventory(indexed_samples) -> tuple:
    index, root, _ = indexed_samples
    return index, index.repository_id(root / "inventory_py")


def test_retriever_invoke_every_mode(indexed_samples) -> None:
    index, repo = _inventory(indexed_samples)
    for mode in RETRIEVAL_MODES:
        documents = HscRetriever(index=index, repository_id=repo, mode=mode, k=3).invoke(QUERY)
        assert len(documents) == 3 and all(isinstance(d, Document) for d in documents)
        best = documents[0]
        assert "def apply_discount" in best.page_content
        meta = best.metadata
        assert (meta["path"], meta["scope"], meta["language"]) == (
            "inventory/pricing.py",
            "inventory.pricing.apply_discount",
            "python",
        )
        lines = index.node(meta["node_id"])
        assert (meta["start_line"], meta["end_line"]) == (lines.start_line, lines.end_line)
        assert meta["node_id"] == best.id and meta["node_id"].startswith("leaf:")
        assert meta["parent_id"] == index.node(meta["node_id"]).parent_id
        assert meta["parent_summary"] == index.node(meta["parent_id"]).summary
        assert meta["mode"] == mode and meta["score"] >= documents[1].metadata["score"]
        assert (meta["parent_score"] is None) == (mode in ("flat", "hybrid-flat"))


def test_retriever_in_an_lcel_chain(indexed_samples) -> None:
    index, repo = _inventory(indexed_samples)

    def cite(documents: list[Document]) -> str:
        return "\n\n".join(
            f"# {d.metadata['path']}:{d.metadata['start_line']}-{d.metadata['end_line']}\n{d.page_content}"
            for d in documents
        )

    prompt = PromptTemplate.from_template("Answer from this code:\n{context}\n\nQuestion: {question}")
    chain = {
        "context": HscRetriever(index=index, repository_id=repo, k=2) | RunnableLambda(cite),
        "question": RunnablePassthrough(),
    } | prompt
    text = chain.invoke(QUERY).to_string()
    assert "# inventory/pricing.py:" in text and "def apply_discount" in text
    assert text.endswith(f"Question: {QUERY}")
    assert len(chain.batch([QUERY, "parse a quantity from text"])) == 2


def test_retriever_rejects_an_unknown_mode(indexed_samples) -> None:
    index, repo = _inventory(indexed_samples)
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        HscRetriever(index=index, repository_id=repo, mode="sideways")


def test_loader_yields_every_node_with_links(indexed_samples) -> None:
    index, repo = _inventory(indexed_samples)
    documents = HscLoader(index, repository_id=repo).load()
    by_id = {d.id: d for d in documents}
    assert len(by_id) == len(documents) == sum(1 for _ in index.export(repository_id=repo))
    levels = [d.metadata["level"] for d in documents]
    assert {"top", "mid", "leaf"} == set(levels)
    assert levels.count("leaf") == len(index.leaves(repo))
    for document in documents:
        meta = document.metadata
        assert meta["node_id"] == document.id
        if meta["level"] == "top":
            assert meta["parent_id"] is None
        else:
            assert document.id in by_id[meta["parent_id"]].metadata["children"]
        for child in meta["children"]:
            assert by_id[child].metadata["parent_id"] == document.id
    leaf = next(d for d in documents if d.metadata["scope"] == "inventory.pricing.apply_discount")
    assert "def apply_discount" in leaf.page_content and leaf.metadata["language"] == "python"


def test_retriever_returns_regions_with_their_code(indexed_samples) -> None:
    index, repo = _inventory(indexed_samples)
    documents = HscRetriever(index=index, repository_id=repo, regions=True, k=5).invoke(QUERY)
    assert len(documents) == 5
    levels = {d.metadata["level"] for d in documents}
    assert levels <= {"file", "definition"}
    scores = [d.metadata["score"] for d in documents]
    assert scores == sorted(scores, reverse=True) and [d.metadata["rank"] for d in documents] == [
        1,
        2,
        3,
        4,
        5,
    ]
    discount = next(d for d in documents if d.metadata["name"] == "inventory.pricing.apply_discount")
    assert discount.metadata["level"] == "definition" and discount.metadata["path"] == "inventory/pricing.py"
    assert "def apply_discount" in discount.page_content
    lines = f"{discount.metadata['start_line']}-{discount.metadata['end_line']}"
    assert discount.id == f"definition:inventory/pricing.py:{lines}"
    pricing = next(
        d for d in documents if d.metadata["level"] == "file" and d.metadata["path"] == "inventory/pricing.py"
    )
    assert "def apply_discount" in pricing.page_content and pricing.metadata["start_line"] == 1

    # Asked at the definition level: the same query's regions are definitions only, the file gone.
    asked = HscRetriever(index=index, repository_id=repo, regions=True, k=5, level="definition")
    defined = asked.invoke(QUERY)
    assert defined and {d.metadata["level"] for d in defined} == {"definition"}
    assert any(d.metadata["name"] == "inventory.pricing.apply_discount" for d in defined)
    # At the type level: classes alone, the discount function gone.
    typed = HscRetriever(index=index, repository_id=repo, regions=True, k=5, level="type").invoke(QUERY)
    assert typed and all(d.metadata["level"] == "definition" for d in typed)
    assert all(d.page_content.lstrip().startswith(("class ", "@")) for d in typed)
    with pytest.raises(ValueError, match="level must be one of any, definition, type"):
        HscRetriever(index=index, regions=True, level="folder")
