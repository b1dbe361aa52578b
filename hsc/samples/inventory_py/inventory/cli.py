"""Command-line entry point for the inventory service.

Usage examples::

    inventory import feeds/acme.csv --db stock.db
    inventory report MAIN --db stock.db --markdown
    inventory quote AB-1042 25 --region US-CA
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from pathlib import Path
from typing import List, Optional

from .models import Item, StockLevel
from .parsing import deduplicate, load_feed
from .persistence import ItemRepository
from .pricing import line_total
from .reporting import format_money, render_stock_report

DEFAULT_DB = "inventory.db"
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_DATA_ERROR = 3


def build_parser() -> argparse.ArgumentParser:
    """Define the sub-commands and their options."""
    parser = argparse.ArgumentParser(prog="inventory", description="Manage warehouse stock.")
    parser.add_argument("--db", default=DEFAULT_DB, help="path to the SQLite database")
    sub = parser.add_subparsers(dest="command", required=True)

    imp = sub.add_parser("import", help="load a CSV or JSON supplier feed")
    imp.add_argument("feed", type=Path)
    imp.add_argument("--warehouse", default="MAIN")
    imp.add_argument("--strict", action="store_true", help="abort if any row is invalid")

    rep = sub.add_parser("report", help="print the stock report for a warehouse")
    rep.add_argument("warehouse")
    rep.add_argument("--markdown", action="store_true")
    rep.add_argument("--category")

    quote = sub.add_parser("quote", help="price an order line")
    quote.add_argument("sku")
    quote.add_argument("quantity", type=int)
    quote.add_argument("--region")
    return parser


def run_import(repo: ItemRepository, feed: Path, warehouse: str, strict: bool) -> int:
    """Import a supplier feed into the database and print a one-line summary.

    In strict mode nothing is written when any row fails validation;
    otherwise valid rows are stored and the errors are listed afterwards.
    """
    rows, errors = load_feed(feed, default_warehouse=warehouse)
    if errors and strict:
        for error in errors:
            print(error.describe(), file=sys.stderr)
        print(f"aborted: {len(errors)} invalid rows", file=sys.stderr)
        return EXIT_DATA_ERROR
    rows = deduplicate(rows)
    repo.save_items([Item(r.sku, r.name, r.unit_price) for r in rows])
    for row in rows:
        repo.set_stock(row.warehouse, StockLevel(row.sku, row.quantity))
    print(f"imported {len(rows)} rows from {feed.name}, {len(errors)} rejected")
    for error in errors:
        print("  " + error.describe())
    return EXIT_OK


def run_quote(repo: ItemRepository, sku: str, quantity: int, region: Optional[str]) -> int:
    """Print the price of an order line for a stored item."""
    item = repo.get_item(sku)
    if item is None:
        print(f"unknown SKU {sku}", file=sys.stderr)
        return EXIT_DATA_ERROR
    total = line_total(item.unit_price, quantity, region=region)
    print(f"{quantity} x {item.name} = {format_money(total)}")
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    """Parse arguments, open the database and dispatch to the chosen command."""
    args = build_parser().parse_args(argv)
    with ItemRepository(args.db) as repo:
        if args.command == "import":
            return run_import(repo, args.feed, args.warehouse, args.strict)
        if args.command == "report":
            pairs = repo.stock_with_items(args.warehouse)
            style = "markdown" if args.markdown else "text"
            print(render_stock_report(args.warehouse, pairs, style=style, category_filter=args.category))
            return EXIT_OK
        if args.command == "quote":
            return run_quote(repo, args.sku, args.quantity, args.region)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
