"""Human-readable reports about stock.

Reports are built from (Item, StockLevel) pairs as returned by the
repository, and can be rendered either as fixed-width text for terminals or
as Markdown tables for pasting into tickets and wiki pages.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .models import Item, StockLevel
from .pricing import round_money

Pair = Tuple[Item, StockLevel]

REPORT_SETTINGS = {
    "currency_symbol": "$",
    "max_name_width": 32,
    "low_stock_marker": "!",
    "default_lead_time_days": 7,
    "safety_factor": Decimal("1.5"),
}


@dataclass
class ValuationSummary:
    """Totals describing what the stock in a warehouse is worth."""

    total_units: int
    total_value: Decimal
    by_category: Dict[str, Decimal]
    most_valuable_sku: Optional[str]


def format_money(amount: Decimal, symbol: str = REPORT_SETTINGS["currency_symbol"]) -> str:
    """Format an amount with a currency symbol and thousands separators, e.g. "$1,204.50"."""
    rounded = round_money(amount)
    sign = "-" if rounded < 0 else ""
    return f"{sign}{symbol}{abs(rounded):,.2f}"


def truncate(text: str, width: int) -> str:
    """Shorten text to a column width, marking the cut with an ellipsis."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def low_stock_items(pairs: Iterable[Pair]) -> List[Pair]:
    """Select the items whose available stock is at or below their reorder point.

    The result is sorted with the most urgent items first: those with the
    smallest share of their reorder point still available.
    """
    low = [(item, level) for item, level in pairs if level.is_low()]

    def urgency(pair: Pair) -> float:
        _, level = pair
        if level.reorder_point <= 0:
            return 0.0
        return level.available / level.reorder_point

    return sorted(low, key=urgency)


def reorder_quantity(level: StockLevel, daily_sales: float, lead_time_days: Optional[int] = None) -> int:
    """Suggest how many units to order so stock lasts through the supplier lead time.

    The target is expected sales over the lead time multiplied by a safety
    factor, plus the reorder point; whatever is already available is
    subtracted from that target.
    """
    days = lead_time_days or REPORT_SETTINGS["default_lead_time_days"]
    expected = Decimal(str(daily_sales)) * days * REPORT_SETTINGS["safety_factor"]
    target = int(expected) + level.reorder_point
    return max(target - level.available, 0)


def valuation_summary(pairs: Iterable[Pair]) -> ValuationSummary:
    """Add up the value of stock on hand, overall and per category.

    Value is on-hand units times unit price; reserved units still count
    because they have not left the building yet.
    """
    total_units = 0
    total_value = Decimal("0")
    by_category: Dict[str, Decimal] = defaultdict(Decimal)
    best_sku: Optional[str] = None
    best_value = Decimal("-1")
    for item, level in pairs:
        value = item.unit_price * level.on_hand
        total_units += level.on_hand
        total_value += value
        by_category[item.category] += value
        if value > best_value:
            best_sku, best_value = item.sku, value
    return ValuationSummary(total_units, total_value, dict(by_category), best_sku)


def render_text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align_right: Sequence[int] = ()) -> str:
    """Lay out rows as a fixed-width plain-text table with a dashed rule under the header.

    Column widths fit the widest cell. Columns whose index is listed in
    ``align_right`` are right-aligned, which suits numbers.
    """
    widths = [len(h) for h in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def fmt(cells: Sequence[str]) -> str:
        parts = []
        for index, cell in enumerate(cells):
            if index in align_right:
                parts.append(cell.rjust(widths[index]))
            else:
                parts.append(cell.ljust(widths[index]))
        return "  ".join(parts).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines.extend(fmt(row) for row in rows)
    return "\n".join(lines)


def render_markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align_right: Sequence[int] = ()) -> str:
    """Render rows as a GitHub-flavoured Markdown table.

    Pipe characters inside cells are escaped so they do not break the
    table, and numeric columns get a right-alignment marker.
    """
    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    header_line = "| " + " | ".join(escape(h) for h in headers) + " |"
    markers = ["---:" if i in align_right else "---" for i in range(len(headers))]
    rule_line = "| " + " | ".join(markers) + " |"
    body = ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]
    return "\n".join([header_line, rule_line, *body])


