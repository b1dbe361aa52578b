"""Reading supplier stock feeds.

Suppliers send either CSV exports or JSON documents. Both formats are turned
into ``FeedRow`` records here, after every field has been validated. Rows that
fail validation are collected as ``RowError`` values instead of aborting the
whole import, so one bad line does not block a nightly feed.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Iterable, List, Tuple, Union

SKU_PATTERN = re.compile(r"^[A-Z]{2,4}-\d{3,6}(?:-[A-Z0-9]{1,3})?$")
REQUIRED_COLUMNS = ("sku", "name", "quantity", "unit_price")
MAX_QUANTITY = 1_000_000
FEED_ENCODINGS = ("utf-8-sig", "utf-8", "latin-1")


@dataclass(frozen=True)
class FeedRow:
    """One validated line from a supplier feed."""

    sku: str
    name: str
    quantity: int
    unit_price: Decimal
    warehouse: str


@dataclass(frozen=True)
class RowError:
    """A problem found in a single feed line, with the line number for the report."""

    line: int
    field: str
    message: str

    def describe(self) -> str:
        """Format the error the way it is shown to operators in import summaries."""
        return f"line {self.line}: {self.field}: {self.message}"


def normalize_sku(raw: str) -> str:
    """Clean up a SKU as typed by a human.

    Surrounding whitespace is stripped, letters are upper-cased and any
    underscores or spaces used as separators become dashes, so that
    ``" ab_1234 "`` turns into ``"AB-1234"``.
    """
    cleaned = raw.strip().upper()
    cleaned = re.sub(r"[\s_]+", "-", cleaned)
    return re.sub(r"-{2,}", "-", cleaned)


def is_valid_sku(sku: str) -> bool:
    """Check a SKU against the house format: 2-4 letters, a dash, 3-6 digits, optional variant."""
    return bool(SKU_PATTERN.match(sku))


def parse_quantity(value: str) -> int:
    """Turn a quantity cell into an integer.

    Thousands separators are accepted ("1,200"), but fractions, negative
    numbers and absurdly large values are rejected with a ValueError.
    """
    text = value.strip().replace(",", "")
    if not text:
        raise ValueError("quantity is empty")
    if not text.isdigit():
        raise ValueError(f"quantity {value!r} is not a whole positive number")
    quantity = int(text)
    if quantity > MAX_QUANTITY:
        raise ValueError(f"quantity {quantity} exceeds the limit of {MAX_QUANTITY}")
    return quantity


def parse_price(value: str) -> Decimal:
    """Parse a price cell such as "12.50" or "$1,299.00" into a Decimal.

    Currency symbols and thousands separators are removed first. Prices must
    be non-negative and have at most two decimal places.
    """
    text = value.strip().lstrip("$€£").replace(",", "")
    try:
        price = Decimal(text)
    except InvalidOperation as exc:
        raise ValueError(f"price {value!r} is not a number") from exc
    if price < 0:
        raise ValueError("price cannot be negative")
    if price.as_tuple().exponent < -2:
        raise ValueError(f"price {value!r} has more than two decimal places")
    return price


def validate_row(line: int, record: dict, default_warehouse: str) -> Tuple[Union[FeedRow, None], List[RowError]]:
    """Validate one raw record and convert it into a FeedRow.

    Every field is checked even after the first failure so that the operator
    sees all problems on a line at once. When any error is found the row is
    returned as None together with the list of errors.
    """
    errors: List[RowError] = []
    for column in REQUIRED_COLUMNS:
        if not str(record.get(column, "")).strip():
            errors.append(RowError(line, column, "missing value"))
    if errors:
        return None, errors

    sku = normalize_sku(str(record["sku"]))
    if not is_valid_sku(sku):
        errors.append(RowError(line, "sku", f"{sku!r} does not match the SKU format"))
    try:
        quantity = parse_quantity(str(record["quantity"]))
    except ValueError as exc:
        errors.append(RowError(line, "quantity", str(exc)))
        quantity = 0
    try:
        price = parse_price(str(record["unit_price"]))
    except ValueError as exc:
        errors.append(RowError(line, "unit_price", str(exc)))
        price = Decimal("0")

    if errors:
        return None, errors
    warehouse = str(record.get("warehouse") or default_warehouse).strip().upper()
    return FeedRow(sku, str(record["name"]).strip(), quantity, price, warehouse), []


def read_text(path: Path) -> str:
    """Read a feed file, trying the encodings suppliers are known to use."""
    raw = path.read_bytes()
    for encoding in FEED_ENCODINGS:
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise ValueError(f"{path} is not in a supported text encoding")


def parse_csv_feed(text: str, default_warehouse: str = "MAIN") -> Tuple[List[FeedRow], List[RowError]]:
    """Parse a CSV stock feed with a header row.

    Header names are matched case-insensitively. Line numbers in the errors
    count the header as line 1, matching what a spreadsheet shows.
    """
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None:
        return [], [RowError(1, "header", "file is empty")]
    reader.fieldnames = [name.strip().lower() for name in reader.fieldnames]
    missing = [col for col in REQUIRED_COLUMNS if col not in reader.fieldnames]
    if missing:
        return [], [RowError(1, "header", f"missing columns: {', '.join(missing)}")]

    rows: List[FeedRow] = []
    errors: List[RowError] = []
    for line_number, record in enumerate(reader, start=2):
        row, row_errors = validate_row(line_number, record, default_warehouse)
        if row is not None:
            rows.append(row)
        errors.extend(row_errors)
    return rows, errors


def parse_json_feed(text: str, default_warehouse: str = "MAIN") -> Tuple[List[FeedRow], List[RowError]]:
    """Parse a JSON stock feed.

    The document may be a bare list of records or an object with an
    ``items`` list and an optional top-level ``warehouse`` that applies to
    every record lacking its own.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [RowError(exc.lineno, "document", exc.msg)]
    if isinstance(document, dict):
        default_warehouse = document.get("warehouse", default_warehouse)
        records = document.get("items", [])
    else:
        records = document
    if not isinstance(records, list):
        return [], [RowError(1, "items", "expected a list of records")]

    rows: List[FeedRow] = []
    errors: List[RowError] = []
    for index, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            errors.append(RowError(index, "record", "expected an object"))
            continue
        row, row_errors = validate_row(index, record, default_warehouse)
        if row is not None:
            rows.append(row)
        errors.extend(row_errors)
    return rows, errors


def detect_format(path: Path, text: str) -> str:
    """Guess whether a feed is CSV or JSON from its extension, then its first character."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix == ".json":
        return "json"
    return "json" if text.lstrip().startswith(("[", "{")) else "csv"


def load_feed(path: Path, default_warehouse: str = "MAIN") -> Tuple[List[FeedRow], List[RowError]]:
    """Read and parse a feed file of either format in one call."""
    text = read_text(path)
    if detect_format(path, text) == "json":
        return parse_json_feed(text, default_warehouse)
    return parse_csv_feed(text, default_warehouse)


def deduplicate(rows: Iterable[FeedRow]) -> List[FeedRow]:
    """Merge rows that repeat the same SKU in the same warehouse.

    Quantities are summed and the price from the last occurrence wins,
    because suppliers append corrections to the end of their exports.
    """
    merged: dict = {}
    for row in rows:
        key = (row.warehouse, row.sku)
        if key in merged:
            previous = merged[key]
            merged[key] = FeedRow(row.sku, row.name, previous.quantity + row.quantity, row.unit_price, row.warehouse)
        else:
            merged[key] = row
    return list(merged.values())
