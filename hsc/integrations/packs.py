"""A context pack's spans as the integrations hand them out: one id and one
metadata dict per span, the same for LangChain Documents and LlamaIndex nodes."""

from __future__ import annotations

from typing import Any

from hsc.search.context import ContextPack, ContextSpan


def span_id(span: ContextSpan) -> str:
    """``path:start-end``: no two spans of a pack share a line, so this names one."""
    return f"{span.path}:{span.start_line}-{span.end_line}"


def span_metadata(span: ContextSpan, pack: ContextPack) -> dict[str, Any]:
    """The span's ``--json`` fields (path, 1-based inclusive lines, role, tokens,
    leaf_ids, score, reason) and the pack's mode and budget; its text is the content."""
    fields = {key: value for key, value in span.to_json().items() if key != "text"}
    return {**fields, "mode": pack.mode, "budget": pack.budget}
