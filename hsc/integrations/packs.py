"""A context pack's spans, and a query's regions, as the integrations hand them out: one id,
one text and one metadata dict each, the same for LangChain Documents and LlamaIndex nodes."""

from __future__ import annotations

from typing import Any

from hsc.search.context import ContextPack, ContextSpan
from hsc.search.contexts import lines_of_leaves
from hsc.search.region_table import Region


def span_id(span: ContextSpan) -> str:
    """``path:start-end``: no two spans of a pack share a line, so this names one."""
    return f"{span.path}:{span.start_line}-{span.end_line}"


def span_metadata(span: ContextSpan, pack: ContextPack) -> dict[str, Any]:
    """The span's ``--json`` fields (path, 1-based inclusive lines, role, tokens,
    leaf_ids, score, reason) and the pack's mode and budget; its text is the content."""
    fields = {key: value for key, value in span.to_json().items() if key != "text"}
    return {**fields, "mode": pack.mode, "budget": pack.budget}


def region_id(region: Region) -> str:
    """``level:path:start-end`` (a folder: ``folder:path``): names one region of a query."""
    lines = "" if region.start_line is None else f":{region.start_line}-{region.end_line}"
    return f"{region.level}:{region.path}{lines}"


def region_metadata(region: Region, rank: int, mode: str) -> dict[str, Any]:
    """The region's ``--regions`` fields (level, path, 1-based inclusive lines, name, score), its rank
    and the query's mode."""
    return {**region.to_json(), "score": region.score, "rank": rank, "mode": mode}


def region_texts(index: Any, repository_id: int, regions: list[Region]) -> list[str]:
    """Each region's code: its lines as its file's stored leaves hold them (a class whose first
    lines share a leaf with the code above it keeps them; a folder: the paths of its files that
    the index holds)."""
    paths = sorted({r.path for r in regions if r.start_line is not None})
    lines = {
        path: lines_of_leaves(leaves)
        for path, leaves in index.store.files_leaf_texts(repository_id, paths).items()
    }
    files = [f["path"] for f in index.files(repository_id)]
    out = []
    for region in regions:
        if region.start_line is None or region.end_line is None:
            out.append("\n".join(p for p in files if p.startswith(region.path.rstrip("/") + "/")))
            continue
        out.append("\n".join(lines.get(region.path, [])[region.start_line - 1 : region.end_line]))
    return out
