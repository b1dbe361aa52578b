"""hsc in LangChain (``pip install 'hsc[langchain]'``).

- :class:`HscRetriever`: a ``BaseRetriever`` over an :class:`hsc.Index`, in any
  retrieval mode; each ``Document`` is one leaf (its code), with its lines,
  scope, score and parent group (id, score, summary) in the metadata. With
  ``budget_tokens`` set, it returns the query's context pack instead: one
  ``Document`` per span, with its role and the reason it is there. With
  ``regions=True``, one ``Document`` per region of the query (a file or a
  top-level definition; hsc.search.regions): its code, level, lines, name, score.
- :class:`HscLoader`: every top, mid and leaf node of a hierarchy as a
  ``Document`` with its parent and child ids, for a vector store of your own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, field_validator

from hsc.api import Index, QueryResult
from hsc.integrations.packs import region_id, region_metadata, region_texts, span_id, span_metadata
from hsc.params import RETRIEVAL_MODES
from hsc.search.across import query_repositories
from hsc.search.context import ContextPack
from hsc.search.regions import level_overrides


def result_document(result: QueryResult, mode: str) -> Document:
    """One retrieved leaf as a Document: ``page_content`` is its code."""
    parent = result.parent
    return Document(
        id=result.leaf_id,
        page_content=result.text,
        metadata={
            "node_id": result.leaf_id,
            "repository": result.repository,  # its root folder: a database may hold several
            "path": result.path,
            "start_line": result.start_line,  # 1-based, inclusive
            "end_line": result.end_line,
            "scope": result.scope,
            "language": result.language,
            "score": result.score,
            "rank": result.rank,
            "mode": mode,
            "parent_id": result.parent_id,
            "parent_score": result.parent_score,  # None for the flat search
            "parent_summary": parent.summary if parent else None,
        },
    )


def pack_documents(pack: ContextPack) -> list[Document]:
    """A context pack's spans in its order (reading order per file), each a
    Document whose ``page_content`` is the span's lines."""
    return [
        Document(id=span_id(span), page_content=span.text, metadata=span_metadata(span, pack))
        for span in pack.spans
    ]


class HscRetriever(BaseRetriever):
    """Retrieve code leaves from an hsc index.

    ``k`` overrides the hierarchy's ``leaf_level_top_k``; ``mode`` is one of
    :data:`hsc.search.two_stage.RETRIEVAL_MODES`. With several repositories in the
    database, every one answers (ranked together, each Document's ``repository`` naming
    its own) unless ``repository_id`` (or a ``hierarchy_id``) says which.

    Context mode: with ``budget_tokens`` set, the Documents are the spans of
    :meth:`hsc.Index.context` at that budget (``k`` does not apply): the hits,
    the rest of their definitions and the definitions they use, ``role`` and
    ``reason`` in each one's metadata.

    Regions: with ``regions=True`` the Documents are the query's ranked regions
    (:attr:`hsc.api.QueryResponse.regions`: files and top-level definitions),
    ``page_content`` their code; ``k`` sets how many (``region_count``); ``level="definition"``
    draws them from definitions alone, ``level="type"`` from types alone (a question about a class).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    mode: str | None = None  # None: the hierarchy's retrieval_mode parameter (hybrid by default)
    k: int | None = None
    repository_id: int | None = None
    hierarchy_id: int | None = None
    budget_tokens: int | None = Field(default=None, ge=1)  # set: context mode
    regions: bool = False  # True: the query's regions (files, definitions), not its leaves
    level: str = "any"  # with regions: "definition" lists definitions only, "type" types (hsc.search.regions)
    # Files of these roles only (comma-separated, hsc.chunk.roles; "all": every file); None: the
    # hierarchy's tool_roles (code), or every file of a repository without code.
    roles: str | None = None

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, mode: str | None) -> str | None:
        if mode is not None and mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}")
        return mode

    @field_validator("level")
    @classmethod
    def _known_level(cls, level: str) -> str:
        level_overrides(level)
        return level

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        overrides: dict[str, Any] = {} if self.k is None else {"leaf_level_top_k": self.k}
        if self.regions:
            overrides = level_overrides(self.level) | ({} if self.k is None else {"region_count": self.k})
        unnamed = self.hierarchy_id is None and self.repository_id is None
        if unnamed and self.budget_tokens is None and not self.regions and len(self.index.repositories()) > 1:
            # Every repository of the database answers, ranked together (hsc.search.across), each
            # searched as an agent's tool searches it.
            response = query_repositories(
                self.index,
                query,
                overrides=overrides,
                mode=self.mode,
                record=False,
                roles=self.roles,
                for_tools=True,
            )
            return [result_document(result, response.mode) for result in response.results]
        hierarchy_id = self.hierarchy_id or self.index.default_hierarchy(self.repository_id)
        repository_id = int(self.index.hierarchy(hierarchy_id)["repository_id"])
        roles = self.index.tool_roles(
            self.roles, repository_id, self.index.hierarchy_parameters(hierarchy_id)
        )
        if self.budget_tokens is not None:
            return pack_documents(
                self.index.context(
                    query,
                    self.budget_tokens,
                    self.mode,
                    repository_id=self.repository_id,
                    hierarchy_id=hierarchy_id,
                    roles=roles,
                )
            )
        response = self.index.query(
            query,
            hierarchy_id=hierarchy_id,
            params=self.index.hierarchy_parameters(hierarchy_id, **overrides),
            mode=self.mode,
            record=False,
            compare=False,
            regions=self.regions,
            roles=roles,
        )
        if self.regions:
            texts = region_texts(self.index, repository_id, response.regions)
            return [
                Document(
                    id=region_id(region),
                    page_content=text,
                    metadata=region_metadata(region, rank, response.mode),
                )
                for rank, (region, text) in enumerate(zip(response.regions, texts), start=1)
            ]
        return [result_document(result, response.mode) for result in response.results]


class HscLoader(BaseLoader):
    """Every node of a hierarchy (documents, groups, leaves) as Documents.

    ``page_content`` is a leaf's code, or a group's or file's summary (a short
    group's code when it needs none); the metadata carries ``node_id``, ``level``,
    path, lines, scope, language, ``parent_id`` and ``children`` (ids).
    """

    def __init__(self, index: Index, hierarchy_id: int | None = None, repository_id: int | None = None):
        self.index = index
        self.hierarchy_id = hierarchy_id
        self.repository_id = repository_id

    def lazy_load(self) -> Iterator[Document]:
        for row in self.index.export(self.hierarchy_id, self.repository_id):
            metadata = {key: value for key, value in row.items() if key not in ("id", "text")}
            yield Document(
                id=row["id"], page_content=row["text"], metadata={"node_id": row["id"], **metadata}
            )
