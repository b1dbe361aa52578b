"""The Walkthrough's step 7: a class question and a function question, asked in the words of the
code's doc comments, and which level answered each (:mod:`hsc.explore.levels`). The questions come
from the followed file where it has such definitions, and every sentence from the run's results."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hsc import Index
from hsc.app.ui.context import database_path, index_lock
from hsc.app.ui.text import line_range, md
from hsc.explore.levels import (
    LevelAnswer,
    LevelQuestion,
    level_answer,
    level_questions,
    level_sentence,
    levels_summary,
)
from hsc.search.results import QueryResponse


@st.cache_resource(max_entries=32, show_spinner="Asking the class and the function question…")
def _ask(_index: Index, database: str, hierarchy_id: int, stamp: str, text: str) -> QueryResponse:
    return _index.query(text, hierarchy_id=hierarchy_id, record=False)


# Reading every definition of a large repository costs more than the page's other work, and they
# change only with the index: kept per stamp, as the answers are.
@st.cache_resource(max_entries=32, show_spinner=False)
def _questions(_index: Index, database: str, hierarchy_id: int, stamp: str, path: str) -> list[LevelQuestion]:
    with index_lock():
        repository_id = int(_index.hierarchy(hierarchy_id)["repository_id"])
        definitions = _index.store.definitions(repository_id)
    return level_questions(definitions, path)


def level_answers(index: Index, hierarchy_id: int, stamp: str, path: str) -> list[LevelAnswer]:
    """The two questions of ``path`` (else of the repository) and where their answers landed."""
    database = str(database_path())
    return [
        level_answer(question, _ask(index, database, hierarchy_id, stamp, question.text))
        for question in _questions(index, database, hierarchy_id, stamp, path)
    ]


def where(name: str, start: int | None, end: int | None) -> str:
    return name if start is None or end is None else f"{name} {line_range(start, end)}"


def stage_levels(index: Index, hierarchy_id: int, stamp: str, path: str) -> None:
    st.subheader("7 · Which level answers")
    st.caption(
        "Besides leaves, a query ranks regions: folders, files, top-level definitions and groups. "
        "Here the file's longest documented class and its longest documented function are each asked "
        "in the words of their own doc sentence, in the shipped mode; below is where each answer landed."
    )
    answers = level_answers(index, hierarchy_id, stamp, path)
    if not answers:
        st.info("No documented class or function in this repository to ask about.")
        return
    for answer in answers:
        st.markdown(f"**The {answer.question.kind} question:** “{md(answer.question.text)}”")
        st.caption(md(level_sentence(answer)))
    st.dataframe(
        pd.DataFrame(
            {
                "question": [a.question.kind for a in answers],
                "asked of": [a.question.definition.scope for a in answers],
                "first region level": [a.region.level if a.region else "" for a in answers],
                "first region": [
                    where(a.region.name, a.region.start_line, a.region.end_line) if a.region else ""
                    for a in answers
                ],
                "first leaf": [
                    where(a.leaf.scope, a.leaf.start_line, a.leaf.end_line) if a.leaf else "" for a in answers
                ],
            }
        ),
        hide_index=True,
        key="walk:levels",
    )
    summary = levels_summary(answers)
    st.success(md(summary[:1].upper() + summary[1:] + "."))
