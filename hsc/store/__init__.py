"""The SQLite file that holds everything: one per index, WAL mode.

This package is the only code that speaks SQL. Each file's ingestion is
written in one transaction, and embeddings are committed before the leaves
that use them, so a run killed at any moment leaves a database that the next
run simply continues. :class:`Store` joins the table groups, one module each.
"""

from __future__ import annotations

from hsc.store.code_facts import CodeFactTables
from hsc.store.evaluations import EvaluationTables
from hsc.store.files import FileTables
from hsc.store.hierarchies import HierarchyTables
from hsc.store.jobs import JobTables
from hsc.store.outlines import OutlineTables
from hsc.store.queries import QueryTables
from hsc.store.schema import APPLICATION_ID, SCHEMA_VERSION, identify

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Store", "identify"]


class Store(
    FileTables, HierarchyTables, QueryTables, EvaluationTables, CodeFactTables, JobTables, OutlineTables
):
    """Typed access to the index database; the only class that speaks SQL."""
