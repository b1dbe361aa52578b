"""Hybrid retrieval's lexical terms: written with the leaves at index time,
kept in step with edits and deletions, brought up to date for databases
indexed before that, and only ever read by a query. Real SQLite, real model."""

from __future__ import annotations

import hashlib
import shutil

import pytest
from conftest import SAMPLE_REPOS

from hsc.api import Index
from hsc.params import RETRIEVAL_MODES, Parameters
from hsc.search.lexical import TermCounts, leaf_term_text, match_expression, terms
from hsc.store import Store

QUERY = "apply a percentage discount to a price"


NAME_WEIGHT = Parameters().lexical_name_weight


def terms_by_leaf(index: Index) -> dict[int, tuple[str, str]]:
    rows = index.store.conn.execute("SELECT rowid, names, terms FROM leaf_terms")
    return {int(row[0]): (row[1], row[2]) for row in rows}


def expected_terms(index: Index) -> dict[int, tuple[str, str]]:
    rows = index.store.leaf_rows(int(index.repositories()[0]["id"]))
    facts = index.store.leaf_facts(int(row["id"]) for row in rows)
    defines = {leaf_id: leaf_facts.defines for leaf_id, leaf_facts in facts.items()}
    return {
        int(row["id"]): leaf_term_text(row["scope"], row["text"], defines.get(int(row["id"]), ()))
        for row in rows
    }


