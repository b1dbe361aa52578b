"""Name evidence for regions: does a region's own name say what the question says?

A class question names its class in other words: "Base class for message headers" asks for
``BaseHeader``, "Path tied to a module spec" for ``SpecPath``. No leaf's vector carries that, and
BM25 over a class's whole text drowns its name among its methods' (hsc.search.region_terms). A
region's *own* name is the last name of a definition's scope (``email.headerregistry.BaseHeader``:
``BaseHeader``) or the module a file is (``email/headerregistry.py``: ``headerregistry``; a
package's ``__init__.py``: the package), split into its words at ``_`` and camelCase humps as the
lexical index splits identifiers (hsc.search.lexical). A name word is matched by a query word when
the two are equal once a plural ending is stripped, or when one of four letters or more begins the
other ("spec" and "specification"); common function words ("a", "for", "class") never count.

With ``region_names = evidence`` (the default) every listed region gains
:data:`hsc.search.regions.NAME_WEIGHT` times
the share of its name's words the query matches, the best-scored region of a name in a file only
(a Rust type and its ``impl`` blocks share one; hsc.search.regions.answer_regions): chosen with
``bench quality --regions`` on 909 class, 133 module and 2,620 function questions of thirteen
third-party packages and checked on the standard library (docs/hierarchy.md, "Name evidence").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from hsc.search.lexical import identifier_parts, terms
from hsc.search.region_table import FILE, RegionTable

# Words that say nothing of what a region is: a question's grammar, and what every class is.
_FUNCTION_WORDS = frozenset(
    ("a", "an", "the", "of", "for", "to", "and", "or", "in", "on", "by", "with", "that", "this")
    + ("is", "be", "from", "as", "which", "it", "its", "class", "object")
)
_PLURALS = ("ies", "es", "s")
_PREFIX = 4  # a word this long or longer matches a longer word it begins


def stem(word: str) -> str:
    """A word without its plural ending (``headers`` -> ``header``); short words are kept whole."""
    for ending in _PLURALS:
        if len(word) > len(ending) + 2 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def query_words(text: str) -> frozenset[str]:
    """The stemmed terms of a question, as the lexical index makes them (an identifier joined and
    split), function words left out."""
    return frozenset(stem(word) for word in terms(text) if word not in _FUNCTION_WORDS)


@lru_cache(maxsize=65_536)
def name_words(name: str) -> tuple[str, ...]:
    """The stemmed words of a region's own name, function words left out."""
    return tuple(stem(word) for word in identifier_parts(name) if word not in _FUNCTION_WORDS)


def _matches(name_word: str, words: frozenset[str]) -> bool:
    if name_word in words:
        return True
    return any(
        min(len(name_word), len(word)) >= _PREFIX
        and (word.startswith(name_word) or name_word.startswith(word))
        for word in words
    )


def name_share(name: str, words: frozenset[str]) -> float:
    """The share of ``name``'s words that one of the question's ``words`` matches (0 for a name
    with no word of its own)."""
    own = name_words(name)
    if not own:
        return 0.0
    return sum(_matches(word, words) for word in own) / len(own)


def own_name(regions: RegionTable, row: int) -> str:
    """A region's own name: a definition's last scope name, the module a file is."""
    if regions.levels[row] == FILE:
        from hsc.chunk.parse import module_name  # the chunker's name of a file, read where it is needed

        return module_name(regions.paths[row]).rsplit(".", 1)[-1]
    return regions.names[row].rsplit(".", 1)[-1]


def name_evidence(regions: RegionTable, text: str) -> Callable[[np.ndarray], np.ndarray]:
    """Region rows -> the share of each one's own name the question ``text`` matches."""
    words = query_words(text)

    def share(ids: np.ndarray) -> np.ndarray:
        if not words:
            return np.zeros(len(ids))
        return np.array([name_share(own_name(regions, int(row)), words) for row in ids], dtype=np.float64)

    return share
