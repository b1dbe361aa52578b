"""SQLite storage for items and stock levels.

The ``ItemRepository`` class hides all SQL from the rest of the service. The
schema is versioned through a small list of migrations that run in order the
first time a database is opened by a newer release.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple, Union

from .models import Item, StockLevel

SCHEMA_VERSION_TABLE = "schema_version"

MIGRATIONS: Sequence[str] = (
    """
    CREATE TABLE items (
        sku TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        unit_price TEXT NOT NULL,
        category TEXT NOT NULL DEFAULT 'general'
    )
    """,
    """
    CREATE TABLE stock_levels (
        warehouse TEXT NOT NULL,
        sku TEXT NOT NULL REFERENCES items(sku) ON DELETE CASCADE,
        on_hand INTEGER NOT NULL DEFAULT 0,
        reserved INTEGER NOT NULL DEFAULT 0,
        reorder_point INTEGER NOT NULL DEFAULT 10,
        PRIMARY KEY (warehouse, sku)
    )
    """,
    "ALTER TABLE items ADD COLUMN unit TEXT NOT NULL DEFAULT 'each'",
    "CREATE INDEX idx_items_category ON items(category)",
)


class RepositoryError(RuntimeError):
    """Raised when the database is in a state the repository cannot handle."""


class ItemRepository:
    """Saves, loads and queries items and their stock levels in SQLite."""

    def __init__(self, path: Union[str, Path] = ":memory:") -> None:
        """Open (or create) the database file and bring its schema up to date."""
        self.path = str(path)
        self._conn = sqlite3.connect(self.path)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA foreign_keys = ON")
        self.migrate()

    def close(self) -> None:
        """Close the underlying connection; the repository is unusable afterwards."""
        self._conn.close()

    def __enter__(self) -> "ItemRepository":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block of statements atomically.

        The block's changes are committed when it finishes normally and
        rolled back if it raises, after which the exception propagates.
        """
        try:
            yield self._conn
            self._conn.commit()
        except Exception:
            self._conn.rollback()
            raise

    def schema_version(self) -> int:
        """Return how many migrations have already been applied to this database."""
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA_VERSION_TABLE} (version INTEGER NOT NULL)"
        )
        row = self._conn.execute(f"SELECT MAX(version) AS v FROM {SCHEMA_VERSION_TABLE}").fetchone()
        return int(row["v"] or 0)

    def migrate(self) -> int:
        """Apply any migrations newer than the stored schema version.

        Each migration runs in its own transaction and records its number,
        so an interrupted upgrade resumes where it stopped. Returns the number
        of migrations applied in this call.
        """
        current = self.schema_version()
        if current > len(MIGRATIONS):
            raise RepositoryError(
                f"database schema v{current} is newer than this release supports (v{len(MIGRATIONS)})"
            )
        applied = 0
        for number, statement in enumerate(MIGRATIONS[current:], start=current + 1):
            with self.transaction() as conn:
                conn.execute(statement)
                conn.execute(f"INSERT INTO {SCHEMA_VERSION_TABLE} (version) VALUES (?)", (number,))
            applied += 1
        return applied

    def save_item(self, item: Item) -> None:
        """Insert an item or overwrite the existing row with the same SKU."""
        with self.transaction() as conn:
            conn.execute(
                """
                INSERT INTO items (sku, name, unit_price, category, unit)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(sku) DO UPDATE SET
                    name = excluded.name,
                    unit_price = excluded.unit_price,
                    category = excluded.category,
                    unit = excluded.unit
                """,
                (item.sku, item.name, str(item.unit_price), item.category, item.unit),
            )

    def save_items(self, items: Sequence[Item]) -> int:
        """Upsert many items in a single transaction and return how many were written."""
        rows = [(i.sku, i.name, str(i.unit_price), i.category, i.unit) for i in items]
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO items (sku, name, unit_price, category, unit) VALUES (?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def get_item(self, sku: str) -> Optional[Item]:
        """Load a single item by SKU, or return None when it does not exist."""
        row = self._conn.execute("SELECT * FROM items WHERE sku = ?", (sku,)).fetchone()
        return self._row_to_item(row) if row else None

    def delete_item(self, sku: str) -> bool:
        """Remove an item and, through the foreign key cascade, its stock levels."""
        with self.transaction() as conn:
            cursor = conn.execute("DELETE FROM items WHERE sku = ?", (sku,))
        return cursor.rowcount > 0

    def find_items(
        self,
        category: Optional[str] = None,
        name_contains: Optional[str] = None,
        max_price: Optional[Decimal] = None,
        limit: int = 100,
    ) -> List[Item]:
        """Search items by category, a substring of the name, and a price ceiling.

        All filters are optional and combine with AND. The price filter is
        applied in Python because prices are stored as exact decimal text.
        """
        clauses: List[str] = []
        params: List[object] = []
        if category:
            clauses.append("category = ?")
            params.append(category)
        if name_contains:
            clauses.append("name LIKE ?")
            params.append(f"%{name_contains}%")
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._conn.execute(f"SELECT * FROM items {where} ORDER BY sku", params).fetchall()
        items = [self._row_to_item(row) for row in rows]
        if max_price is not None:
            items = [item for item in items if item.unit_price <= max_price]
        return items[:limit]

    def set_stock(self, warehouse: str, level: StockLevel) -> None:
        """Write the stock level of one SKU in one warehouse, replacing any previous value."""
        with self.transaction() as conn:
            conn.execute(
                """
                INSERT OR REPLACE INTO stock_levels (warehouse, sku, on_hand, reserved, reorder_point)
                VALUES (?, ?, ?, ?, ?)
                """,
                (warehouse, level.sku, level.on_hand, level.reserved, level.reorder_point),
            )

    def stock_in_warehouse(self, warehouse: str) -> List[StockLevel]:
        """Return every stock level recorded for one warehouse, ordered by SKU."""
        rows = self._conn.execute(
            "SELECT sku, on_hand, reserved, reorder_point FROM stock_levels WHERE warehouse = ? ORDER BY sku",
            (warehouse,),
        ).fetchall()
        return [StockLevel(r["sku"], r["on_hand"], r["reserved"], r["reorder_point"]) for r in rows]

    def adjust_on_hand(self, warehouse: str, sku: str, delta: int) -> int:
        """Add or subtract units for a SKU and return the new on-hand count.

        The update and the read happen in one transaction so concurrent
        adjustments cannot lose updates. Going below zero is refused.
        """
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT on_hand FROM stock_levels WHERE warehouse = ? AND sku = ?",
                (warehouse, sku),
            ).fetchone()
            if row is None:
                raise RepositoryError(f"no stock record for {sku} in {warehouse}")
            new_total = row["on_hand"] + delta
            if new_total < 0:
                raise RepositoryError(f"adjustment would make {sku} negative in {warehouse}")
            conn.execute(
                "UPDATE stock_levels SET on_hand = ? WHERE warehouse = ? AND sku = ?",
                (new_total, warehouse, sku),
            )
        return new_total

    def stock_with_items(self, warehouse: str) -> List[Tuple[Item, StockLevel]]:
        """Join stock levels with their items so reports get names and prices in one query."""
        rows = self._conn.execute(
            """
            SELECT i.*, s.on_hand, s.reserved, s.reorder_point
            FROM stock_levels s JOIN items i ON i.sku = s.sku
            WHERE s.warehouse = ?
            ORDER BY i.category, i.sku
            """,
            (warehouse,),
        ).fetchall()
        return [
            (self._row_to_item(r), StockLevel(r["sku"], r["on_hand"], r["reserved"], r["reorder_point"]))
            for r in rows
        ]

    @staticmethod
    def _row_to_item(row: sqlite3.Row) -> Item:
        """Convert a database row into an Item, restoring the Decimal price."""
        return Item(
            sku=row["sku"],
            name=row["name"],
            unit_price=Decimal(row["unit_price"]),
            category=row["category"],
            unit=row["unit"],
        )
