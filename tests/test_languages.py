"""The languages whose tables live in hsc.chunk.languages: leaves with scopes, the definitions,
their docs and the imports read from realistic files (tests/data/languages), a syntax error in
each, and nothing they add to the shared tables changes what the other grammars produce."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_parse import assert_covers
from tree_sitter_language_pack import get_language

from hsc.chunk import grammar
from hsc.chunk.ingest import LANGUAGE_BY_EXTENSION, detect_language, load_file, walk_repository
from hsc.chunk.languages import LANGUAGE_TABLES, ImportForm, file_imports
from hsc.chunk.parse import cut_file, module_name, parser_for
from hsc.chunk.reading import decode_text
from hsc.chunk.tokens import get_counter
from hsc.hierarchy.digest import LANGUAGE_NAMES
from hsc.params import Parameters, Settings
from hsc.quality.corpus import build_corpus

COUNTER = get_counter()
DATA = Path(__file__).resolve().parent / "data" / "languages"
SMALL = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=160)
ORIGINAL_LANGUAGES = (
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "ruby",
    "bash",
)

# (file, definitions as (kind, scope below the file's module), docs by scope, imports of the file)
EXPECTED = {
    "Orders.cs": (
        [
            ("namespace", "Acme.Orders"),
            ("class", "Acme.Orders.OrderLine"),
            ("property", "Acme.Orders.OrderLine.Total"),
            ("method", "Acme.Orders.OrderLine.OrderLine"),
            ("method", "Acme.Orders.OrderLine.CompareTo"),
            ("method", "Acme.Orders.OrderLine.With"),
            ("enum", "Acme.Orders.OrderLine.Flags"),
            ("struct", "Acme.Orders.OrderLine.Discount"),
            ("method", "Acme.Orders.OrderLine.Discount.Apply"),
            ("interface", "Acme.Orders.IOrderStore"),
            ("method", "Acme.Orders.IOrderStore.Save"),
            ("class", "Acme.Orders.OrderPlaced"),
            ("method", "Acme.Orders.OrderMath.Sum"),
        ],
        {
            "Acme.Orders.OrderLine": "A line of an order: a product and how many of it.",
            "Acme.Orders.OrderLine.CompareTo": "Compares two lines by their product code.",
            "Acme.Orders.OrderLine.Total": "The line's total in cents, rounded up.",
        },
        ["System", "System.Collections.Generic", "System.Math", "System.Text.Json.JsonSerializer"],
    ),
    "OrderService.php": (
        [
            ("namespace", "Acme.Orders"),
            ("class", "OrderService"),
            ("method", "OrderService.__construct"),
            ("method", "OrderService.addLine"),
            ("method", "OrderService.total"),
            ("interface", "Placer"),
            ("trait", "Timestamps"),
            ("method", "Timestamps.touch"),
            ("enum", "Status"),
            ("method", "Status.label"),
            ("function", "format_quantity"),
        ],
        {
            "OrderService": "Places orders and keeps their lines in a store.",
            "OrderService.addLine": "Adds a line to the order and returns the new line count.",
            "Timestamps.touch": "When the order was last touched.",
        },
        [
            "Acme\\Orders\\Contracts\\OrderStore",
            "Psr\\Log\\LoggerInterface",
            "Psr\\Log\\NullLogger",
            "Acme\\Util\\money_format",
        ],
    ),
    "Orders.kt": (
        [
            ("class", "OrderLine"),
            ("method", "OrderLine.withQuantity"),
            ("method", "OrderLine.compareTo"),
            ("method", "OrderLine.constructor"),
            ("object", "OrderLine.Parser"),
            ("method", "OrderLine.Parser.parse"),
            ("class", "OrderLine.Checker"),
            ("interface", "OrderStore"),
            ("object", "Registry"),
            ("method", "Registry.register"),
            ("enum", "Status"),
            ("function", "totalQuantity"),
            ("property", "byQuantity"),
            ("type", "LineFilter"),
        ],
        {
            "OrderLine": "A line of an order: a product and how many of it.",
            "OrderLine.Parser.parse": "Reads a line written as SKU x QUANTITY.",
            "totalQuantity": "Sums the quantities of the lines the filter keeps.",
        },
        ["kotlin.math.max", "com.acme.util", "java.time.Instant"],
    ),
    "Orders.swift": (
        [
            ("struct", "OrderLine"),
            ("property", "OrderLine.weight"),
            ("method", "OrderLine.init"),
            ("method", "OrderLine.with"),
            ("enum", "OrderLine.Kind"),
            ("protocol", "OrderStore"),
            ("method", "OrderStore.lines"),
            ("class", "MemoryStore"),
            ("method", "MemoryStore.save"),
            ("extension", "Array"),
            ("method", "Array.totalQuantity"),
            ("class", "OrderCounter"),
            ("property", "byQuantity"),
        ],
        {
            "OrderLine": "A line of an order: a product and how many of it.",
            "OrderLine.weight": "The line's weight in grams for shipping.",
            "Array.totalQuantity": "Sums the quantities of the lines the filter keeps.",
        },
        ["Foundation", "Swift.Array"],
    ),
    "Orders.scala": (
        [
            ("class", "OrderLine"),
            ("method", "OrderLine.withQuantity"),
            ("object", "OrderLine"),
            ("method", "OrderLine.parse"),
            ("property", "OrderLine.byQuantity"),
            ("trait", "OrderStore"),
            ("class", "MemoryStore"),
            ("class", "MemoryStore.Snapshot"),
            ("method", "MemoryStore.Snapshot.size"),
            ("enum", "Status"),
            ("function", "totalQuantity"),
        ],
        {
            "OrderLine": "A line of an order: a product and how many of it.",
            "OrderStore": "Keeps order lines by order id.",
            "OrderLine.parse": "Reads a line written as SKU x QUANTITY.",
        },
        ["scala.collection.mutable", "com.acme.util.Money", "com.acme.util.Rounding", "java.time"],
    ),
    "orders.lua": (
        [
            ("function", "M.total_quantity"),
            ("function", "M.parse"),
            ("function", "Store.new"),
            ("function", "Store.save"),
            ("function", "by_quantity"),
        ],
        {"M.total_quantity": "Sums the quantities of the lines the filter keeps."},
        ["cjson", "acme.util"],
    ),
    "orders.R": (
        [("function", "total_quantity"), ("function", "parse_line")],
        {"total_quantity": "Sums the quantities of the lines the filter keeps."},
        ["dplyr", "jsonlite"],
    ),
    "Orders.jl": (
        [
            ("module", "Orders"),
            ("struct", "Orders.OrderLine"),
            ("function", "Orders.OrderLine"),
            ("function", "Orders.total_quantity"),
            ("function", "Orders.Base.show"),
            ("type", "Orders.OrderStore"),
            ("struct", "Orders.MemoryStore"),
            ("macro", "Orders.must"),
            ("module", "Orders.Parsing"),
            ("function", "Orders.Parsing.parse_line"),
        ],
        {"Orders.total_quantity": "Sums the quantities of the lines the filter keeps."},
        [],  # imports inside the module body, as Julia writes them
    ),
    "orders.ex": (
        [
            ("module", "Acme.Orders"),
            ("function", "Acme.Orders.total_quantity"),
            ("function", "Acme.Orders.parse"),
            ("function", "Acme.Orders.log"),
            ("module", "Acme.Orders.Line"),
            ("function", "Acme.Orders.Line.empty?"),
        ],
        {"Acme.Orders.total_quantity": "Sums the quantities of the lines the filter keeps."},
        [],  # Elixir imports inside a module body; the leaf facts record module-level ones
    ),
}


def _cut(name: str, params: Parameters = SMALL, source: str | None = None):
    path = f"src/{name}"
    text = (DATA / name).read_text() if source is None else source
    return text, cut_file(text, path, detect_language(path), params, COUNTER)


def test_every_tabled_language_has_a_realistic_file() -> None:
    languages = {detect_language(name) for name in EXPECTED}
    assert languages == set(LANGUAGE_TABLES)
    assert all(LANGUAGE_NAMES[language] == tables.display for language, tables in LANGUAGE_TABLES.items())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_definitions_scopes_and_docs(name: str) -> None:
    source, cut = _cut(name)
    expected_definitions, docs, _imports = EXPECTED[name]
    module = "src." + name.rsplit(".", 1)[0]
    found = {(d.kind, d.scope.removeprefix(module + ".")) for d in cut.definitions}
    assert set(expected_definitions) <= found, set(expected_definitions) - found
    doc_by_scope = {d.scope.removeprefix(module + "."): d.doc for d in cut.definitions if d.doc}
    for scope, doc in docs.items():
        assert doc_by_scope.get(scope) == doc, (scope, doc_by_scope.get(scope))
    assert cut.error_lines == []
    assert_covers(source, cut.leaves)
    # A method's leaf is scoped to the method, or to its type when the type fits one leaf whole:
    # scopes in the language's own names, joined with dots.
    starts = {(d.kind, d.scope): d.start_line for d in cut.definitions}
    for kind, scope in expected_definitions:
        if kind == "method":
            line = starts[(kind, f"{module}.{scope}")]
            leaf = next(leaf for leaf in cut.leaves if leaf.start_line <= line <= leaf.end_line)
            assert f"{module}.{scope}".startswith(leaf.scope) and leaf.scope != module, (scope, leaf.scope)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_imports_are_leaf_facts(name: str) -> None:
    _source, cut = _cut(name)
    imports = [path for facts in cut.facts for path in facts.imports]
    assert imports == EXPECTED[name][2]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_syntax_error_is_reported_and_the_file_still_cut(name: str) -> None:
    source = (DATA / name).read_text()
    lines = source.split("\n")
    middle = len(lines) // 2
    broken = "\n".join([*lines[:middle], "  ) ] } ( [ { = => ::: ", *lines[middle:]])
    text, cut = _cut(name, source=broken)
    assert cut.error_lines, name
    assert_covers(text, cut.leaves)
    # The grammar recovers: definitions still get leaves of their own scope.
    module = "src." + name.rsplit(".", 1)[0]
    assert any(leaf.scope.startswith(module + ".") for leaf in cut.leaves)


def test_attributes_and_annotations_stay_with_their_definition() -> None:
    for name, marker in (
        ("Orders.cs", "[Serializable]"),
        ("OrderService.php", "#[Service"),
        ("Orders.kt", "@Serializable"),
        ("Orders.swift", "@available"),
        ("Orders.scala", "@SerialVersionUID"),
    ):
        _source, cut = _cut(name, Parameters())
        holding = [leaf for leaf in cut.leaves if marker in leaf.text]
        assert holding and all("class" in leaf.text or "struct" in leaf.text for leaf in holding), name
        # ... and the signature quotes the definition, not the attribute.
        signatures = [d.signature for d in cut.definitions if d.start_line == holding[0].start_line]
        assert signatures == [] or not signatures[0].startswith(marker[:2]), signatures


def _forms(name: str) -> list[ImportForm]:
    data = (DATA / name).read_bytes()
    language = detect_language(name)
    return [form for _start, form in file_imports(data, parser_for(language).parse(data).root_node, language)]


def test_import_bindings_name_the_module_and_the_local_name() -> None:
    csharp = _forms("Orders.cs")
    assert ImportForm("System") in csharp
    assert ImportForm("System.Math", "*") in csharp  # using static: its members
    assert ImportForm("System.Text.Json", "JsonSerializer", "Json") in csharp
    php = _forms("OrderService.php")
    assert ImportForm("Psr\\Log", "NullLogger", "Quiet", "\\") in php
    assert [form.bound for form in php] == ["OrderStore", "LoggerInterface", "Quiet", "money_format"]
    kotlin = _forms("Orders.kt")
    assert (
        ImportForm("com.acme.util", "*") in kotlin and ImportForm("java.time", "Instant", "Moment") in kotlin
    )
    scala = _forms("Orders.scala")
    assert ImportForm("com.acme.util", "Rounding", "Round") in scala and ImportForm("java.time", "*") in scala
    assert ImportForm("Swift", "Array") in _forms("Orders.swift")
    julia = _forms("Orders.jl")
    assert julia == [ImportForm("Dates"), ImportForm("Base", "show"), ImportForm("Base", "isless")]
    elixir = _forms("orders.ex")  # inside the module body
    assert [form.module for form in elixir] == ["Acme.Orders.Line", "Enum", "Logger"]


def test_extensions_map_to_the_tabled_grammars() -> None:
    for language, tables in LANGUAGE_TABLES.items():
        assert tables.display
        for suffix in tables.extensions:
            assert LANGUAGE_BY_EXTENSION[suffix.lower()] == language
            assert detect_language(f"a{suffix}") == detect_language(f"a{suffix.upper()}") == language
        parser_for(language)  # the pinned language pack carries the grammar
        grammar_kinds = get_language(language)  # type: ignore[arg-type]
        assert any(grammar_kinds.id_for_node_kind(kind, True) for kind in tables.kinds), language


def test_what_the_tables_add_to_shared_sets_is_no_node_type_of_the_other_grammars() -> None:
    """The cutter and the facts reader read COMMENT_TYPES, BODY_TYPES, ANNOTATION_TYPES and
    COMMENT_HOLDERS for every language: a node type a tabled language adds there must be one the
    original grammars lack, or already in the set, so their output cannot change."""
    originals = [get_language(name) for name in ORIGINAL_LANGUAGES]  # type: ignore[arg-type]
    # Swift's attributes sit in a definition's modifiers; Python, Rust, C and C++ have an
    # "attribute" node too, but never as a child of a definition or of its modifiers, which is
    # the only place ANNOTATION_TYPES is read.
    allowed = {"attribute"}
    for tables in LANGUAGE_TABLES.values():
        for added, shared_before in (
            (tables.comments, grammar.SHARED_COMMENT_TYPES),
            (tables.bodies, grammar.SHARED_BODY_TYPES),
            (tables.annotations, grammar.SHARED_ANNOTATION_TYPES),
            (tables.comment_holders, frozenset()),
        ):
            for node_type in set(added) - shared_before - allowed:
                users = [g for g in originals if g.id_for_node_kind(node_type, True)]
                assert not users, (tables.name, node_type)


@pytest.mark.parametrize(
    ("name", "function", "query"),
    [
        ("Orders.cs", "Sum", "Sums the totals of all lines that pass the filter."),
        ("OrderService.php", "addLine", "Adds a line to the order and returns the new line count."),
        ("Orders.kt", "totalQuantity", "Sums the quantities of the lines the filter keeps."),
        ("Orders.swift", "totalQuantity", "Sums the quantities of the lines the filter keeps."),
        ("Orders.scala", "parse", "Reads a line written as SKU x QUANTITY."),
        ("orders.lua", "M.total_quantity", "Sums the quantities of the lines the filter keeps."),
        ("orders.R", "total_quantity", "Sums the quantities of the lines the filter keeps."),
        ("orders.ex", "total_quantity", "Sums the quantities of the lines the filter keeps."),
        ("Orders.jl", "total_quantity", "Sums the quantities of the lines the filter keeps."),
    ],
)
def test_the_quality_corpus_asks_for_documented_functions(
    tmp_path: Path, name: str, function: str, query: str
) -> None:
    """bench quality reads each tabled language's doc comments: the query is the first sentence,
    the answer the function, and the corpus copy has the doc blanked with every line kept."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_bytes((DATA / name).read_bytes())
    corpus = build_corpus([(tmp_path / "src", "repo")], tmp_path / "corpus", None, 0)
    target = next(t for t in corpus.targets if t.name == function)
    assert target.query == query
    original = (DATA / name).read_text().split("\n")
    blanked = (tmp_path / "corpus" / "repo" / name).read_text().split("\n")
    assert len(blanked) == len(original) and query.split()[0] not in "\n".join(blanked[: target.start_line])
    assert function.rsplit(".", 1)[-1] in original[target.start_line - 1]


