"""The Streamlit app, driven page by page with AppTest.

Real parts only: the bundled embedding model, a real SQLite file in a
temporary folder (``HSC_APP_DB``) and a bundled sample repository. The index
is opened once per process (``st.cache_resource``), so the first test pays
for loading the model and indexing; the others reuse both.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import NumberInput

from hsc import Index, Parameters
from hsc.app.ui.text import line_range
from hsc.integrations.tools import DEFAULT_BUDGET

APP_DIR = Path(__file__).resolve().parent.parent
APP = APP_DIR / "hsc" / "app" / "app.py"
SAMPLE = APP_DIR / "hsc" / "samples" / "inventory_py"
SECOND_SAMPLE = APP_DIR / "hsc" / "samples" / "shortlink_go"
# Loading the model takes ~5 s and indexing a sample some seconds more, on two slow cores.
TIMEOUT = 240

THRESHOLD_SLIDER = "param:similarity:similarity_drop_threshold"
WINDOW_SLIDER = "param:similarity:smoothing_window_size"
RULE_CONTROL = "param:similarity:boundary_rule"


@pytest.fixture(scope="module", autouse=True)
def app_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    database = tmp_path_factory.mktemp("hsc-app") / "app.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_APP_DB", str(database))
        patch.setenv("HSC_APP_REPO", str(SAMPLE))
        yield database


def fresh_session() -> AppTest:
    """A new browser session on the app's first page, opened by a link to the sample with the
    default parameters (a bare address would open the view another test left in the database)."""
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.query_params["repo"] = SAMPLE.name
    app.run()
    assert_clean(app)
    return app


def assert_clean(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


def open_page(app: AppTest, page: str) -> AppTest:
    app.switch_page(page).run()
    assert_clean(app)
    return app


def metric(app: AppTest, label: str) -> str:
    for element in app.metric:
        if element.label == label:
            return str(element.value)
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in app.metric]}")


def texts(app: AppTest, sidebar: bool = False) -> str:
    """Everything shown as text, caption, Markdown or title, for containment checks."""
    where = app.sidebar if sidebar else app
    parts = [e.value for e in (*where.title, *where.subheader, *where.markdown, *where.caption, *where.text)]
    return "\n".join(str(p) for p in parts)


def sidebar_input(app: AppTest, name: str) -> NumberInput:
    """The sidebar's number box for a parameter (found by its label: its key
    changes when the parameters are reset or loaded)."""
    found = [w for w in app.sidebar.number_input if w.label == name]
    assert len(found) == 1, [w.label for w in app.sidebar.number_input]
    return found[0]


def test_first_visit_indexes_the_default_repository_and_lists_it() -> None:
    app = fresh_session()
    assert app.session_state["active_repository_id"] is not None
    assert "What came in" in texts(app)
    assert int(metric(app, "Files indexed")) >= 5
    assert int(metric(app, "Leaves")) > 20
    assert int(metric(app, "Saved parameter sets")) == 1
    per_language = app.dataframe[1].value
    assert "python" in set(per_language["language"])
    sidebar = "\n".join(str(c.value) for c in app.sidebar.caption)
    assert "inventory" in sidebar and "Embedding model" in sidebar and "Summariser" in sidebar
    # Indexing has ended: the banner that said it was running is gone (the run's own line stays).
    assert not [box.value for box in app.info if "First start" in box.value]


def test_the_first_start_says_the_encoder_is_prepared_once(tmp_path: Path) -> None:
    from hsc import Index, Settings
    from hsc.app.ui.context import encoder_message

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HSC_ENCODER_DIR", str(tmp_path / "no-export-yet"))
        # The default encoder ships as an int8 file: nothing to export, only to load.
        with Index.open(tmp_path / "fresh.db") as index:
            assert encoder_message(index, tmp_path / "fresh.db").startswith("Loading the embedding model")
        # The base model through ONNX is exported once per machine, and the page says so.
        base = Settings(embedding_model="all-MiniLM-L6-v2")
        with Index.open(tmp_path / "base.db", settings=base) as index:
            assert "Preparing the encoder, once" in encoder_message(index, tmp_path / "base.db")


def test_repository_path_is_validated_before_indexing(tmp_path: Path) -> None:
    app = fresh_session()
    app.radio(key="repo:source").set_value("A folder on this machine").run()
    path_box = app.text_input(key="repo:path")

    path_box.input(str(tmp_path / "missing")).run()
    assert "There is no file or folder" in app.error[0].value
    # The button stays enabled (a path typed but not confirmed arrives with the click), and says why not.
    app.button(key="repo:index").click().run()
    assert "Choose a repository to index first" in app.warning[0].value

    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    app.text_input(key="repo:path").input(str(a_file)).run()
    assert "is a file" in app.error[0].value

    empty = tmp_path / "empty"
    empty.mkdir()
    app.text_input(key="repo:path").input(str(empty)).run()
    assert "empty folder" in app.error[0].value

    # Before starting: how many files, and an estimate of the leaves and the time.
    app.text_input(key="repo:path").input(str(SAMPLE)).run()
    assert not app.error
    files = sum(1 for p in SAMPLE.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert f"{files} files" in texts(app) and "leaves" in texts(app)


def test_a_second_repository_is_indexed_then_reopened_at_once(tmp_path: Path) -> None:
    # A copy, so this test's repository is new to the database whatever ran before.
    copy = tmp_path / "shortlink_copy"
    shutil.copytree(SECOND_SAMPLE, copy)
    app = fresh_session()
    app.radio(key="repo:source").set_value("A folder on this machine").run()
    app.text_input(key="repo:path").input(str(copy)).run()
    app.button(key="repo:index").click().run()
    assert_clean(app)
    assert "Indexed shortlink" in "\n".join(s.value for s in app.success)
    new_id = app.session_state["active_repository_id"]
    assert "go" in set(app.dataframe[1].value["language"])

    # Choosing the first repository again makes it active without indexing anything.
    choices = app.selectbox(key="repo:open").options
    assert len(choices) >= 2
    inventory = next(n for n, label in enumerate(choices) if label.startswith("inventory_py"))
    app.selectbox(key="repo:open").select_index(inventory).run()
    assert_clean(app)
    assert app.session_state["active_repository_id"] != new_id
    assert not app.success  # nothing was indexed
    assert "python" in set(app.dataframe[1].value["language"])


def test_leaves_page_shows_the_table_the_code_and_the_histogram() -> None:
    app = open_page(fresh_session(), "pages/2_Leaves.py")
    table = app.dataframe[0].value
    assert {"path", "scope", "node_type", "lines", "token_count"} <= set(table.columns)
    assert len(app.get("plotly_chart")) == 2  # histogram and the file strip
    # The first leaf is described before any row is picked; its code is read once one is.
    assert not app.code
    assert "Select a row in the table to read that leaf's code." in texts(app)

    app.multiselect(key="leaves:paths").select("inventory/pricing.py").run()
    assert_clean(app)
    # The file named once, at its first row; scopes without the module its path already says.
    picked = app.dataframe[0].value
    assert list(picked["path"]) == ["inventory/pricing.py"] + [""] * (len(picked) - 1)
    assert {"PriceTier", "apply_discount"} <= set(picked["scope"])
    assert not picked["scope"].str.startswith("inventory.pricing.").any()
    app.multiselect(key="leaves:paths").unselect("inventory/pricing.py").run()

    everything = len(table)
    app.multiselect(key="leaves:types").select(table["node_type"].iloc[0]).run()
    assert_clean(app)
    assert len(app.dataframe[0].value) < everything
    app.text_input(key="leaves:scope").input("no-such-scope-anywhere").run()
    assert "No leaf matches" in app.info[0].value


def test_leaves_page_opens_on_code_and_offers_the_other_roles() -> None:
    app = open_page(fresh_session(), "pages/2_Leaves.py")
    roles = app.multiselect(key="leaves:roles")
    assert roles.value == ["code"] and "docs" in roles.options
    assert set(app.dataframe[0].value["role"]) == {"code"}
    roles.unselect("code").run()
    assert_clean(app)
    every = app.dataframe[0].value
    assert {"code", "docs"} <= set(every["role"])
    assert set(every[every["role"] == "docs"]["path"]) >= {"README.md"}


def test_similarity_sliders_rebuild_the_boundaries_and_are_shared_with_the_sidebar() -> None:
    app = open_page(fresh_session(), "pages/3_Similarity.py")
    valley_boundaries = int(metric(app, "Topic boundaries"))
    assert len(app.get("plotly_chart")) == 1

    # The seed's rule cuts at every pair below the threshold: more boundaries than one per valley.
    app.segmented_control(key=RULE_CONTROL).set_value("threshold").run()
    assert_clean(app)
    default_boundaries = int(metric(app, "Topic boundaries"))
    assert default_boundaries > valley_boundaries

    # With it, a higher threshold can only add boundaries and a lower one remove them.
    app.slider(key=THRESHOLD_SLIDER).set_value(0.9).run()
    assert_clean(app)
    assert int(metric(app, "Topic boundaries")) > default_boundaries
    # One widget per parameter on a page: the sidebar points to the slider.
    assert "similarity_drop_threshold: set on this page" in texts(app, sidebar=True)

    app.slider(key=THRESHOLD_SLIDER).set_value(0.05).run()
    assert int(metric(app, "Topic boundaries")) < default_boundaries

    # A change against the saved set is signed once, with no arrow repeating the sign ("↓ -156").
    boundaries = next(m for m in app.metric if m.label == "Topic boundaries")
    assert boundaries.proto.delta[0] in "+−" and boundaries.proto.direction == 2  # no arrow

    # At the shipped window of 1 the page says why there is no smoothing; at 5 it shows by itself.
    assert "Why window 1 (no smoothing) ships" in texts(app)
    app.slider(key=WINDOW_SLIDER).set_value(5).run()
    assert_clean(app)
    assert app.session_state["hsc_parameters"]["smoothing_window_size"] == 5
    assert "Why window 1" not in texts(app)

    # One file instead of the whole repository.
    view = app.selectbox(key="similarity:view")
    view.set_value("inventory/pricing.py").run()
    assert_clean(app)
    assert "boundaries from valleys" in texts(app)

    # The values survive page switches, and every page's sidebar shows them.
    open_page(app, "pages/4_Hierarchy.py")
    assert sidebar_input(app, "similarity_drop_threshold").value == pytest.approx(0.05)
    open_page(app, "pages/3_Similarity.py")
    assert app.slider(key=WINDOW_SLIDER).value == 5
    assert app.slider(key=THRESHOLD_SLIDER).value == pytest.approx(0.05)


def test_hierarchy_page_saves_and_compares_two_parameter_sets() -> None:
    app = open_page(fresh_session(), "pages/4_Hierarchy.py")
    assert len(app.get("plotly_chart")) == 2  # the tiers, and the structural levels
    assert int(metric(app, "Groups (mid)")) > 0
    assert "Summariser in use" in texts(app)

    sidebar_input(app, "similarity_drop_threshold").set_value(0.7).run()
    app.text_input(key="hierarchy:name").input("strict").run()
    app.button(key="hierarchy:save").click().run()
    assert_clean(app)
    names = set(app.dataframe[2].value["name"])
    assert {"default", "strict"} <= names

    # A saved set's parameters load back into the sidebar.
    app.button(key="param:reset").click().run()
    assert sidebar_input(app, "similarity_drop_threshold").value != pytest.approx(0.7)
    app.selectbox(key="hierarchy:set").set_value("strict").run()
    app.button(key="hierarchy:load").click().run()
    assert_clean(app)
    assert sidebar_input(app, "similarity_drop_threshold").value == pytest.approx(0.7)

    app.selectbox(key="hierarchy:first").set_value("default").run()
    app.selectbox(key="hierarchy:second").set_value("strict").run()
    assert_clean(app)
    default_groups = int(metric(app, "Groups in default"))
    strict_groups = int(metric(app, "Groups in strict"))
    assert strict_groups != default_groups
    moved, _, total = metric(app, "Leaves that moved").partition(" of ")
    assert 0 < int(moved) <= int(total)
    assert len(app.get("plotly_chart")) == 3  # the tiers, the structural levels, the group sizes compared


def test_summarise_with_ollama_says_plainly_when_no_server_answers() -> None:
    app = open_page(fresh_session(), "pages/4_Hierarchy.py")
    # A port nothing listens on: the answer must be a clear "no", not an exception.
    app.text_input(key="hierarchy:ollama_host").input("http://127.0.0.1:9").run()
    app.button(key="hierarchy:ollama").click().run()
    assert_clean(app)
    warning = app.warning[0].value
    assert "No Ollama server answers" in warning and "digest" in warning.lower()


def test_query_page_asks_code_first_and_any_roles_chosen() -> None:
    from hsc.chunk.roles import file_role

    app = open_page(fresh_session(), "pages/5_Query.py")
    roles = app.multiselect(key="query:roles")
    assert roles.value == ["code"] and "docs" in roles.options
    app.text_input(key="query:text").input("how to run the inventory tool").run()
    assert_clean(app)
    response = app.session_state["query:response"]
    assert response.results and {file_role(r.path) for r in response.results} == {"code"}
    app.multiselect(key="query:roles").unselect("code").select("docs").run()
    assert_clean(app)
    response = app.session_state["query:response"]  # asked again: the roles changed
    assert response.results and {file_role(r.path) for r in response.results} == {"docs"}


def test_query_page_shows_both_rankings_and_the_history() -> None:
    app = open_page(fresh_session(), "pages/5_Query.py")
    app.text_input(key="query:text").input("take a percentage off a price").run()
    assert_clean(app)
    staged, flat, groups = (d.value for d in app.dataframe[:3])
    assert len(groups) > 0 and len(staged) > 0 and len(flat) > 0
    # The flat table names the mode it is set against: the shipped one.
    assert "flat rank" in staged.columns and f"{Parameters().retrieval_mode} rank" in flat.columns
    assert staged["scope"].str.contains("discount", case=False).any()
    assert app.code[0].value.strip()  # the first result's code is open
    # Whether stage 2 kept the flat search's top 10, counted here from the run's own rankings.
    response = app.session_state["query:response"]
    flat_top = [r.leaf_id for r in response.flat[:10]]
    kept = sum(1 for r in response.results[:10] if r.leaf_id in flat_top)
    said = texts(app)
    if kept == len(flat_top):
        assert f"The two stages agree with the flat search on the top {len(flat_top)}" in said
    else:
        assert f"holds {kept} of the flat search's top {len(flat_top)}" in said
    assert f"at the **{response.regions[0].level}** level" in said
    history = app.dataframe[-1].value
    assert "take a percentage off a price" in set(history["query"])

    # A rerun without a new query does not ask (or record) it again.
    app.run()
    assert list(app.dataframe[-1].value["query"]).count("take a percentage off a price") == 1

    # Opening a flat-only result or another one shows its code with its parent's context.
    picker = next(box for box in app.selectbox if box.label == "Result")
    picker.select_index(len(picker.options) - 1).run()
    assert_clean(app)
    assert "Its parent group" in texts(app)


def test_query_page_asks_at_the_definition_or_type_level_when_the_sidebar_says_so() -> None:
    app = open_page(fresh_session(), "pages/5_Query.py")
    app.text_input(key="query:text").input("a repository of items kept in a database").run()
    assert_clean(app)
    mixed = app.session_state["query:response"].regions
    assert "file" in {r.level for r in mixed}
    said = texts(app)
    assert "Where to look · files and definitions" in said and "ask at the type level" in said
    control = next(c for c in app.sidebar.segmented_control if c.label == "region_levels")
    control.set_value("definition").run()
    app.button(key="query:search").click().run()
    assert_clean(app)
    regions = app.session_state["query:response"].regions
    assert regions and {r.level for r in regions} == {"definition"}
    said = texts(app)
    assert "Where to look · definitions (asked at the definition level)" in said
    assert "the list holds no files" in said and "Each top-level definition" in said

    control = next(c for c in app.sidebar.segmented_control if c.label == "region_levels")
    control.set_value("type").run()
    app.button(key="query:search").click().run()
    assert_clean(app)
    classes = {
        node.name
        for path in SAMPLE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    }
    regions = app.session_state["query:response"].regions
    assert regions and all(r.level == "definition" and r.name.rsplit(".", 1)[-1] in classes for r in regions)
    said = texts(app)
    assert "Where to look · types (asked at the type level)" in said and "the list holds types alone" in said
    assert "Each type (a nested one too) that holds one of" in said


def test_hierarchy_page_previews_the_current_parameters_before_they_are_saved() -> None:
    """The Similarity page's counts follow the sliders; the Hierarchy page showed only the saved
    set until the parameters were saved. Now it previews them, with the same counts."""
    app = open_page(fresh_session(), "pages/3_Similarity.py")
    assert "Unsaved preview" not in texts(app)
    app.slider(key=THRESHOLD_SLIDER).set_value(0.75).run()
    assert_clean(app)
    groups_on_similarity = metric(app, "Mid-level groups")
    open_page(app, "pages/4_Hierarchy.py")
    said = texts(app)
    assert "Unsaved preview: the current parameters" in said and "similarity\\_drop\\_threshold" in said
    assert metric(app, "Groups (mid), preview") == groups_on_similarity
    assert metric(app, "Groups (mid), preview") != metric(app, "Groups (mid)")  # the saved set's
    app.button(key="param:reset").click().run()
    assert "Unsaved preview" not in texts(app)


def picked_result(app: AppTest) -> tuple[str, str]:
    """The Result picker's label and the header of the code shown under it."""
    picker = next(box for box in app.selectbox if box.label == "Result")
    header = next(t.value for t in app.text if " · score " in t.value)
    return picker.options[picker.index], header


