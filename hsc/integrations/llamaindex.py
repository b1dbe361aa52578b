"""hsc in LlamaIndex (``pip install 'hsc[llamaindex]'``).

- :class:`HscNodeParser`: Documents (one per source file) -> ``TextNode``s for
  leaves, groups and files, linked PARENT/CHILD, with PREVIOUS/NEXT between
  neighbouring leaves of a file, so LlamaIndex's ``AutoMergingRetriever``
  merges hits into hsc's topic groups, then whole files. It runs hsc's stages in
  memory (parse, embed, segment); a group's text is its code (no summaries).
- :func:`hierarchy_nodes`: a stored hierarchy of an :class:`hsc.Index` as the
  same kind of nodes, with hsc's ids (``leaf:N``, ``mid:N``, ``top:N``).
- :class:`HscRetriever`: a ``BaseRetriever`` over an ``Index`` (any retrieval
  mode) whose nodes carry those ids, so it can be the base retriever of an
  ``AutoMergingRetriever`` over :func:`hierarchy_nodes` in a docstore. With
  ``budget_tokens`` set, it returns the query's context pack instead: one node
  per span, with its role and the reason it is there.
- :class:`HscEmbedding`: hsc's embedding model as a LlamaIndex embedding.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import NodeParser
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import (
    BaseNode,
    Document,
    NodeRelationship,
    NodeWithScore,
    ObjectType,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from hsc.api import Index, NodeView, QueryResponse
from hsc.chunk.ingest import detect_language
from hsc.chunk.parse import module_name, parse_source
from hsc.chunk.tokens import get_counter
from hsc.embed import Embedder, SentenceTransformerEmbedder
from hsc.hierarchy.groups import LeafTable, plan_hierarchy
from hsc.integrations.packs import region_id, region_metadata, region_texts, span_id, span_metadata
from hsc.model import common_scope
from hsc.params import RETRIEVAL_MODES, Parameters, Settings
from hsc.search.across import query_repositories
from hsc.search.context import ContextPack
from hsc.search.regions import level_overrides

# Shown to neither the embedding model nor the LLM: ids and long summaries.
_HIDDEN_KEYS = ["level", "node_type", "summary", "language"]
# A context span shows the LLM where it is from, its role and why it is there; not the bookkeeping.
_HIDDEN_SPAN_KEYS = ["tokens", "leaf_ids", "score", "mode", "budget"]


def _node(node_id: str, text: str, metadata: dict[str, Any], **fields: Any) -> TextNode:
    return TextNode(
        id_=node_id,
        text=text,
        metadata=metadata,
        excluded_embed_metadata_keys=_HIDDEN_KEYS,
        excluded_llm_metadata_keys=_HIDDEN_KEYS,
        **fields,
    )


def _link(parent: TextNode, children: Sequence[TextNode]) -> None:
    parent.relationships[NodeRelationship.CHILD] = [c.as_related_node_info() for c in children]
    for child in children:
        child.relationships[NodeRelationship.PARENT] = parent.as_related_node_info()


def _chain(leaves: Sequence[TextNode]) -> None:
    """PREVIOUS/NEXT between neighbouring leaves (of one file)."""
    for before, after in zip(leaves, leaves[1:]):
        before.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(
            node_id=after.id_, node_type=ObjectType.TEXT
        )
        after.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(
            node_id=before.id_, node_type=ObjectType.TEXT
        )


def _metadata(level: str, path: str, start: int, end: int, scope: str, language: str, **more: Any) -> dict:
    return {
        "level": level,
        "path": path,
        "start_line": start,  # 1-based, inclusive
        "end_line": end,
        "scope": scope,
        "language": language,
        **{k: v for k, v in more.items() if v is not None},
    }


class HscNodeParser(NodeParser):
    """Cut source files into hsc's hierarchy. Each Document is one file: its
    ``file_path`` metadata (relative to ``root`` when given; else ``file_name``)
    names the language and the scopes."""

    parameters: Parameters = Field(default_factory=Parameters)
    settings: Settings = Field(default_factory=Settings)
    root: str | None = Field(default=None, description="Folder the documents' file_path is relative to")
    include_prev_next_rel: bool = Field(default=False, description="PREVIOUS/NEXT are set between leaves")
    _embedder: Embedder | None = PrivateAttr(default=None)

    def __init__(self, embedder: Embedder | None = None, **data: Any) -> None:
        super().__init__(**data)
        self._embedder = embedder

    def _rel_path(self, document: BaseNode) -> str:
        path = str(document.metadata.get("file_path") or document.metadata.get("file_name") or document.id_)
        if self.root and Path(path).is_absolute():
            path = str(Path(path).relative_to(Path(self.root).resolve()))
        return Path(path).as_posix()

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> list:
        counter = get_counter(self.settings.tokenizer)
        files = []
        for document in nodes:
            rel_path = self._rel_path(document)
            text = document.get_content()
            leaves, _ = parse_source(text, rel_path, detect_language(rel_path), self.parameters, counter)
            if leaves:
                files.append((document, rel_path, text, leaves))
        leaves = [leaf for *_, file_leaves in files for leaf in file_leaves]
        if not leaves:
            return []
        if self._embedder is None:
            self._embedder = SentenceTransformerEmbedder(self.settings.embedding_model)
        vectors = self._embedder.embed(
            [leaf.embedding_text for leaf in leaves], self.parameters.embedding_batch_size
        )
        table = LeafTable(
            leaf_ids=np.arange(len(leaves), dtype=np.int64),
            file_index=np.repeat(np.arange(len(files), dtype=np.int32), [len(f[3]) for f in files]),
            paths=[rel_path for _, rel_path, _, _ in files],
            scopes=[leaf.scope for leaf in leaves],
            start_lines=np.array([leaf.start_line for leaf in leaves], dtype=np.int32),
            end_lines=np.array([leaf.end_line for leaf in leaves], dtype=np.int32),
            token_counts=np.array([leaf.token_count for leaf in leaves], dtype=np.int32),
            vectors=vectors,
        )
        plan = plan_hierarchy(table, self.parameters)
        out: list[BaseNode] = []
        for file in plan.documents():
            out += self._file_nodes(plan, file, files[file.file_index], leaves)
        return out

    def _file_nodes(self, plan: Any, file: Any, parsed: tuple, leaves: list) -> list[TextNode]:
        document, rel_path, text, _ = parsed
        data = text.encode("utf-8")

        def chars(start_byte: int, end_byte: int) -> tuple[int, int]:
            start = len(data[:start_byte].decode("utf-8", "replace"))
            return start, start + len(data[start_byte:end_byte].decode("utf-8", "replace"))

        source = document.as_related_node_info()
        language = leaves[file.leaf_start].language
        top = _node(
            f"{document.id_}:top",
            text,
            _metadata("top", rel_path, file.start_line, file.end_line, module_name(rel_path), language),
            start_char_idx=0,
            end_char_idx=len(text),
        )
        groups, leaf_nodes = [], []
        for ordinal in range(file.group_start, file.group_end):
            group = plan.group(ordinal)
            members = leaves[group.leaf_start : group.leaf_end]
            start, end = chars(members[0].start_byte, max(m.end_byte for m in members))
            scope = common_scope([leaf.scope for leaf in members])
            mid = _node(
                f"{document.id_}:mid:{ordinal}",
                text[start:end],
                _metadata("mid", rel_path, group.start_line, group.end_line, scope, language),
                start_char_idx=start,
                end_char_idx=end,
            )
            children = []
            for row, leaf in enumerate(members, start=group.leaf_start):
                start, end = chars(leaf.start_byte, leaf.end_byte)
                meta = _metadata("leaf", rel_path, leaf.start_line, leaf.end_line, leaf.scope, leaf.language)
                node = _node(
                    f"{document.id_}:leaf:{row}", leaf.text, meta, start_char_idx=start, end_char_idx=end
                )
                children.append(node)
            _link(mid, children)
            groups.append(mid)
            leaf_nodes += children
        _link(top, groups)
        _chain(leaf_nodes)
        every = [top, *groups, *leaf_nodes]
        for node in every:
            node.relationships[NodeRelationship.SOURCE] = source
        return every

    def _postprocess_parsed_nodes(self, nodes: list, parent_doc_map: dict[str, Document]) -> list:
        # The base class finds each node's text in its document by search, which
        # mislocates nested levels; _file_nodes has set offsets, sources and links.
        return nodes


def _view_node(view: NodeView, text: str) -> TextNode:
    meta = _metadata(
        view.level, view.path, view.start_line, view.end_line, view.scope, view.language, summary=view.summary
    )
    return _node(view.id, text, meta)


def hierarchy_nodes(index: Index, hierarchy_id: int | None = None, repository_id: int | None = None) -> list:
    """Every node of a stored hierarchy, linked as :class:`HscNodeParser` links
    them, with hsc's ids. A group's or file's text is its leaves' code."""
    if hierarchy_id is None:
        hierarchy_id = index.default_hierarchy(repository_id)
    nodes: list[TextNode] = []
    groups_of: dict[str | None, list[TextNode]] = {}
    leaves_of: dict[str, list[TextNode]] = {}
    for group in index.groups(hierarchy_id, with_text=True):
        mid = _view_node(group, group.text)
        leaves = [_view_node(leaf, leaf.text) for leaf in map(index.node, group.children)]
        _link(mid, leaves)
        groups_of.setdefault(group.parent_id, []).append(mid)
        leaves_of[mid.id_] = leaves
        nodes += [mid, *leaves]
    for document in index.documents(hierarchy_id):
        groups = groups_of.get(document.id, [])
        top = _view_node(document, "\n\n".join(g.text for g in groups))
        _link(top, groups)
        _chain([leaf for group in groups for leaf in leaves_of[group.id_]])
        nodes.append(top)
    return nodes


def pack_nodes(pack: ContextPack) -> list[NodeWithScore]:
    """A context pack's spans in its order (reading order per file), each a
    ``TextNode`` of the span's lines; the score is a hit's, None for the rest."""
    return [
        NodeWithScore(
            node=TextNode(
                id_=span_id(span),
                text=span.text,
                metadata=span_metadata(span, pack),
                excluded_embed_metadata_keys=_HIDDEN_SPAN_KEYS,
                excluded_llm_metadata_keys=_HIDDEN_SPAN_KEYS,
            ),
            score=span.score,
        )
        for span in pack.spans
    ]


class HscRetriever(BaseRetriever):
    """hsc's retrieval as a LlamaIndex retriever: ``NodeWithScore`` per leaf,
    whose node has hsc's id and its parent group as PARENT. ``mode`` is one of
    :data:`hsc.search.two_stage.RETRIEVAL_MODES` (default: the hierarchy's
    ``retrieval_mode`` parameter).

    Context mode: with ``budget_tokens`` set, the nodes are the spans of
    :meth:`hsc.Index.context` at that budget (``k`` does not apply), ids
    ``path:start-end``, ``role`` and ``reason`` in each one's metadata.

    Regions: with ``regions=True`` the nodes are the query's ranked regions (files and
    top-level definitions; :attr:`hsc.api.QueryResponse.regions`), their code as text, ids
    ``level:path:start-end``; ``k`` sets how many; ``level="definition"`` draws them from
    definitions alone, ``level="type"`` from types alone (a question about a class).

    ``roles``: files of these roles only (comma-separated, :mod:`hsc.chunk.roles`; "all": every
    file); None: the hierarchy's ``tool_roles`` (code), or every file of a repository without code."""

    def __init__(
        self,
        index: Index,
        mode: str | None = None,
        k: int | None = None,
        repository_id: int | None = None,
        hierarchy_id: int | None = None,
        budget_tokens: int | None = None,
        regions: bool = False,
        roles: str | None = None,
        level: str = "any",
        **kwargs: Any,
    ) -> None:
        if mode is not None and mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}")
        if budget_tokens is not None and budget_tokens < 1:
            raise ValueError(f"budget_tokens must be at least 1, not {budget_tokens}")
        levels = level_overrides(level)
        super().__init__(**kwargs)
        self.index, self.mode, self.k, self.levels = index, mode, k, levels
        self.repository_id, self.hierarchy_id = repository_id, hierarchy_id
        self.budget_tokens, self.regions, self.roles = budget_tokens, regions, roles

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        text = query_bundle.query_str
        overrides = {} if self.k is None else {"region_count" if self.regions else "leaf_level_top_k": self.k}
        if self.regions:
            overrides |= self.levels
        unnamed = self.hierarchy_id is None and self.repository_id is None
        if unnamed and self.budget_tokens is None and not self.regions and len(self.index.repositories()) > 1:
            # Every repository of the database answers, ranked together (hsc.search.across), each
            # searched as an agent's tool searches it.
            response = query_repositories(
                self.index,
                text,
                overrides=overrides,
                mode=self.mode,
                record=False,
                roles=self.roles,
                for_tools=True,
            )
            return _leaf_hits(response)
        hierarchy_id = self.hierarchy_id or self.index.default_hierarchy(self.repository_id)
        repository_id = int(self.index.hierarchy(hierarchy_id)["repository_id"])
        roles = self.index.tool_roles(
            self.roles, repository_id, self.index.hierarchy_parameters(hierarchy_id)
        )
        if self.budget_tokens is not None:
            return pack_nodes(
                self.index.context(
                    text,
                    self.budget_tokens,
                    self.mode,
                    repository_id=self.repository_id,
                    hierarchy_id=hierarchy_id,
                    roles=roles,
                )
            )
        response = self.index.query(
            text,
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
                NodeWithScore(
                    node=_node(region_id(region), text, region_metadata(region, rank, response.mode)),
                    score=region.score,
                )
                for rank, (region, text) in enumerate(zip(response.regions, texts), start=1)
            ]
        return _leaf_hits(response)


def _leaf_hits(response: QueryResponse) -> list[NodeWithScore]:
    """A query's leaves as nodes, each with its parent group as PARENT."""
    hits = []
    for result in response.results:
        meta = _metadata(
            "leaf",
            result.path,
            result.start_line,
            result.end_line,
            result.scope,
            result.language,
            repository=result.repository or None,
        )
        node = _node(result.leaf_id, result.text, meta)
        if result.parent_id:
            node.relationships[NodeRelationship.PARENT] = RelatedNodeInfo(
                node_id=result.parent_id, node_type=ObjectType.TEXT
            )
        hits.append(NodeWithScore(node=node, score=result.score))
    return hits


class HscEmbedding(BaseEmbedding):
    """hsc's embedding model (all-MiniLM-L6-v2 from site-packages by default) for LlamaIndex."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder | None = None, **data: Any) -> None:
        embedder = embedder or SentenceTransformerEmbedder(Settings().embedding_model)
        super().__init__(model_name=data.pop("model_name", embedder.name), **data)
        self._embedder = embedder

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts).tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)