def _text_of(path: Path) -> str:
    """A file's text as the indexer decodes it (a byte-order mark, CRLF line ends kept as they are)."""
    text = decode_text(path.read_bytes()).text
    assert text is not None
    return text


def _debian_sources(tmp_path: Path, packages: tuple[str, ...]) -> Path:
    """Packages downloaded with apt-get and unpacked; the test skips where that cannot run."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        pytest.skip("apt-get and dpkg-deb are not here")
    debs = tmp_path / "debs"
    debs.mkdir()
    try:
        subprocess.run(
            ["apt-get", "download", *packages], cwd=debs, check=True, capture_output=True, timeout=120
        )
    except (subprocess.SubprocessError, OSError) as error:
        pytest.skip(f"apt-get download failed (offline?): {error}")
    root = tmp_path / "unpacked"
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=120)
    return root


@pytest.mark.parametrize(
    ("packages", "language"),
    [
        (("php-monolog", "php-symfony-console"), "php"),
        (("lua-penlight",), "lua"),
    ],
)
def test_real_code_from_debian_packages(tmp_path: Path, packages: tuple[str, ...], language: str) -> None:
    """Real PHP and Lua: every file indexed (no chunking failure), tiled, most cut into scoped
    definitions, with docs and imports (Lua's are few).
    Reproduce a corpus: unpack the packages, then python -m hsc bench quality --path DIR."""
    root = _debian_sources(tmp_path, packages)
    settings, counter = Settings(), get_counter()
    files = definitions = documented = imports = scoped = 0
    for rel_path in walk_repository(root):
        if detect_language(rel_path) != language or (root / rel_path).is_symlink():
            continue
        parsed = load_file(root, rel_path, Parameters(), settings, counter)
        assert parsed.report.status == "indexed", parsed.report
        assert_covers(_text_of(root / rel_path), parsed.leaves)
        files += 1
        definitions += len(parsed.definitions)
        documented += sum(1 for d in parsed.definitions if d.doc)
        imports += sum(len(facts.imports) for facts in parsed.facts)
        scoped += any(leaf.scope.startswith(module_name(rel_path) + ".") for leaf in parsed.leaves)
    assert files >= 30
    assert scoped >= 0.8 * files and definitions >= 3 * files
    assert documented >= files
    assert language == "lua" or imports >= files


@pytest.mark.parametrize(
    ("name", "function", "doc", "imports"),
    [
        (
            "Cart.vue",
            "totalQuantity",
            "Sums the quantities of the lines the filter keeps.",
            ["vue", "./types", "vue"],
        ),
        (
            "Greeting.svelte",
            "greet",
            "Greets the visitor by name, counting each greeting.",
            ["svelte", "./format.js"],
        ),
    ],
)
def test_components_cut_their_scripts_with_the_script_grammar(
    name: str, function: str, doc: str, imports: list[str]
) -> None:
    source, cut = _cut(name, Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=60))
    assert_covers(source, cut.leaves)
    module = "src." + name.rsplit(".", 1)[0]
    definition = next(d for d in cut.definitions if d.name == function)
    assert (definition.kind, definition.scope, definition.doc) == ("function", f"{module}.{function}", doc)
    assert [path for facts in cut.facts for path in facts.imports] == imports
    lines = source.split("\n")
    assert lines[definition.start_line - 1].lstrip().startswith("function")  # the file's own line numbers
    leaf = next(leaf for leaf in cut.leaves if leaf.start_line <= definition.start_line <= leaf.end_line)
    assert leaf.scope == f"{module}.{function}" and leaf.language == detect_language(name)
    # The markup is cut too, into leaves of its own.
    assert any("<style" in leaf.text and "function" not in leaf.text for leaf in cut.leaves)
    assert cut.error_lines == []


def _npm_sources(tmp_path: Path, packages: tuple[str, ...]) -> Path:
    """Packages fetched with npm pack and unpacked; the test skips where that cannot run."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not here")
    try:
        subprocess.run(["npm", "pack", *packages], cwd=tmp_path, check=True, capture_output=True, timeout=300)
    except (subprocess.SubprocessError, OSError) as error:
        pytest.skip(f"npm pack failed (offline?): {error}")
    root = tmp_path / "unpacked"
    for number, archive in enumerate(sorted(tmp_path.glob("*.tgz"))):
        (root / str(number)).mkdir(parents=True)
        shutil.unpack_archive(archive, root / str(number))
    return root