def test_query_page_names_what_the_shipped_mode_did_and_why_each_leaf_is_there() -> None:
    from hsc import Parameters

    app = open_page(fresh_session(), "pages/5_Query.py")
    shipped = Parameters()
    assert f"here `{shipped.retrieval_mode}`" in texts(app) and "stage1_leaf_share" in texts(app)
    for query in ("take a percentage off a price", "add tax to a price", "parse a csv line into an item"):
        app.text_input(key="query:text").input(query).run()
        assert_clean(app)
        response = app.session_state["query:response"]
        assert response.query == query and response.mode == shipped.retrieval_mode
        said = texts(app)
        # The query's own numbers: the groups stage 1 opened (not mid_level_top_k), the leaves
        # they held, the BM25 leaves from elsewhere, and the leaves scored.
        assert f"stage 1 opened **{len(response.opened_group_ids)} groups**" in said
        assert f"holding {response.opened_leaves} leaves" in said
        assert f"BM25 found {response.lexical_candidates} leaves" in said
        assert f"**{response.leaves_compared} of {response.flat_leaves_compared} leaves**" in said
        assert response.opened_leaves <= response.leaves_compared

        staged, flat = app.dataframe[0].value, app.dataframe[1].value
        for frame in (staged, flat):
            assert not frame.isna().any().any()  # a missing rank is an empty cell, never "None"
            assert frame["where"].str.contains(r"\.py L\d+(?:–\d+)?$").all()  # path and line range
            assert (frame["cosine"] + frame["BM25"] - frame["score"]).abs().max() < 0.0015
        group_rank = {g.node_id: g.rank for g in response.groups}
        for result, why in zip(response.results, staged["why"], strict=True):
            rank = group_rank.get(result.parent_id)
            if rank is None:  # BM25 brought it in from a group stage 1 did not open
                assert why == "BM25 (group not opened)" and result.lexical_score > 0
            else:
                assert why.startswith(f"group #{rank}")
                assert ("(widened)" in why) == (rank > shipped.mid_level_top_k)
                assert ("+ BM25" in why) == (result.lexical_score > 0)

        # The picker names the hit whose code is open: this query's first, not the last query's.
        label, header = picked_result(app)
        best = response.results[0]
        lines = f"L{best.start_line}" + (f"–{best.end_line}" if best.end_line != best.start_line else "")
        assert label == f"two-stage #1 · {best.scope} · {best.path} {lines}"
        assert header.startswith(f"{best.path} · {lines}")
        assert best.text in [block.value for block in app.code]  # the code under the picker

    # The seed's dense two stages, then the flat search: each page says what that mode did.
    for mode, said in (("two-stage", "Stage 2 scored"), ("flat", "every one of the")):
        control = next(c for c in app.sidebar.segmented_control if c.label == "retrieval_mode")
        control.set_value(mode).run()
        app.button(key="query:search").click().run()
        assert_clean(app)
        response = app.session_state["query:response"]
        assert response.mode == mode and f"This query, `{mode}`: " in texts(app) and said in texts(app)
        assert "BM25" not in app.dataframe[0].value.columns
        assert ("why" in app.dataframe[0].value.columns) == (mode == "two-stage")


