"""MkDocs hook: the reference pages' tables, written from hsc.params and hsc's parser at build time."""

from __future__ import annotations

from typing import Any

from hsc.reference import expand


def on_page_markdown(markdown: str, **_: Any) -> str:
    return expand(markdown)