def render_stock_report(
    warehouse_code: str,
    pairs: Sequence[Pair],
    daily_sales: Optional[Dict[str, float]] = None,
    style: str = "text",
    report_date: Optional[date] = None,
    include_zero: bool = False,
    category_filter: Optional[str] = None,
) -> str:
    """Produce the full stock report for one warehouse.

    The report has a title, a per-category section listing each item with
    its on-hand, reserved and available counts and its value, a low-stock
    section with suggested reorder quantities, and a valuation footer. The
    same content is rendered as plain text or Markdown depending on
    ``style``. Items with no stock are hidden unless ``include_zero`` is set.
    """
    if style not in ("text", "markdown"):
        raise ValueError(f"unknown report style {style!r}")
    daily_sales = daily_sales or {}
    report_date = report_date or date.today()
    marker = REPORT_SETTINGS["low_stock_marker"]
    name_width = REPORT_SETTINGS["max_name_width"]
    markdown = style == "markdown"
    table = render_markdown_table if markdown else render_text_table

    selected: List[Pair] = []
    for item, level in pairs:
        if category_filter and item.category != category_filter:
            continue
        if level.on_hand == 0 and level.reserved == 0 and not include_zero:
            continue
        selected.append((item, level))

    out: List[str] = []
    title = f"Stock report for {warehouse_code} on {report_date.isoformat()}"
    if markdown:
        out.append(f"# {title}")
    else:
        out.append(title)
        out.append("=" * len(title))
    out.append("")

    if not selected:
        out.append("No stock matches the requested filters.")
        return "\n".join(out) + "\n"

    grouped: Dict[str, List[Pair]] = defaultdict(list)
    for item, level in selected:
        grouped[item.category].append((item, level))

    headers = ["SKU", "Name", "On hand", "Reserved", "Available", "Value"]
    numeric_columns = (2, 3, 4, 5)
    for category in sorted(grouped):
        category_pairs = grouped[category]
        category_value = sum((i.unit_price * l.on_hand for i, l in category_pairs), Decimal("0"))
        heading = f"{category.title()} ({len(category_pairs)} items, {format_money(category_value)})"
        if markdown:
            out.append(f"## {heading}")
        else:
            out.append(heading)
            out.append("-" * len(heading))
        rows = []
        for item, level in category_pairs:
            sku_cell = item.sku + (f" {marker}" if level.is_low() else "")
            rows.append([
                sku_cell,
                truncate(item.name, name_width),
                str(level.on_hand),
                str(level.reserved),
                str(level.available),
                format_money(item.unit_price * level.on_hand),
            ])
        out.append(table(headers, rows, numeric_columns))
        out.append("")

    low = low_stock_items(selected)
    if markdown:
        out.append("## Low stock")
    else:
        out.append("Low stock")
        out.append("---------")
    if low:
        reorder_rows = []
        for item, level in low:
            sales = daily_sales.get(item.sku, 0.0)
            suggestion = reorder_quantity(level, sales) if sales > 0 else level.reorder_point * 2
            reorder_rows.append([
                item.sku,
                truncate(item.name, name_width),
                str(level.available),
                str(level.reorder_point),
                str(suggestion),
            ])
        out.append(table(["SKU", "Name", "Available", "Reorder at", "Suggest"], reorder_rows, (2, 3, 4)))
    else:
        out.append("All items are above their reorder points.")
    out.append("")

    summary = valuation_summary(selected)
    footer = [
        f"Total units on hand: {summary.total_units:,}",
        f"Total stock value: {format_money(summary.total_value)}",
    ]
    if summary.most_valuable_sku:
        footer.append(f"Most valuable line: {summary.most_valuable_sku}")
    if len(summary.by_category) > 1:
        share_parts = []
        for category, value in sorted(summary.by_category.items(), key=lambda kv: -kv[1]):
            share = (value / summary.total_value * 100) if summary.total_value else Decimal("0")
            share_parts.append(f"{category} {share:.0f}%")
        footer.append("Value by category: " + ", ".join(share_parts))
    if markdown:
        out.append("## Summary")
        out.extend(f"- {line}" for line in footer)
    else:
        out.append("Summary")
        out.append("-------")
        out.extend(footer)
    return "\n".join(out) + "\n"