def digest(path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def read_only(database, embedder) -> Index:
    """The database as SQLite's immutable file: any write would fail."""
    return Index(Store(database, create=False, read_only=True), embedder=embedder)


@pytest.fixture(scope="module")
def vector_cache(tmp_path_factory, embedder):
    """A database holding only the sample's cached vectors and summaries, so
    each test's first index run reads and writes everything but embeds nothing."""
    database = tmp_path_factory.mktemp("cache") / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.index(shutil.copytree(SAMPLE_REPOS / "inventory_py", database.parent / "inventory_py"))
        index.store.conn.execute("DELETE FROM repositories")
        index.store.conn.execute("DELETE FROM leaf_terms")
    return database


@pytest.fixture
def repo(tmp_path, vector_cache):
    shutil.copy(vector_cache, tmp_path / "index.db")
    root = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", root)
    return root


def test_terms_are_written_at_index_time_and_a_query_writes_nothing(tmp_path, repo, embedder):
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        assert terms_by_leaf(index) == expected_terms(index)
    beside = sorted((tmp_path / "hnsw").glob("*"))  # side files a writable index saves (hsc.store.sidecar)
    before = digest(database)
    with read_only(database, embedder) as index:
        assert index.store.read_only
        response = index.query(QUERY, record=True)  # the history is skipped, not failed
        assert response.mode == Parameters().retrieval_mode == "hybrid"
        assert response.query_id is None and response.results
        assert response.results[0].scope.endswith("apply_discount")
        assert index.store.lexical_search(
            int(index.repositories()[0]["id"]), '"applydiscount"', 3, NAME_WEIGHT
        )
    assert digest(database) == before
    assert not database.with_name("index.db-wal").exists()
    assert sorted((tmp_path / "hnsw").glob("*")) == beside  # a read-only query saves none


def test_terms_follow_edits_and_deletions(tmp_path, repo, embedder):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        repository_id = int(index.repositories()[0]["id"])
        pricing = repo / "inventory" / "pricing.py"
        pricing.write_text(pricing.read_text().replace("apply_discount", "reduce_by_percentage"))
        gone = sorted((repo / "inventory").glob("*.py"))[0]
        assert gone != pricing
        gone.unlink()
        index.index(repo)
        assert terms_by_leaf(index) == expected_terms(index)  # nothing stale, nothing missing
        assert not index.store.lexical_search(repository_id, '"applydiscount"', 3, NAME_WEIGHT)
        found = index.store.lexical_search(repository_id, '"reducebypercentage"', 3, NAME_WEIGHT)
        assert found and index.node(f"leaf:{found[0][0]}").scope.endswith("reduce_by_percentage")
        index.store.delete_files(repository_id, [row["path"] for row in index.files(repository_id)])
        assert terms_by_leaf(index) == {}


def test_an_older_database_answers_dense_only_until_the_next_index_run(tmp_path, repo, embedder):
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        dense = index.query(QUERY, mode="two-stage", record=False)
        # As an older hsc left it: terms for none of the leaves, and a row of a leaf long gone.
        index.store.conn.execute("DELETE FROM leaf_terms")
        index.store.conn.execute("INSERT INTO leaf_terms (rowid, terms) VALUES (999999, 'stale')")
        index.store.conn.execute("DROP TABLE leaf_terms_complete")  # an older hsc had no such mark
    before = digest(database)
    with read_only(database, embedder) as index:
        response = index.query(QUERY, record=False)
        assert response.mode == "hybrid"
        assert [r.leaf_id for r in response.results] == [r.leaf_id for r in dense.results]
    assert digest(database) == before
    with Index.open(database, embedder=embedder) as index:
        report = index.index(repo)  # nothing changed on disk: an update run
        assert report.files_parsed == 0
        assert terms_by_leaf(index) == expected_terms(index)


def test_a_database_from_before_the_terms_table_is_read_and_then_upgraded(tmp_path, repo, embedder):
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        index.store.conn.execute("DROP TABLE leaf_terms")
        index.store.conn.execute("DROP TABLE leaf_terms_complete")
    with read_only(database, embedder) as index:
        assert index.query(QUERY, record=False).results
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        assert terms_by_leaf(index) == expected_terms(index)


def test_a_table_from_before_the_names_column_is_read_as_before_and_rebuilt_by_the_next_index_run(
    tmp_path, repo, embedder
):
    database = tmp_path / "index.db"
    with Index.open(database, embedder=embedder) as index:
        index.index(repo)
        repository_id = int(index.repositories()[0]["id"])
        rows = index.store.conn.execute("SELECT rowid, terms FROM leaf_terms").fetchall()
        # As an hsc from before the names column left it: one column of terms.
        for statement in (
            "DROP TABLE leaf_term_docs",
            "DROP TABLE leaf_terms",
            "CREATE VIRTUAL TABLE leaf_terms USING fts5(terms, tokenize = 'unicode61')",
            "CREATE VIRTUAL TABLE leaf_term_docs USING fts5vocab(leaf_terms, 'row')",
        ):
            index.store.conn.execute(statement)
        index.store.conn.executemany("INSERT INTO leaf_terms (rowid, terms) VALUES (?, ?)", rows)
        old = index.store.lexical_search(repository_id, '"applydiscount"', 50, NAME_WEIGHT)
        assert old and index.store.term_documents(["applydiscount"])["applydiscount"] == len(old)
    before = digest(database)
    with read_only(database, embedder) as index:
        response = index.query(QUERY, record=False)
        assert response.mode == "hybrid" and any(r.lexical_score for r in response.results)
    assert digest(database) == before
    with Index.open(database, embedder=embedder) as index:
        report = index.index(repo)  # nothing changed on disk: the table is rebuilt all the same
        assert report.files_parsed == 0
        assert terms_by_leaf(index) == expected_terms(index)
        assert index.store.sync_leaf_terms(repository_id, leaf_term_text) == 0  # marked complete
        new = index.store.lexical_search(repository_id, '"applydiscount"', 50, 0.0)
        assert [leaf for leaf, _ in new] == [leaf for leaf, _ in old]


def test_a_query_term_among_the_names_a_leaf_defines_weighs_lexical_name_weight_times(
    tmp_path, repo, embedder
):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        repository_id = int(index.repositories()[0]["id"])
        match = '"applydiscount"'
        plain = dict(index.store.lexical_search(repository_id, match, 50, 0.0))
        named = index.store.lexical_search(repository_id, match, 50, NAME_WEIGHT)
        facts = index.store.leaf_facts(plain)
        definers = {leaf for leaf in plain if "apply_discount" in facts[leaf].defines}
        assert definers and len(plain) > len(definers)  # the definition, and a caller
        assert named[0][0] in definers
        for leaf, score in named:
            if leaf in definers:
                assert score > plain[leaf]
            else:  # a leaf that only uses the name scores as its text alone
                assert score == pytest.approx(plain[leaf])


def test_the_default_mode_is_hybrid_and_the_seed_two_stage_stays_selectable(tmp_path, repo, embedder):
    assert Parameters().retrieval_mode == "hybrid" and "two-stage" in RETRIEVAL_MODES
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        hierarchy_id = index.default_hierarchy()
        assert index.query(QUERY, record=False).mode == "hybrid"
        seed = index.hierarchy_parameters(hierarchy_id, retrieval_mode="Two-Stage")
        staged = index.query(QUERY, params=seed, record=False)
        assert staged.mode == "two-stage" and staged.results
        opened = {g.node_id for g in staged.groups}
        assert all(r.parent_id in opened for r in staged.results)  # the seed's stage 2: opened groups only
        assert index.query(QUERY, params=seed, flat=True, record=False).mode == "flat"
        assert index.query(QUERY, params=seed, mode="hybrid-flat", record=False).mode == "hybrid-flat"
        with pytest.raises(ValueError, match="retrieval_mode"):
            index.hierarchy_parameters(hierarchy_id, retrieval_mode="sideways")


def test_a_warm_index_run_does_not_scan_for_missing_terms_until_a_writer_may_have_left_some(
    tmp_path, repo, embedder, monkeypatch
):
    """Every leaf this hsc writes comes with its terms, so once a repository's leaves all have
    theirs the scan over all leaves is skipped; a write without terms (as an older hsc's) brings
    it back, and it fills them."""
    from hsc.store import lexicon

    scans: list[tuple] = []
    scan = lexicon.LexicalTables._missing_terms

    def counted(self, where, params):
        scans.append(params)
        return scan(self, where, params)

    monkeypatch.setattr(lexicon.LexicalTables, "_missing_terms", counted)
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)  # the first run: terms written with the leaves, then the scan marks them whole
        assert len(scans) == 1
        pricing = repo / "inventory" / "pricing.py"
        pricing.write_text(pricing.read_text().replace("apply_discount", "reduce_by_percentage"))
        index.index(repo)  # an edit: its leaves come with their terms
        index.index(repo)  # nothing changed
        assert len(scans) == 1
        assert terms_by_leaf(index) == expected_terms(index)
        # A file written without terms, as an hsc from before them wrote every file.
        repository_id = int(index.repositories()[0]["id"])
        row = index.store.files(repository_id)[0]
        leaves = index.store.leaf_rows(repository_id)
        from hsc.model import FileReport, Leaf

        mine = [leaf for leaf in leaves if leaf["path"] == row["path"]]
        rewritten = [
            Leaf(
                row["path"],
                "python",
                leaf["node_type"],
                leaf["scope"],
                leaf["start_byte"],
                leaf["end_byte"],
                leaf["start_line"],
                leaf["end_line"],
                leaf["text"],
                leaf["token_count"],
            )
            for leaf in mine
        ]
        report = FileReport(
            row["path"], row["language"], row["status"], size=row["size"], content_hash=row["content_hash"]
        )
        index.store.replace_file(repository_id, report, rewritten, row["chunk_key"], row["embedding_model"])
        assert terms_by_leaf(index) != expected_terms(index)
        index.index(repo)
        assert len(scans) == 2
        assert terms_by_leaf(index) == expected_terms(index)


