"""Is a question about a module as a whole? The signal the context pack reads before it keeps room
for a file's outline (hsc.params ``context_module_rule``, ``context_module_margin``).

Pure: it reads the pack's ranked hits and, for the rules that need them, the file ranking and the
region list the query already made (hsc.search.regions; the pack never ranks files itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hsc.params import CONTEXT_MODULE_RULES

# The rules, as hsc.params lists them (the shipped one first).
MODULE_RULES = CONTEXT_MODULE_RULES
# "top-hits": a question is about a module when this many of its top MODULE_TOP hits lie in the
# best hit's file.
MODULE_HITS = 3
MODULE_TOP = 5


class Located(Protocol):
    """What the rules read of a hit, a ranked file or a region (hsc.search.region_table.Region)."""

    @property
    def path(self) -> str: ...


class Ranked(Located, Protocol):
    @property
    def score(self) -> float: ...


class Leveled(Ranked, Protocol):
    @property
    def level(self) -> str: ...


@dataclass(frozen=True)
class ModuleQuestion:
    """The file a question asks about as a whole, and why the rule says so (the outline's reason)."""

    path: str
    why: str


def top_hits_rule(hits: Sequence[Located]) -> ModuleQuestion | None:
    """MODULE_HITS of the top MODULE_TOP hits in the best hit's file."""
    if not hits:
        return None
    path = hits[0].path
    held = sum(1 for hit in hits[:MODULE_TOP] if hit.path == path)
    if held < MODULE_HITS:
        return None
    return ModuleQuestion(path, f"{held} of the top {len(hits[:MODULE_TOP])} hits in it")


def file_margin(files: Sequence[Ranked]) -> float:
    """How far the file ranking's best file scores above the second (0 with fewer than two)."""
    return float(files[0].score - files[1].score) if len(files) >= 2 else 0.0


def file_margin_rule(files: Sequence[Ranked], margin: float) -> ModuleQuestion | None:
    """The file ranking's best file, when it scores at least ``margin`` above the second."""
    if len(files) < 2 or file_margin(files) < margin:
        return None
    return ModuleQuestion(files[0].path, f"the best-ranked file by {file_margin(files):.3f} over the next")


def file_lead(regions: Sequence[Leveled]) -> float:
    """How far the region list's best file scores above its best definition (the list is best
    first): 1 when it lists no definition, -1 when it lists no file."""
    file = next((r.score for r in regions if r.level == "file"), None)
    definition = next((r.score for r in regions if r.level != "file"), None)
    if file is None:
        return -1.0
    return 1.0 if definition is None else float(file - definition)


def region_first_rule(regions: Sequence[Leveled], margin: float) -> ModuleQuestion | None:
    """The region list's best file, when it outranks every definition by at least ``margin``."""
    lead = file_lead(regions)
    if lead < margin or lead == -1.0:
        return None
    path = next(r.path for r in regions if r.level == "file")
    return ModuleQuestion(path, f"its file outranks every definition by {lead:.3f}")


def file_over_leaf(hits: Sequence[Ranked], files: Sequence[Ranked]) -> float | None:
    """How far the file ranking's best file scores above its own best hit (the hits' scores are the
    ones the file ranking drew on); None without a ranked file or a hit in it. A file scores
    ``file_best_share`` x its best leaf's score + the rest x its pooled vector's cosine, so this is
    the rest x (pooled cosine - best leaf's score): above 0 when the file as a whole fits better."""
    if not files:
        return None
    best = max((hit.score for hit in hits if hit.path == files[0].path), default=None)
    return None if best is None else float(files[0].score - best)


def file_over_leaf_rule(
    hits: Sequence[Ranked], files: Sequence[Ranked], margin: float
) -> ModuleQuestion | None:
    """The file ranking's best file, when it scores at least ``margin`` above its own best hit."""
    lead = file_over_leaf(hits, files)
    if lead is None or lead < margin:
        return None
    return ModuleQuestion(files[0].path, f"the best-ranked file scores {lead:+.3f} over its best hit")


def module_question(
    hits: Sequence[Ranked],
    rule: str = "top-hits",
    files: Sequence[Ranked] = (),
    regions: Sequence[Leveled] = (),
    margin: float = 0.0,
) -> ModuleQuestion | None:
    """The file the question asks about as a whole under ``rule`` (one of MODULE_RULES), or None.
    ``files`` and ``regions``: the query's file ranking and region list, best first."""
    if rule == "top-hits":
        return top_hits_rule(hits)
    if rule == "file-margin":
        return file_margin_rule(files, margin)
    if rule == "region-first":
        return region_first_rule(regions, margin)
    if rule == "file-over-leaf":
        return file_over_leaf_rule(hits, files, margin)
    raise ValueError(f"unknown module rule {rule!r}; choose one of {', '.join(MODULE_RULES)}")


def needs_ranking(rule: str) -> bool:
    """Whether ``rule`` reads the query's file ranking or region list (the query must rank them)."""
    return rule != "top-hits"
