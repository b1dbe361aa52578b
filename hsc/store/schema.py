"""What an hsc database holds: its tables, and how a file is known as hsc's own."""

from __future__ import annotations

import sqlite3

import numpy as np

SCHEMA_VERSION = 1

# Identifier-split terms of each leaf (rowid = leaf id) for BM25, written with the file's leaves:
# ``names``, those of its scope and the names it defines (weighed lexical_name_weight times), and
# ``terms``, those of its scope and text. leaf_term_docs counts the leaves that hold each term (read
# from leaf_terms' own index; nothing stored): a query leaves out its terms common to more than
# lexical_term_share of the leaves. A database from before ``names`` keeps its one-column table
# (read as before) until an index run rebuilds it (hsc.store.lexicon).
LEXICAL_TABLES = """
CREATE VIRTUAL TABLE IF NOT EXISTS leaf_terms USING fts5(names, terms, tokenize = 'unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS leaf_term_docs USING fts5vocab(leaf_terms, 'row');
"""

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS repositories (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    embedding_model TEXT,
    tokenizer TEXT,
    chunk_key TEXT,
    parameters TEXT,
    indexed_at REAL
);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    language TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT NOT NULL DEFAULT '',
    chunk_key TEXT NOT NULL DEFAULT '',
    embedding_model TEXT NOT NULL DEFAULT '',
    leaf_count INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL,
    role TEXT NOT NULL DEFAULT '',  -- what the file is for (hsc.chunk.roles); added by a migration
    UNIQUE (repository_id, path)
);
CREATE TABLE IF NOT EXISTS leaves (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    node_type TEXT NOT NULL,
    scope TEXT NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    token_count INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    chunker TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS leaves_by_file ON leaves (file_id, ordinal);
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, content_hash)
);
CREATE TABLE IF NOT EXISTS hierarchies (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    parameters TEXT NOT NULL,
    embedding_model TEXT NOT NULL,
    created_at REAL NOT NULL,
    leaf_count INTEGER NOT NULL,
    group_count INTEGER NOT NULL,
    document_count INTEGER NOT NULL,
    topic_boundaries INTEGER NOT NULL,
    UNIQUE (repository_id, name)
);
CREATE TABLE IF NOT EXISTS nodes (
    id INTEGER PRIMARY KEY,
    hierarchy_id INTEGER NOT NULL REFERENCES hierarchies(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('mid', 'top')),
    ordinal INTEGER NOT NULL,
    file_id INTEGER NOT NULL,
    parent_id INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    token_count INTEGER NOT NULL,
    leaf_count INTEGER NOT NULL,
    summariser TEXT,
    summary_model TEXT,
    summary_hash TEXT
);
CREATE INDEX IF NOT EXISTS nodes_by_hierarchy ON nodes (hierarchy_id, level, ordinal);
CREATE INDEX IF NOT EXISTS nodes_by_parent ON nodes (parent_id);
CREATE TABLE IF NOT EXISTS memberships (
    hierarchy_id INTEGER NOT NULL REFERENCES hierarchies(id) ON DELETE CASCADE,
    leaf_id INTEGER NOT NULL,
    node_id INTEGER NOT NULL,
    PRIMARY KEY (hierarchy_id, leaf_id)
);
CREATE INDEX IF NOT EXISTS memberships_by_node ON memberships (node_id);
CREATE TABLE IF NOT EXISTS summaries (
    summariser TEXT NOT NULL,
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    text TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    PRIMARY KEY (summariser, model, content_hash)
);
CREATE TABLE IF NOT EXISTS definitions (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    scope TEXT NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    PRIMARY KEY (file_id, ordinal)
);
-- A query that names a definition finds it by name (hsc.search.names).
CREATE INDEX IF NOT EXISTS definitions_by_name ON definitions (name);
-- The texts a leaf holding definitions inside it is also embedded by, one per such definition
-- (hsc.embed.definitions); their vectors are the embeddings under these hashes.
CREATE TABLE IF NOT EXISTS definition_vectors (
    leaf_id INTEGER NOT NULL REFERENCES leaves(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (leaf_id, ordinal)
);
CREATE TABLE IF NOT EXISTS leaf_facts (
    leaf_id INTEGER PRIMARY KEY REFERENCES leaves(id) ON DELETE CASCADE,
    imports TEXT NOT NULL,  -- JSON arrays of names
    defines TEXT NOT NULL,
    uses TEXT NOT NULL,
    refs TEXT NOT NULL DEFAULT '[]'  -- member references (self.x, mod.f); added by a migration
);
-- The outline of each outermost definition that holds others (hsc.embed.outlines, made by
-- hsc.index.outlines), by the content hash of its text: its vector is the embedding under that
-- hash (hsc.search.region_outlines).
CREATE TABLE IF NOT EXISTS outline_vectors (
    repository_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (repository_id, path, start_line, end_line)
);
-- Which name each of a file's imports binds, and to what (hsc.model.ImportBinding).
CREATE TABLE IF NOT EXISTS import_bindings (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    local TEXT NOT NULL,
    module TEXT NOT NULL,
    name TEXT NOT NULL,
    level INTEGER NOT NULL,
    line INTEGER NOT NULL,
    PRIMARY KEY (file_id, ordinal)
);
CREATE TABLE IF NOT EXISTS queries (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER REFERENCES repositories(id) ON DELETE CASCADE,
    hierarchy_id INTEGER,
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    parameters TEXT NOT NULL,
    leaves_compared INTEGER NOT NULL,
    elapsed_ms REAL NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS query_results (
    query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    stage TEXT NOT NULL,
    rank INTEGER NOT NULL,
    node_id TEXT NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (query_id, stage, rank)
);
-- Saved benchmark runs: the corpus as the run describes it, JSON of the parameters it ran
-- with and of its whole result. suite: which benchmark ('quality': hsc.quality's retrieval
-- run; 'context': `bench context`), so that no reader takes one for the other.
CREATE TABLE IF NOT EXISTS quality_runs (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    corpus TEXT NOT NULL,
    parameters TEXT NOT NULL,
    result TEXT NOT NULL,
    suite TEXT NOT NULL DEFAULT 'quality'  -- added by a migration: older rows are all quality runs
);
-- A counter per repository bumped by every write of its files rows (a file's leaves are only
-- ever written with its row, in one transaction): the leaf table's side file is keyed by it.
-- (No INSERT OR IGNORE in the bodies: the outer statement's conflict rule would replace it.)
CREATE TABLE IF NOT EXISTS leaf_generations (
    repository_id INTEGER PRIMARY KEY,
    generation INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS files_inserted AFTER INSERT ON files BEGIN
    INSERT INTO leaf_generations SELECT NEW.repository_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM leaf_generations WHERE repository_id = NEW.repository_id);
    UPDATE leaf_generations SET generation = generation + 1 WHERE repository_id = NEW.repository_id;
END;
CREATE TRIGGER IF NOT EXISTS files_updated AFTER UPDATE ON files BEGIN
    INSERT INTO leaf_generations SELECT NEW.repository_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM leaf_generations WHERE repository_id = NEW.repository_id);
    UPDATE leaf_generations SET generation = generation + 1 WHERE repository_id = NEW.repository_id;
END;
CREATE TRIGGER IF NOT EXISTS files_deleted AFTER DELETE ON files BEGIN
    INSERT INTO leaf_generations SELECT OLD.repository_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM leaf_generations WHERE repository_id = OLD.repository_id);
    UPDATE leaf_generations SET generation = generation + 1 WHERE repository_id = OLD.repository_id;
END;
-- A repository all of whose leaves had their lexical terms at this leaf generation: an index run
-- skips the scan for missing terms while it holds. Every file this hsc writes keeps it (its leaves
-- come with their terms); a file written without terms removes it, and a writer that does not
-- know it (an older hsc) moves the generation on without it, so the scan runs again.
CREATE TABLE IF NOT EXISTS leaf_terms_complete (
    repository_id INTEGER PRIMARY KEY REFERENCES repositories(id) ON DELETE CASCADE,
    generation INTEGER NOT NULL
);
-- The dotted scope every leaf of a group shares (hsc.model.common_scope), written with the group:
-- a query that opens thousands of groups describes them without reading their leaves. A group
-- made by an older hsc has no row until its hierarchy is built again, and is read the old way.
CREATE TABLE IF NOT EXISTS group_scopes (
    node_id INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
    scope TEXT NOT NULL
);
-- Index runs started as jobs (hsc.index.jobs): a worker process each, its progress and outcome.
CREATE TABLE IF NOT EXISTS index_jobs (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    state TEXT NOT NULL,
    pid INTEGER,
    parameters TEXT NOT NULL,
    excludes TEXT,
    started_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    ended_at REAL,
    stop_requested INTEGER NOT NULL DEFAULT 0,
    progress TEXT NOT NULL DEFAULT '{}',
    outcome TEXT
);
"""
    + LEXICAL_TABLES
)

LEAF_COLUMNS = [
    "node_type",
    "scope",
    "start_byte",
    "end_byte",
    "start_line",
    "end_line",
    "token_count",
    "content_hash",
    "chunker",
    "text",
]


# "HSC1": PRAGMA application_id of every database hsc creates (SQLite's way to say whose file it is).
APPLICATION_ID = 0x48534331
# The tables that tell a database from before application_id was set apart as hsc's.
_HSC_TABLES = {"meta", "repositories", "files", "leaves", "embeddings"}


def identify(conn: sqlite3.Connection) -> str:
    """Whose database this is, read without writing: "hsc", "empty" (no
    tables: a new file), or "foreign: <why>" for anyone else's."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if application_id == APPLICATION_ID:
        return "hsc"
    if application_id:
        return f"foreign: another application's SQLite database (application_id 0x{application_id:08x})"
    if not tables:
        return "empty"
    if tables >= _HSC_TABLES and conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone():
        return "hsc"  # made before hsc set its application_id
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    return f"foreign: another application's SQLite database (tables: {shown})"


BINDING_COLUMNS = ["local", "module", "name", "level", "line"]

# Columns added to a table after databases were made with it: (table, column, its declaration).
# Opening a writable database adds any that are missing; a read-only one is read without them.
ADDED_COLUMNS = (
    ("leaf_facts", "refs", "TEXT NOT NULL DEFAULT '[]'"),
    ("quality_runs", "suite", "TEXT NOT NULL DEFAULT 'quality'"),
    ("files", "role", "TEXT NOT NULL DEFAULT ''"),
)
# Filled in when the column is added (the role is read from the path alone, hsc.chunk.roles): an
# older database is complete once it is opened writable. A row an older hsc writes later has ''
# and is read as its path's role (hsc.store.Store.file_roles).
COMPLETED_COLUMNS = {("files", "role"): "UPDATE files SET role = hsc_file_role(path) WHERE role = '';"}


def missing_columns(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """The ADDED_COLUMNS this database lacks."""
    out = []
    for table, column, declaration in ADDED_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if present and column not in present:
            out.append((table, column, declaration))
    return out


DEFINITION_COLUMNS = ["kind", "name", "scope", "signature", "doc", "start_line", "end_line"]


# The embeddings table holds float32 or float16 blobs side by side: a blob's length against
# its row's dimension says which, so neither needs a migration or a second cache key.
STORAGE_DTYPES = {"float32": np.float32, "float16": np.float16}


def vector_to_blob(vector: np.ndarray, storage: str = "float32") -> bytes:
    return np.asarray(vector, dtype=np.float32).astype(STORAGE_DTYPES[storage]).tobytes()


def blob_to_vector(blob: bytes, dimension: int) -> np.ndarray:
    """A stored vector as float32, whichever way it was stored."""
    if len(blob) == 4 * dimension:
        return np.frombuffer(blob, dtype=np.float32)
    if len(blob) == 2 * dimension:
        return np.frombuffer(blob, dtype=np.float16).astype(np.float32)
    raise ValueError(f"a stored vector of {len(blob)} bytes does not match its dimension {dimension}")


def blobs_to_matrix(blobs: list[bytes], dimensions: list[int]) -> np.ndarray:
    """Stored vectors as one float32 matrix (a row each): one decode when all
    were stored the same way, as they are unless the storage setting changed."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    dimension, joined = dimensions[0], b"".join(blobs)
    if all(d == dimension for d in dimensions):
        if len(joined) == 4 * dimension * len(blobs):
            return np.frombuffer(joined, dtype=np.float32).reshape(len(blobs), dimension)
        if len(joined) == 2 * dimension * len(blobs):
            halves = np.frombuffer(joined, dtype=np.float16).reshape(len(blobs), dimension)
            return halves.astype(np.float32)
    return np.stack([blob_to_vector(blob, d) for blob, d in zip(blobs, dimensions)])
