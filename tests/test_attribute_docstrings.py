"""A Python string right after an assignment (its PEP 257 attribute docstring) stays in the
assignment's leaf (attribute_docstrings='joined'); 'seed' keeps the seed's cut."""

from __future__ import annotations

import re

import pytest

from hsc.chunk.parse import parse_source
from hsc.chunk.tokens import get_counter
from hsc.model import Leaf
from hsc.params import Parameters

COUNTER = get_counter()

# Shaped like a web framework's application object: a long __init__ that sets attributes, some
# documented by comments above them, some by a docstring below them (the case).
APPLICATION = '''\
"""A small application object."""

import os

DEFAULT_PORT = 8080
"""The port the development server listens on when none is given."""

#: Names of the settings read from the environment.
ENVIRONMENT_KEYS = ("HOST", "PORT", "DEBUG")


class Application:
    """Holds the routes, the settings and the hooks of one web application."""

    response_class = None
    """The class used to build a response from what a view returns. Set it on a subclass to
    return responses of your own type."""

    def __init__(self, name: str, root: str | None = None, debug: bool = False) -> None:
        self.name = name
        """The import name of the package or module the application belongs to, used to find
        its resources on disk."""

        if root is None:
            root = os.path.dirname(os.path.abspath(name))
        elif not os.path.isabs(root):
            raise ValueError("The root folder must be an absolute path, not a relative one.")

        #: The folder the application's templates and static files live in.
        self.root = root

        self.settings: dict[str, object] = self.load_settings(debug)
        """The settings dictionary. It behaves like a plain dictionary and also reads settings
        from files and from the environment; views read it through the application object.

        Changing it after the first request has been served has no effect on hooks that copied
        a value when they were registered."""

        self.routes: list[tuple[str, object]] = []
        """Every route registered with :meth:`route`, in the order they were added, as pairs of
        the URL rule and the view function that answers it."""

        self.before_hooks: list[object] = []
        """Functions called before each request, in order; one that returns a value ends the
        request with that value as the response and later hooks are skipped."""

        self.after_hooks: list[object] = []
        """Functions called with the response after each request, in order; each returns the
        response it was given or a new one that replaces it."""

        self.error_handlers: dict[int, object] = {}
        """Views that answer an HTTP error status, by status code."""

        self.debug = debug
        """Whether tracebacks are shown in the browser and the server reloads on changes."""

    def load_settings(self, debug: bool) -> dict[str, object]:
        settings: dict[str, object] = {"DEBUG": debug}
        for key in ENVIRONMENT_KEYS:
            if key in os.environ:
                settings[key] = os.environ[key]
        return settings
'''

# Each assignment line of the file above with a docstring below it, and the docstring's first words.
DOCUMENTED = re.compile(r"^ *([^\n]+ = [^\n]*)\n *\"\"\"(\w+ \w+ \w+)", re.MULTILINE)


def leaves_of(params: Parameters) -> list[Leaf]:
    leaves, errors = parse_source(APPLICATION, "webapp/app.py", "python", params, COUNTER)
    assert errors == []
    return leaves


def leaf_holding(leaves: list[Leaf], text: str) -> int:
    found = [number for number, leaf in enumerate(leaves) if text in leaf.text]
    assert len(found) == 1, (text, found)
    return found[0]


def split_pairs(leaves: list[Leaf]) -> list[str]:
    """The documented names whose docstring starts in another leaf than their assignment."""
    pairs = DOCUMENTED.findall(APPLICATION)
    assert len(pairs) == 9  # every documented attribute of the file above was found
    return [
        line for line, words in pairs if leaf_holding(leaves, line) != leaf_holding(leaves, f'"""{words}')
    ]


# Small leaves, so the seed's cut falls between many statements of __init__ (at the default 256
# it splits one pair of this file); 96 still holds the longest pair whole.
SMALL = {"minimum_chunk_token_length": 0, "maximum_chunk_token_length": 96, "leaf_minimums": ""}


@pytest.mark.parametrize("maximum", [96, 128, 256])
def test_no_leaf_boundary_falls_between_an_assignment_and_its_docstring(maximum: int) -> None:
    params = Parameters(**{**SMALL, "maximum_chunk_token_length": maximum})
    assert params.attribute_docstrings == "joined"  # the default
    leaves = leaves_of(params)
    assert split_pairs(leaves) == []
    settings = leaves[leaf_holding(leaves, "self.settings: dict")]
    assert 'a value when they were registered."""' in settings.text  # the docstring's last line
    assert settings.scope == "webapp.app.Application.__init__"


def test_the_seed_cut_puts_docstrings_in_the_next_leaf() -> None:
    seed = leaves_of(Parameters(**SMALL, attribute_docstrings="seed"))
    split = split_pairs(seed)
    assert (
        "self.settings: dict[str, object] = self.load_settings(debug)" in split
    )  # the case: the assignment ends one leaf, its doc starts the next
    assert len(split) >= 3
    joined = leaves_of(Parameters(**SMALL))
    # Only where the pairs are: the leaves of the module's head and of load_settings are the seed's.
    assert [leaf.text for leaf in joined if "def load_settings" in leaf.text] == [
        leaf.text for leaf in seed if "def load_settings" in leaf.text
    ]


def test_module_and_class_attributes_keep_their_docstrings() -> None:
    leaves = leaves_of(Parameters(minimum_chunk_token_length=0, leaf_minimums=""))
    port = leaves[leaf_holding(leaves, "DEFAULT_PORT = 8080")]
    assert '"""The port the development server listens on' in port.text
    response = leaves[leaf_holding(leaves, "response_class = None")]
    assert "return responses of your own type." in response.text


def test_a_string_after_anything_else_is_not_joined_to_it() -> None:
    def cut(statement: str, option: str) -> list[str]:
        source = f'def f(x):\n    {statement}\n    """Doc of y."""\n    return x\n'
        params = Parameters(**{**SMALL, "maximum_chunk_token_length": 16}, attribute_docstrings=option)
        leaves, _ = parse_source(source, "m.py", "python", params, COUNTER)
        return [leaf.text for leaf in leaves]

    # A call is not documented by a string after it: both cuts put the string with `return x`.
    assert cut("g(x, x, x, x)", "joined") == cut("g(x, x, x, x)", "seed")
    assert 'y = g(x, x, x)\n    """Doc of y."""' in cut("y = g(x, x, x)", "joined")
    assert '"""Doc of y."""\n    return x' in cut("y = g(x, x, x)", "seed")


def test_the_option_is_part_of_the_chunk_key() -> None:
    joined, seed = Parameters(), Parameters(attribute_docstrings="seed")
    assert "attribute_docstrings=joined" in joined.chunk_key()
    assert seed.chunk_key() != joined.chunk_key()
