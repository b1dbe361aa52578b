"""scope_names "language": Go scopes name the package of the `package` clause in place of the file,
Rust methods of `impl Trait for Type` name the trait after the type; "path" (the default) keeps the
file's path and the type alone (real parses)."""

from __future__ import annotations

import pytest

from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters

COUNTER = get_counter()

GO = """\
package mux

import "net/http"

// Route stores information to match a request and build URLs.
type Route struct {
\thandler http.Handler
\terr     error
}

// Match matches the route against the request.
func (r *Route) Match(req *http.Request, match *RouteMatch) bool {
\tif r.err != nil {
\t\treturn false
\t}
\treturn r.handler != nil && req != nil && match != nil
}
"""

RUST = """\
use std::fmt;

/// A calendar date.
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

impl Date {
    /// The date's year.
    pub fn year(&self) -> i32 {
        self.year
    }
}

impl fmt::Display for Date {
    /// Writes the date as year-month-day.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}
"""

SMALL = {"minimum_chunk_token_length": 0, "maximum_chunk_token_length": 40}


def cut(source: str, path: str, language: str, names: str):
    result = cut_file(source, path, language, Parameters(scope_names=names, **SMALL), COUNTER)
    assert not result.error_lines
    return {leaf.scope for leaf in result.leaves}, {d.scope: d for d in result.definitions}


@pytest.mark.parametrize(
    ("path", "language_scope"),
    [
        ("route.go", "mux.Route.Match"),
        ("mux/route.go", "mux.Route.Match"),
        ("v2/route.go", "v2.mux.Route.Match"),
    ],
)
def test_go_scopes_name_the_package_with_language_names(path: str, language_scope: str) -> None:
    path_scope = path.removesuffix(".go").replace("/", ".") + ".Route.Match"
    leaves, definitions = cut(GO, path, "go", "path")
    assert path_scope in leaves and path_scope in definitions
    leaves, definitions = cut(GO, path, "go", "language")
    assert language_scope in leaves and definitions[language_scope].signature.startswith(
        "func (r *Route) Match"
    )


def test_rust_trait_methods_name_their_trait_with_language_names() -> None:
    leaves, definitions = cut(RUST, "src/date.rs", "rust", "path")
    assert {"src.date.Date.fmt", "src.date.Date.year"} <= set(definitions)
    leaves, definitions = cut(RUST, "src/date.rs", "rust", "language")
    assert definitions["src.date.Date.Display.fmt"].kind == "method"
    assert "src.date.Date.Display.fmt" in leaves
    assert "src.date.Date.year" in definitions  # an inherent impl has no trait to name
    assert "src.date.Date.fmt" not in definitions


def test_scope_names_are_part_of_the_chunk_key() -> None:
    assert Parameters().chunk_key() == Parameters(scope_names="path").chunk_key()
    assert "scopes=language" in Parameters(scope_names="language").chunk_key()


def test_the_leaf_survey_reads_each_language_of_a_folder(tmp_path) -> None:
    from hsc.bench.leaf_survey import bench_leaves, format_leaves

    (tmp_path / "mux").mkdir()
    (tmp_path / "mux" / "route.go").write_text(GO)
    (tmp_path / "date.rs").write_text(RUST)
    result = bench_leaves(tmp_path, None, Parameters(scope_names="language", **SMALL))
    assert set(result["languages"]) == {"go", "rust"}
    rust = result["languages"]["rust"]
    assert rust["definition_kinds"]["impl"] == 2 and rust["definition_kinds"]["method"] == 2
    assert any(line.startswith("date.Date.Display.fmt  <-  fn fmt") for line in rust["scope_lines"]["method"])
    assert result["languages"]["go"]["scope_lines"]["method"] == [
        "mux.Route.Match  <-  func (r *Route) Match(req *http.Request, match *RouteMatch) bool"
    ]
    assert "go: 1 files" in format_leaves(result)
    with pytest.raises(FileNotFoundError, match="no bench quality run"):
        bench_leaves(tmp_path, tmp_path / "nothing")


THIN_METHODS = (
    "pub struct Map { keys: Vec<u32>, values: Vec<u32> }\n\nimpl Map {\n"
    + "".join(
        f"    /// Returns the {name} of the map, in their order.\n"
        f"    pub fn {name}(&self) -> std::slice::Iter<'_, u32> {{\n        self.{field}.iter()\n    }}\n\n"
        for name, field in [
            ("keys", "keys"),
            ("values", "values"),
            ("first_keys", "keys"),
            ("last_values", "values"),
        ]
        * 3
    )
    + "}\n"
)


def test_leaf_minimums_keep_rusts_thin_methods_with_their_neighbours() -> None:
    small = {"maximum_chunk_token_length": 256}
    seed = cut_file(THIN_METHODS, "src/map.rs", "rust", Parameters(leaf_minimums="", **small), COUNTER).leaves
    shipped = cut_file(THIN_METHODS, "src/map.rs", "rust", Parameters(**small), COUNTER).leaves
    assert Parameters().minimum_for("rust") == 128 and Parameters().minimum_for("python") == 24
    assert Parameters().minimum_for("javascript") == 128
    assert len(shipped) < len(seed)
    # Every leaf of the shipped cut but the last reaches the Rust minimum; none passes the maximum.
    assert all(leaf.token_count >= 128 for leaf in shipped[:-1])
    assert all(leaf.token_count <= 256 for leaf in shipped)
    assert " ".join(leaf.text for leaf in shipped).split() == " ".join(leaf.text for leaf in seed).split()
    # Another language is cut as before.
    python = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    for params in (Parameters(), Parameters(leaf_minimums="")):
        assert len(cut_file(python, "m.py", "python", params, COUNTER).leaves) == 1


def test_a_malformed_leaf_minimum_is_refused_in_one_line() -> None:
    from hsc.params import SettingError

    with pytest.raises(SettingError, match=r"leaf_minimums: 'rust:128' is not LANGUAGE=N"):
        Parameters(leaf_minimums="rust:128")
    assert (
        Parameters(leaf_minimums="go=64, rust=300", maximum_chunk_token_length=256).minimum_for("rust") == 256
    )
    assert "minimums=rust=128" in Parameters().chunk_key()
