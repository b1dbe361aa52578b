"""The public API over real indexes of the sample repositories."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hsc.api import Index, parse_node_id
from hsc.params import Parameters

QUERIES = json.loads((Path(__file__).parent / "data" / "sample_queries.json").read_text())


def repo_id(index: Index, root: Path, name: str) -> int:
    found = index.repository_id(root / name)
    assert found is not None
    return found


def test_every_sample_repository_has_enough_leaves_for_a_demo(indexed_samples):
    index, root, reports = indexed_samples
    for name, report in reports.items():
        assert report.leaves >= 40, name
        assert report.files_failed == 0, report.problems


@pytest.mark.parametrize("name", ["inventory_py", "ui_utils_ts", "shortlink_go"])
def test_stored_hierarchy_invariants(indexed_samples, name):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, name)
    hierarchy = index.hierarchies(rid)[0]
    leaves = {row["id"]: row for row in index.leaves(rid)}
    seen: dict[str, str] = {}
    for document in index.documents(hierarchy["id"]):
        assert document.parent_id is None and document.children
        previous_end = 0
        for group_id in document.children:
            group = index.node(group_id)
            assert group.parent_id == document.id and group.path == document.path
            assert document.start_line <= group.start_line <= group.end_line <= document.end_line
            assert group.start_line > previous_end  # groups are disjoint and in order
            previous_end = group.end_line
            ordinals = [leaves[leaf_id]["ordinal"] for leaf_id in group.children]
            assert ordinals == list(range(ordinals[0], ordinals[0] + len(ordinals)))  # contiguous
            for leaf_id in group.children:
                assert leaf_id not in seen, f"{leaf_id} in two groups"
                seen[leaf_id] = group_id
                leaf = leaves[leaf_id]
                assert group.start_line <= leaf["start_line"] <= leaf["end_line"] <= group.end_line
    assert set(seen) == set(leaves)  # every leaf in exactly one group


@pytest.mark.parametrize("mode", [None, "two-stage"])  # the default (hybrid) and the seed's
def test_two_stage_retrieval_finds_the_right_function(indexed_samples, mode):
    index, root, _ = indexed_samples
    hits, misses = 0, []
    for case in QUERIES:
        rid = repo_id(index, root, case["repo"])
        response = index.query(case["query"], repository_id=rid, record=False, mode=mode)
        found = any(
            r.path == case["path"] and r.scope.endswith(case["scope_suffix"]) for r in response.results
        )
        hits += found
        if not found:
            misses.append((case["query"], [(r.path, r.scope) for r in response.results[:3]]))
    assert len(QUERIES) >= 15
    assert hits / len(QUERIES) >= 0.8, misses


def test_two_stage_compares_fewer_leaves_than_flat(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "inventory_py")
    response = index.query("apply a percentage discount to a price", repository_id=rid, mode="two-stage")
    assert 0 < response.leaves_compared < response.flat_leaves_compared
    assert response.flat_leaves_compared == len(index.leaves(rid, with_text=False))
    assert len(response.groups) == Parameters().mid_level_top_k
    group_ids = {g.node_id for g in response.groups}
    for result in response.results:
        assert result.parent_id in group_ids
        assert result.parent is not None and result.parent.id == result.parent_id
        assert result.parent_score == pytest.approx(
            next(g.score for g in response.groups if g.node_id == result.parent_id)
        )
    flat = index.query("apply a percentage discount to a price", repository_id=rid, flat=True, record=False)
    assert flat.leaves_compared == flat.flat_leaves_compared
    assert [r.score for r in flat.results] == sorted((r.score for r in flat.results), reverse=True)
    history = index.query_history(rid)
    assert history[0]["text"] == "apply a percentage discount to a price"


def test_walking_the_tree_from_a_leaf(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "shortlink_go")
    leaf_id = index.leaves(rid)[5]["id"]
    leaf = index.node(leaf_id)
    group = index.parent(leaf_id)
    assert group is not None and leaf_id in group.children and leaf.parent_id == group.id
    document = index.parent(group.id)
    assert document is not None and group.id in document.children
    assert [child.id for child in index.children(group.id)] == group.children
    assert parse_node_id(document.id)[0] == "top"
    with pytest.raises(ValueError):
        index.node("banana:1")


def test_a_leaf_shows_the_facts_its_syntax_tree_gave(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "inventory_py")
    rows = [row for row in index.leaves(rid) if row["scope"] == "inventory.pricing.apply_discount"]
    assert rows
    leaf = index.node(rows[0]["id"])
    assert leaf.context is not None
    [definition] = leaf.context.definitions
    assert definition.kind == "function" and definition.scope == "inventory.pricing.apply_discount"
    assert definition.signature.startswith("def apply_discount(") and definition.doc
    assert "apply_discount" in leaf.context.facts.defines and leaf.context.facts.uses
    # A method's leaf knows the class it sits in, for a context header; read in one call for many leaves.
    methods = [row["id"] for row in index.leaves(rid) if row["node_type"] == "function_definition"]
    contexts = index.leaf_context(methods)
    assert set(contexts) == set(methods)
    assert any(d.kind == "class" for context in contexts.values() for d in context.enclosing)
    group = index.parent(leaf.id)
    assert group is not None and group.context is None


def test_summaries_say_who_made_them(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "inventory_py")
    hierarchy = index.hierarchies(rid)[0]
    documents = index.documents(hierarchy["id"])
    assert all(d.summary and d.summariser == "digest" for d in documents)
    small = index.build(rid, Parameters(maximum_merged_chunk_token_length=64), name="small-limit")
    groups = index.groups(small["id"])
    summarised = [g for g in groups if g.token_count > 64]
    assert summarised and all(g.summary and g.summariser for g in summarised)
    assert all(g.summary is None for g in groups if g.token_count <= 64)


def test_a_boundary_falls_between_unrelated_halves_of_a_file(tmp_path, embedder):
    repo = tmp_path / "two_topics"
    repo.mkdir()
    (repo / "mixed.py").write_text(TWO_TOPICS)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        plan = index.preview(None, Parameters())
        scopes = plan.table.scopes
        seam = next(i for i, s in enumerate(scopes) if s.endswith("send_invoice_email")) - 1
        assert scopes[seam].endswith("determinant")
        assert plan.segmentation.boundaries[seam]
        assert plan.segmentation.similarities[seam] == pytest.approx(
            np.nanmin(plan.segmentation.similarities)
        )
        # The linear-algebra half stays one group: one cut per valley, not one per low pair.
        assert plan.group_starts.tolist()[:2] == [0, seam + 1]


def test_preview_answers_for_new_thresholds_without_writing(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "ui_utils_ts")
    before = index.stats()["tables"]
    loose = index.preview(rid, Parameters(similarity_drop_threshold=0.1))
    strict = index.preview(rid, Parameters(similarity_drop_threshold=0.7))
    assert loose.group_count < strict.group_count
    assert index.stats()["tables"] == before


def test_comparing_two_saved_parameter_sets(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "inventory_py")
    a = index.build(rid, Parameters(similarity_drop_threshold=0.3), name="loose")
    b = index.build(rid, Parameters(similarity_drop_threshold=0.6), name="strict")
    comparison = index.compare(a["id"], b["id"])
    assert comparison["first"]["group_count"] < comparison["second"]["group_count"]
    assert sum(comparison["first"]["group_sizes"]) == comparison["leaf_count"]
    assert sum(comparison["second"]["group_sizes"]) == comparison["leaf_count"]
    assert comparison["moved_leaves"]
    same = index.compare(a["id"], a["id"])
    assert same["moved_leaves"] == []


def test_export_rows_link_both_ways(indexed_samples):
    index, root, _ = indexed_samples
    rid = repo_id(index, root, "ui_utils_ts")
    rows = {row["id"]: row for row in index.export(repository_id=rid)}
    assert {row["level"] for row in rows.values()} == {"leaf", "mid", "top"}
    for row in rows.values():
        for child in row["children"]:
            assert rows[child]["parent_id"] == row["id"]
        if row["parent_id"]:
            assert row["id"] in rows[row["parent_id"]]["children"]
        assert row["text"]
    keys = {
        "id",
        "level",
        "path",
        "start_line",
        "end_line",
        "parent_id",
        "children",
        "scope",
        "node_type",
        "token_count",
        "text",
    }
    assert all(keys <= set(row) for row in rows.values())


TWO_TOPICS = '''"""Two unrelated halves: linear algebra, then invoice e-mail."""


def matrix_multiply(a, b):
    """Multiply two matrices given as lists of rows."""
    rows, inner, cols = len(a), len(b), len(b[0])
    return [[sum(a[i][k] * b[k][j] for k in range(inner)) for j in range(cols)] for i in range(rows)]


def transpose(matrix):
    """Swap the rows and columns of a matrix."""
    return [list(column) for column in zip(*matrix)]


def identity_matrix(size):
    """The square identity matrix with ones on the diagonal."""
    return [[1.0 if i == j else 0.0 for j in range(size)] for i in range(size)]


def determinant(matrix):
    """Determinant of a square matrix by Laplace expansion along the first row."""
    if len(matrix) == 1:
        return matrix[0][0]
    total = 0.0
    for column, value in enumerate(matrix[0]):
        minor = [row[:column] + row[column + 1:] for row in matrix[1:]]
        total += (-1) ** column * value * determinant(minor)
    return total


def send_invoice_email(smtp, customer, invoice):
    """E-mail an invoice to a customer through an SMTP connection."""
    subject = f"Invoice {invoice.number} from Acme"
    body = f"Dear {customer.name},\\n\\nplease find your invoice of {invoice.total} attached."
    smtp.sendmail("billing@acme.example", [customer.email], f"Subject: {subject}\\n\\n{body}")


def format_email_address(name, address):
    """Render a mailbox as 'Name <address>' for an e-mail header."""
    return f"{name} <{address}>"


def schedule_payment_reminder(queue, customer, invoice, days):
    """Queue a reminder e-mail to a customer whose invoice is still unpaid after some days."""
    queue.put({"to": customer.email, "invoice": invoice.number, "after_days": days})


def unsubscribe_from_mailing_list(mailing_list, address):
    """Remove an e-mail address from the newsletter mailing list."""
    mailing_list.discard(address.lower())
'''


def test_building_with_ollama_records_it_and_falls_back_when_it_goes_away(indexed_samples, tmp_path):
    from fake_ollama import FakeOllama

    from hsc.hierarchy.summarize import make_summarizer
    from hsc.params import Settings

    index, root, _ = indexed_samples
    rid = repo_id(index, root, "shortlink_go")
    params = Parameters(maximum_merged_chunk_token_length=200)
    with FakeOllama(reply="Routes short codes to their target URLs.") as server:
        settings = Settings(summariser="ollama", ollama_host=server.url, ollama_model="llama3.2")
        index.use_summarizer(make_summarizer(settings, index.counter))
        assert "Ollama" in index.summariser_description()
        built = index.build(rid, params, name="with-ollama")
        documents = index.documents(built["id"])
        assert all(d.summariser == "ollama" and d.summary_model == "llama3.2" for d in documents)
        assert documents[0].summary.startswith("Routes short codes")
        assert any("handlers.go" in prompt or "ServeHTTP" in prompt for prompt in server.prompts())
        url = server.url
    # The server is gone: the next build says so and uses the digest.
    index.use_summarizer(make_summarizer(Settings(summariser="ollama", ollama_host=url), index.counter))
    try:
        rebuilt = index.build(rid, Parameters(maximum_merged_chunk_token_length=150), name="ollama-gone")
        documents = index.documents(rebuilt["id"])
        assert all(d.summariser == "digest" for d in documents)
        notes = index.store.rows("SELECT note FROM summaries WHERE summariser = 'digest' AND note != ''")
        assert any("did not answer" in row["note"] for row in notes)
    finally:
        index.use_summarizer(make_summarizer(Settings(summariser="digest"), index.counter))
