"""What a summariser is asked and what it answers: the interface between the
hierarchy, which needs a summary for a group or document over
``maximum_merged_chunk_token_length``, and the summarisers that write one."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Protocol

from hsc.model import Definition, LeafFacts

SUMMARY_KINDS = ("group", "document")


@dataclass(frozen=True)
class SummaryRequest:
    """Everything a summariser may look at to summarise one group or document."""

    kind: str  # "group" or "document"
    path: str  # file path relative to the repository root
    language: str
    scope: str  # the group's or document's scope, e.g. "inventory.pricing"
    texts: list[str]  # the code of the leaves, in document order
    scopes: list[str]  # the scope of each leaf, parallel to texts
    token_budget: int  # the summary must stay within this many tokens
    # What the syntax tree says about the text (hsc.chunk.facts): the definitions that start in it, in
    # line order, and each leaf's imports, defined and used names (parallel to texts, or empty).
    definitions: tuple[Definition, ...] = ()
    facts: tuple[LeafFacts, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in SUMMARY_KINDS:
            raise ValueError(f"kind must be one of {', '.join(SUMMARY_KINDS)}, got {self.kind!r}")
        if len(self.texts) != len(self.scopes):
            raise ValueError(f"texts and scopes differ in length ({len(self.texts)} vs {len(self.scopes)})")
        if self.facts and len(self.facts) != len(self.texts):
            raise ValueError(f"texts and facts differ in length ({len(self.texts)} vs {len(self.facts)})")

    def content_hash(self) -> str:
        """Stable identity of everything the summary depends on.

        Language and scope are included besides kind, path, texts, scopes and
        budget because both appear in the digest and in the Ollama prompt; the
        facts because the digest is composed from them.
        JSON keeps field boundaries unambiguous (``["ab", "c"]`` differs from
        ``["a", "bc"]``), and the version prefix lets the format change later.
        """
        payload = json.dumps(
            [
                "summary-request-v2",
                self.kind,
                self.path,
                self.language,
                self.scope,
                list(self.texts),
                list(self.scopes),
                self.token_budget,
                [dataclasses.astuple(definition) for definition in self.definitions],
                [dataclasses.astuple(facts) for facts in self.facts],
            ],
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Summary:
    """A finished summary and what actually produced it.

    ``summariser`` and ``model`` name who wrote ``text``: when Ollama fails and
    the digest stands in, they say "digest", so a cache keyed on them never
    files a digest under the Ollama model.
    """

    text: str
    summariser: str  # "digest" or "ollama"
    model: str  # "digest-v1" or the Ollama model name
    note: str = ""  # why this summariser was used instead of the configured one, if it was


class Summarizer(Protocol):
    name: str
    model: str

    def summarise(self, request: SummaryRequest) -> Summary: ...
