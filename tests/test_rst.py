"""reStructuredText read by its own reader: sections at titles, a code example's ``#`` comment no
heading, a paragraph kept with the indented block it introduces."""

from __future__ import annotations

from hsc.chunk.ingest import detect_language
from hsc.chunk.parse import cut_file
from hsc.chunk.prose import ProseCutter
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings

PAGE = """=============
Configuration
=============

The application reads its settings from a mapping on the app object.

Sessions
--------

A session cookie is signed with the secret key, so a client can read it but not change it.
Set the key before the first request::

    app = make_app()
    # the key: never commit it
    app.secret_key = load_secret()

Rotate the key now and then.

Logging
~~~~~~~

.. code-block:: python
   :caption: a handler

   import logging

   logging.basicConfig(level=logging.INFO)

Messages go to standard error unless a handler is set.
"""


def _cut(source: str, maximum: int) -> list[tuple[int, int, str]]:
    params = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=maximum)
    cut = cut_file(source, "docs/config.rst", "rst", params, get_counter(Settings().tokenizer))
    return [(leaf.start_line, leaf.end_line, leaf.text) for leaf in cut.leaves]


def test_rst_files_have_their_own_language() -> None:
    assert detect_language("docs/config.rst") == "rst"
    assert detect_language("README.md") == "markdown"


def test_a_section_per_title_and_a_comment_in_an_example_is_no_heading() -> None:
    leaves = _cut(PAGE, 256)
    firsts = [text.splitlines()[0] for _, _, text in leaves]
    assert firsts == ["=============", "Sessions", "Logging"]
    sessions = leaves[1][2]
    assert "# the key: never commit it" in sessions and "Rotate the key" in sessions


def test_a_paragraph_keeps_the_block_it_introduces() -> None:
    leaves = _cut(PAGE, 60)  # too small for a section: its paragraphs
    texts = [text for _, _, text in leaves]
    introduces = next(text for text in texts if text.rstrip().endswith("load_secret()"))
    assert introduces.startswith("A session cookie is signed") and "app = make_app()" in introduces
    # The paragraphs themselves, as a section too large for the maximum is cut into them.
    data = PAGE.encode()
    cutter = ProseCutter(data, Parameters(), get_counter(Settings().tokenizer))
    paragraphs = [data[lo:hi].decode().strip() for lo, hi in cutter.rst_paragraphs(0, len(data))]
    directive = next(text for text in paragraphs if text.startswith(".. code-block:: python"))
    assert directive.endswith("logging.basicConfig(level=logging.INFO)")
    assert "Messages go to standard error unless a handler is set." in paragraphs
    literal = next(text for text in paragraphs if text.startswith("A session cookie"))
    assert literal.endswith("app.secret_key = load_secret()")
    lines = [(start, end) for start, end, _ in leaves]
    assert all(a[1] < b[0] for a, b in zip(lines, lines[1:]))  # in order, never overlapping