def test_query_page_shows_the_context_pack_at_its_budget(app_database: Path) -> None:
    app = open_page(fresh_session(), "pages/5_Query.py")
    app.text_input(key="query:text").input("take a percentage off a price").run()
    assert_clean(app)
    assert "What a model would be given" in texts(app)

    def shown_pack() -> tuple[int, list[tuple], str]:
        [(label, value)] = [(m.label, m.value) for m in app.metric if m.label.startswith("Budget used")]
        used, budget = int(value.replace(",", "")), int(label.split(" of ")[1].split()[0].replace(",", ""))
        [spans] = [d.value for d in app.dataframe if "why it is here" in d.value.columns]
        [prompt] = [c.value for c in app.code if c.value.startswith("### ")]
        assert used == spans["tokens"].sum() <= budget
        rows = spans[["role", "where", "tokens", "why it is here"]].itertuples(index=False)
        return budget, list(rows), prompt

    budget, spans, prompt = shown_pack()
    assert budget == DEFAULT_BUDGET and spans[0][0] == "hit" and "def apply_discount" in prompt

    # A smaller budget reruns only the pack, and shows what the library gives for it.
    app.number_input(key="query:budget").set_value(300).run()
    assert_clean(app)
    budget, spans, prompt = shown_pack()
    with Index.open(app_database) as index:
        repository_id = index.repository_id(SAMPLE)
        pack = index.context(
            "take a percentage off a price", 300, Parameters().retrieval_mode, repository_id=repository_id
        )
    assert budget == 300 and prompt == pack.text
    assert sorted(spans) == sorted(
        (s.role, f"{s.path} {line_range(s.start_line, s.end_line)}", s.tokens, s.reason) for s in pack.spans
    )
