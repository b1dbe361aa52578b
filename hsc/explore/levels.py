"""Which level answers a question: a class question and a function question, asked in the words
of the code's own doc comments, and where their answers land (the first region's level, and the
first leaf). The Walkthrough follows both; everything it says comes from the run's own results.

Pure functions of stored definitions and a :class:`~hsc.search.results.QueryResponse`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hsc.model import Definition
from hsc.search.region_table import Region
from hsc.search.results import QueryResponse, QueryResult

# Definitions that hold others (the containers of the structural hierarchy), and callables.
CONTAINER_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "impl", "enum", "object", "module", "namespace", "protocol"}
)
CALLABLE_KINDS = ("function", "method")


@dataclass(frozen=True)
class LevelQuestion:
    """A question asked of one definition: its doc sentence, and where the definition is."""

    kind: str  # "class" or "function": the kind of question
    text: str
    path: str
    definition: Definition


@dataclass(frozen=True)
class LevelAnswer:
    """Where a question's answer landed."""

    question: LevelQuestion
    region: Region | None  # the region answer's first entry
    leaf: QueryResult | None  # stage 2's first leaf
    region_is_asked: bool  # the first region is the definition asked about (or its file, for a file)
    leaf_inside_asked: bool  # the first leaf lies inside the definition asked about


def _span(definition: Definition) -> int:
    return definition.end_line - definition.start_line


def _pick(candidates: list[tuple[str, Definition]], prefer: str) -> tuple[str, Definition] | None:
    """The longest documented candidate, those of the file ``prefer`` first, functions before
    methods."""
    if not candidates:
        return None
    return max(
        candidates,
        key=lambda pair: (pair[0] == prefer, pair[1].kind == "function", _span(pair[1]), pair[1].scope),
    )


def level_questions(definitions: dict[str, list[Definition]], prefer: str = "") -> list[LevelQuestion]:
    """A class question (the longest documented container) and a function question (the longest
    documented function, else method), taken from the file ``prefer`` where it has one, else from
    the whole repository; each asks in the words of the definition's doc sentence."""
    documented = [(path, d) for path, found in definitions.items() for d in found if d.doc.strip()]
    questions = []
    for kind, kinds in (("class", CONTAINER_KINDS), ("function", CALLABLE_KINDS)):
        picked = _pick([(p, d) for p, d in documented if d.kind in kinds], prefer)
        if picked:
            questions.append(LevelQuestion(kind, picked[1].doc.strip(), *picked))
    return questions


def _overlaps(start: int | None, end: int | None, definition: Definition) -> bool:
    if start is None or end is None:
        return False
    return start <= definition.end_line and definition.start_line <= end


def level_answer(question: LevelQuestion, response: QueryResponse) -> LevelAnswer:
    """Where ``response`` (the question asked) put its first region and its first leaf."""
    asked = question.definition
    region = response.regions[0] if response.regions else None
    leaf = response.results[0] if response.results else None
    region_is_asked = (
        region is not None
        and region.path == question.path
        and (
            region.level == "file"
            if asked.kind == "file"
            else region.start_line == asked.start_line and region.end_line == asked.end_line
        )
    )
    leaf_inside = (
        leaf is not None
        and leaf.path == question.path
        and asked.start_line <= leaf.start_line
        and leaf.end_line <= asked.end_line
    )
    return LevelAnswer(question, region, leaf, region_is_asked, leaf_inside)


def _where(path: str, start: int | None, end: int | None) -> str:
    return path if start is None else f"{path} L{start}–{end}"


def level_sentence(answer: LevelAnswer) -> str:
    """What answered the question, level by level, and whether it is the definition asked about."""
    asked = answer.question.definition
    name = f"{asked.kind} {asked.scope.rsplit('.', 1)[-1]}"
    parts = [f"Asked of {name} ({_where(answer.question.path, asked.start_line, asked.end_line)})."]
    region = answer.region
    if region is None:
        parts.append("No region answered.")
    else:
        verdict = "the definition asked about" if answer.region_is_asked else "not the definition asked about"
        if not answer.region_is_asked and _overlaps(region.start_line, region.end_line, asked):
            verdict += ", but it overlaps it"
        parts.append(
            f"The region answer's first entry is at the {region.level} level: {region.name} "
            f"({_where(region.path, region.start_line, region.end_line)}), {verdict}."
        )
    leaf = answer.leaf
    if leaf is None:
        parts.append("No leaf answered.")
    else:
        inside = (
            "inside"
            if answer.leaf_inside_asked
            else "partly inside"
            if leaf.path == answer.question.path and _overlaps(leaf.start_line, leaf.end_line, asked)
            else "outside"
        )
        parts.append(
            f"The first leaf is {leaf.scope} ({_where(leaf.path, leaf.start_line, leaf.end_line)}), "
            f"{inside} {name}."
        )
    return " ".join(parts)


def levels_summary(answers: Sequence[LevelAnswer]) -> str:
    """One line: which level answered each question, and whether with the definition asked about."""

    def one(answer: LevelAnswer) -> str:
        if answer.region is None:
            return f"no region answered the {answer.question.kind} question"
        region = answer.region
        which = "the definition asked about" if answer.region_is_asked else f"{region.name}, another region"
        return f"the {answer.question.kind} question was answered at the {region.level} level ({which})"

    return "; ".join(one(answer) for answer in answers)