def test_terms_common_to_more_than_the_share_of_leaves_are_left_out_of_bm25(tmp_path, repo, embedder):
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        index.index(repo)
        rows = terms_by_leaf(index)
        held_by = {term: sum(term in text.split() for _, text in rows.values()) for term in terms(QUERY)}
        share = 0.2
        common = {term for term, leaves in held_by.items() if leaves > share * len(rows)}
        assert common and common != set(held_by)  # the sample has both kinds among the query's terms
        assert index.store.term_documents(list(held_by)) == held_by
        assert index.store.leaf_count() == len(rows)
        counts = TermCounts(index.store.term_documents, index.store.leaf_count)
        assert counts.common(list(held_by), share) == common and counts.common(list(held_by), 1.0) == set()
        match = match_expression(QUERY, counts, share)
        assert match and not any(f'"{term}"' in match for term in common)
        assert match_expression(QUERY) == " OR ".join(f'"{term}"' for term in dict.fromkeys(terms(QUERY)))
        repository_id = int(index.repositories()[0]["id"])
        rare = index.store.lexical_search(repository_id, match, 50, NAME_WEIGHT)
        assert rare and len(rare) < len(
            index.store.lexical_search(repository_id, match_expression(QUERY), 50, NAME_WEIGHT)
        )
        # A hybrid query fuses exactly the leaves the rare terms find.
        loaded = index._load(index.default_hierarchy())
        params = Parameters(lexical_term_share=share)
        hierarchy = index.hierarchy(loaded.hierarchy_id)
        assert index._lexical(loaded, hierarchy, QUERY, params) == {loaded.row_of_leaf[i]: s for i, s in rare}


def test_term_counts_read_each_term_from_the_store_once():
    asked: list[list[str]] = []

    def documents(found: list[str]) -> dict[str, int]:
        asked.append(list(found))
        return dict.fromkeys(found, 5)

    counts = TermCounts(documents, lambda: 10)
    assert counts.common(["a", "b"], 0.4) == {"a", "b"}  # 5 of 10 leaves > 0.4
    assert counts.common(["b", "c"], 0.5) == set()  # not more than half
    assert counts.common(["a"], 1.0) == set() and asked == [["a", "b"], ["c"]]
