"""One query over several repositories of one database: each repository's default hierarchy
answers it (its own parameters, its own encoder), and the results are ranked together by score,
each naming its repository (:attr:`~hsc.search.results.QueryResult.repository`).

Scores of different repositories are comparable when their vectors come from the same encoder
(cosine, and in the hybrid modes the same lexical weight); a repository indexed with another
encoder answers with its own, as it does alone.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from hsc.search.results import QueryResponse

if TYPE_CHECKING:
    from hsc.api import Index


def query_repositories(
    index: Index,
    text: str,
    repository_ids: list[int] | None = None,
    overrides: dict[str, Any] | None = None,
    mode: str | None = None,
    record: bool = True,
    join_pieces: bool = True,
    roles: str | None = None,
    for_tools: bool = False,
) -> QueryResponse:
    """The best results of every repository in ``repository_ids`` (default: all), ranked again
    together: as many as ``leaf_level_top_k`` says (in ``overrides``, query-stage values applied
    over each hierarchy's own; else the first hierarchy's). ``roles``: the files searched (as
    :meth:`hsc.api.Index.query` takes them); ``for_tools``: each repository's files as an agent's
    tool searches them (:meth:`hsc.api.Index.tool_roles`: code first)."""
    ids = repository_ids or [int(row["id"]) for row in index.repositories()]
    if not ids:
        raise ValueError("this database holds no repository yet; index one first")
    responses = []
    for repository_id in ids:
        hierarchy_id = index.default_hierarchy(repository_id)
        params = index.hierarchy_parameters(hierarchy_id, **(overrides or {}))
        searched = index.tool_roles(roles, repository_id, params) if for_tools else roles
        responses.append(
            index.query(
                text,
                hierarchy_id=hierarchy_id,
                params=params,
                roles=searched,
                mode=mode,
                record=record,
                compare=False,
                join_pieces=join_pieces,
                regions=False,  # the answer lists leaves; regions are one repository's
            )
        )
    first = index.default_hierarchy(ids[0])
    limit = index.hierarchy_parameters(first, **(overrides or {})).leaf_level_top_k
    merged = sorted((r for response in responses for r in response.results), key=lambda r: -r.score)
    results = [dataclasses.replace(r, rank=rank) for rank, r in enumerate(merged[:limit], start=1)]
    return QueryResponse(
        query=text,
        mode=", ".join(dict.fromkeys(response.mode for response in responses)),
        results=results,
        groups=[],
        flat=[],
        leaves_compared=sum(response.leaves_compared for response in responses),
        flat_leaves_compared=sum(response.flat_leaves_compared for response in responses),
        elapsed_ms=sum(response.elapsed_ms for response in responses),
        embedding_ms=sum(response.embedding_ms for response in responses),
    )