@pytest.mark.parametrize(
    ("packages", "minimum_files"),
    [
        (("svelte-select@5.8.3", "vue-multiselect@2.1.9"), {"svelte": 4, "vue": 1}),
        # React Native modules ship their Android (Kotlin), iOS (Swift) and Windows (C#) sources.
        (("expo-modules-core@1.12.26",), {"kotlin": 100, "swift": 100}),
        (("react-native-windows@0.74.0",), {"csharp": 50}),
    ],
)
def test_real_code_from_npm(tmp_path: Path, packages: tuple[str, ...], minimum_files: dict[str, int]) -> None:
    """Real Svelte, Vue, Kotlin, Swift and C# (npm pack): every file indexed and tiled, nearly every
    file cut into definitions with scopes. Reproduce a corpus: python -m hsc bench quality --path DIR."""
    root = _npm_sources(tmp_path, packages)
    files = dict.fromkeys(minimum_files, 0)
    scoped = 0
    for rel_path in walk_repository(root):
        language = detect_language(rel_path)
        if language not in files:
            continue
        parsed = load_file(root, rel_path, Parameters(), Settings(), get_counter())
        assert parsed.report.status == "indexed", parsed.report
        assert_covers(_text_of(root / rel_path), parsed.leaves)
        files[language] += 1
        scoped += any(leaf.scope.startswith(module_name(rel_path) + ".") for leaf in parsed.leaves)
        if rel_path.endswith("/package/Select.svelte"):
            assert {"setValue", "debounce"} <= {d.name for d in parsed.definitions}
    assert all(files[language] >= minimum for language, minimum in minimum_files.items()), files
    assert scoped >= 0.8 * sum(files.values()) or "vue" in files


def test_perl_is_cut_into_lines_because_its_grammar_can_loop_forever(tmp_path: Path) -> None:
    """tree-sitter-language-pack 0.13.0's Perl grammar never returns on inputs as small as ``VB#``,
    and a parse cannot be interrupted: Perl files get blocks of lines. Run in a child process so a
    regression shows as a timeout here rather than a hung suite."""
    (tmp_path / "hang.pl").write_text("VB#\nsub total { return 1; }\n")
    program = (
        "import sys; from pathlib import Path; from hsc.chunk.ingest import load_file;"
        "from hsc.chunk.tokens import get_counter; from hsc.params import Parameters, Settings;"
        "parsed = load_file(Path(sys.argv[1]), 'hang.pl', Parameters(), Settings(), get_counter());"
        "print(parsed.report.status, {leaf.chunker for leaf in parsed.leaves})"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["indexed", "{'lines'}"]
