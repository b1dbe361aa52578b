"""Price calculations: discounts, tax, bulk tiers and currency handling.

All money values are ``Decimal`` and are rounded only at the edges, when a
final amount is shown or stored, to avoid accumulating rounding error.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Dict, Iterable, List, Optional, Sequence

CENT = Decimal("0.01")
ZERO = Decimal("0")

TAX_RATES: Dict[str, Decimal] = {
    "US-CA": Decimal("0.0725"),
    "US-NY": Decimal("0.04"),
    "US-OR": Decimal("0"),
    "DE": Decimal("0.19"),
    "FR": Decimal("0.20"),
    "GB": Decimal("0.20"),
}

EXCHANGE_RATES: Dict[str, Decimal] = {
    "USD": Decimal("1"),
    "EUR": Decimal("0.92"),
    "GBP": Decimal("0.79"),
    "JPY": Decimal("151.40"),
}

ZERO_DECIMAL_CURRENCIES = frozenset({"JPY", "KRW"})


@dataclass(frozen=True)
class PriceTier:
    """A bulk-buy tier: orders of at least ``min_quantity`` units get ``unit_price``."""

    min_quantity: int
    unit_price: Decimal


@dataclass(frozen=True)
class Promotion:
    """A named promotion that takes a percentage off items in some categories."""

    code: str
    percent_off: Decimal
    categories: frozenset = frozenset()
    min_subtotal: Decimal = ZERO

    def applies_to(self, category: str, subtotal: Decimal) -> bool:
        """Check whether the promotion is valid for a category at a given subtotal.

        An empty category set means the promotion applies store-wide.
        """
        if subtotal < self.min_subtotal:
            return False
        return not self.categories or category in self.categories


def round_money(amount: Decimal, currency: str = "USD") -> Decimal:
    """Round an amount to the smallest unit of its currency.

    Uses banker's rounding (half to even) so that large batches of rounded
    values do not drift upwards. Yen and won have no minor unit.
    """
    if currency in ZERO_DECIMAL_CURRENCIES:
        return amount.quantize(Decimal("1"), rounding=ROUND_HALF_EVEN)
    return amount.quantize(CENT, rounding=ROUND_HALF_EVEN)


def apply_discount(price: Decimal, percent: Decimal) -> Decimal:
    """Take a percentage off a price.

    ``percent`` is expressed in whole percent, so 15 means fifteen percent.
    Values outside 0..100 are rejected rather than clamped, since they
    almost always indicate a data-entry mistake.
    """
    if percent < 0 or percent > 100:
        raise ValueError(f"discount percent must be between 0 and 100, got {percent}")
    return price * (Decimal(100) - percent) / Decimal(100)


def apply_fixed_discount(price: Decimal, amount_off: Decimal) -> Decimal:
    """Subtract a fixed amount from a price, never going below zero."""
    if amount_off < 0:
        raise ValueError("amount off cannot be negative")
    return max(price - amount_off, ZERO)


def tax_rate_for(region: str) -> Decimal:
    """Look up the sales tax or VAT rate for a region code such as "US-CA" or "DE".

    A state-level code falls back to its country when the state is unknown,
    and unknown countries are treated as untaxed.
    """
    code = region.strip().upper()
    if code in TAX_RATES:
        return TAX_RATES[code]
    country = code.split("-", 1)[0]
    return TAX_RATES.get(country, ZERO)


def add_tax(net: Decimal, region: str) -> Decimal:
    """Return the gross amount for a net price in the given tax region, rounded to cents."""
    rate = tax_rate_for(region)
    return (net * (Decimal(1) + rate)).quantize(CENT, rounding=ROUND_HALF_UP)


def remove_tax(gross: Decimal, region: str) -> Decimal:
    """Work back from a tax-inclusive price to the net amount before tax."""
    rate = tax_rate_for(region)
    return (gross / (Decimal(1) + rate)).quantize(CENT, rounding=ROUND_HALF_UP)


def tier_price(tiers: Sequence[PriceTier], quantity: int, list_price: Decimal) -> Decimal:
    """Pick the unit price for an order quantity from a list of bulk tiers.

    The tier with the highest minimum quantity that the order still meets is
    chosen. If no tier applies, the normal list price is used.
    """
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    best: Optional[PriceTier] = None
    for tier in tiers:
        if quantity >= tier.min_quantity and (best is None or tier.min_quantity > best.min_quantity):
            best = tier
    return best.unit_price if best is not None else list_price


def validate_tiers(tiers: Sequence[PriceTier]) -> List[str]:
    """Check that bulk tiers make sense and return a list of problems.

    Tiers must have distinct minimum quantities, and a larger quantity must
    never cost more per unit than a smaller one.
    """
    problems: List[str] = []
    ordered = sorted(tiers, key=lambda tier: tier.min_quantity)
    seen = set()
    for tier in ordered:
        if tier.min_quantity in seen:
            problems.append(f"duplicate tier at quantity {tier.min_quantity}")
        seen.add(tier.min_quantity)
    for lower, higher in zip(ordered, ordered[1:]):
        if higher.unit_price > lower.unit_price:
            problems.append(
                f"tier {higher.min_quantity} costs more than tier {lower.min_quantity}"
            )
    return problems


def convert_currency(amount: Decimal, source: str, target: str) -> Decimal:
    """Convert an amount between currencies using the configured USD-based rates.

    The amount is first converted to US dollars and then into the target
    currency, and the result is rounded to the target's minor unit.
    """
    try:
        source_rate = EXCHANGE_RATES[source]
        target_rate = EXCHANGE_RATES[target]
    except KeyError as exc:
        raise ValueError(f"no exchange rate for {exc.args[0]}") from exc
    in_usd = amount / source_rate
    return round_money(in_usd * target_rate, target)


def best_promotion(promotions: Iterable[Promotion], category: str, subtotal: Decimal) -> Optional[Promotion]:
    """Choose the single most generous promotion that applies to a purchase.

    Promotions do not stack; ties are broken by the alphabetically first code
    so that the result is stable.
    """
    eligible = [promo for promo in promotions if promo.applies_to(category, subtotal)]
    if not eligible:
        return None
    eligible.sort(key=lambda promo: (-promo.percent_off, promo.code))
    return eligible[0]


def line_total(
    unit_price: Decimal,
    quantity: int,
    tiers: Sequence[PriceTier] = (),
    promotion: Optional[Promotion] = None,
    region: Optional[str] = None,
) -> Decimal:
    """Compute the final amount for one order line.

    The steps are: pick the bulk tier price, multiply by quantity, apply the
    promotion if any, then add tax for the region if one is given. Only the
    final number is rounded.
    """
    price = tier_price(tiers, quantity, unit_price) if tiers else unit_price
    subtotal = price * quantity
    if promotion is not None:
        subtotal = apply_discount(subtotal, promotion.percent_off)
    if region:
        subtotal = subtotal * (Decimal(1) + tax_rate_for(region))
    return round_money(subtotal)


def margin_percent(cost: Decimal, sale_price: Decimal) -> Decimal:
    """Express the gross margin of a sale as a percentage of the sale price."""
    if sale_price <= 0:
        raise ValueError("sale price must be positive to compute a margin")
    return ((sale_price - cost) / sale_price * 100).quantize(Decimal("0.1"))
