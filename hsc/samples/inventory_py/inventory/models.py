"""Core data model for the inventory service.

The classes here are plain dataclasses with a few helper methods. They carry
no database or file-format knowledge; parsing and persistence live in their
own modules and convert to and from these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Dict, Iterator, List, Optional

DEFAULT_REORDER_POINT = 10
DEFAULT_UNIT = "each"


@dataclass(frozen=True)
class Item:
    """A stock-keeping unit: something the business buys and sells."""

    sku: str
    name: str
    unit_price: Decimal
    category: str = "general"
    unit: str = DEFAULT_UNIT
    tags: tuple = ()

    def with_price(self, new_price: Decimal) -> "Item":
        """Return a copy of this item with a different unit price.

        Items are immutable, so price changes always produce a new object.
        Negative prices are rejected because they would corrupt valuations.
        """
        if new_price < 0:
            raise ValueError(f"price for {self.sku} cannot be negative")
        return replace(self, unit_price=new_price)

    def has_tag(self, tag: str) -> bool:
        """Check whether the item carries a tag, ignoring case."""
        wanted = tag.strip().lower()
        return any(existing.lower() == wanted for existing in self.tags)

    def to_dict(self) -> Dict[str, object]:
        """Convert the item into a JSON-friendly dictionary.

        Decimal prices are written as strings so that no precision is lost
        when the dictionary is serialised and read back later.
        """
        return {
            "sku": self.sku,
            "name": self.name,
            "unit_price": str(self.unit_price),
            "category": self.category,
            "unit": self.unit,
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, data: Dict[str, object]) -> "Item":
        """Build an item from a dictionary produced by ``to_dict``.

        Missing optional keys fall back to the dataclass defaults, and the
        price is always converted back to a Decimal.
        """
        return cls(
            sku=str(data["sku"]),
            name=str(data["name"]),
            unit_price=Decimal(str(data["unit_price"])),
            category=str(data.get("category", "general")),
            unit=str(data.get("unit", DEFAULT_UNIT)),
            tags=tuple(data.get("tags", ())),
        )


@dataclass
class StockLevel:
    """How many units of one item a warehouse holds, and how many are promised."""

    sku: str
    on_hand: int
    reserved: int = 0
    reorder_point: int = DEFAULT_REORDER_POINT

    @property
    def available(self) -> int:
        """Units that can still be sold: on hand minus reserved, never below zero."""
        return max(self.on_hand - self.reserved, 0)

    def is_low(self) -> bool:
        """Report whether available stock has dropped to the reorder point."""
        return self.available <= self.reorder_point

    def reserve(self, quantity: int) -> None:
        """Hold back units for a pending order.

        Raises ValueError when the request is not positive or when there are
        not enough available units to cover it, so callers never oversell.
        """
        if quantity <= 0:
            raise ValueError("reservation quantity must be positive")
        if quantity > self.available:
            raise ValueError(
                f"cannot reserve {quantity} of {self.sku}: only {self.available} available"
            )
        self.reserved += quantity

    def release(self, quantity: int) -> None:
        """Give back previously reserved units, for example after a cancelled order."""
        if quantity <= 0:
            raise ValueError("release quantity must be positive")
        self.reserved = max(self.reserved - quantity, 0)

    def receive(self, quantity: int) -> None:
        """Record a delivery from a supplier by adding units to the on-hand count."""
        if quantity <= 0:
            raise ValueError("received quantity must be positive")
        self.on_hand += quantity


@dataclass
class Warehouse:
    """A physical site that stores items in numbered locations (aisles and bins)."""

    code: str
    name: str
    levels: Dict[str, StockLevel] = field(default_factory=dict)
    locations: List["Warehouse.Location"] = field(default_factory=list)

    @dataclass
    class Location:
        """One shelf position inside a warehouse, identified by aisle and bin."""

        aisle: str
        bin: int
        capacity: int = 100
        skus: List[str] = field(default_factory=list)

        def label(self) -> str:
            """Render the location as a short human label such as ``B-07``."""
            return f"{self.aisle.upper()}-{self.bin:02d}"

        def has_room(self, extra_skus: int = 1) -> bool:
            """Tell whether the location can take more distinct SKUs."""
            return len(self.skus) + extra_skus <= self.capacity

    def add_location(self, aisle: str, bin_number: int, capacity: int = 100) -> "Warehouse.Location":
        """Create and register a new shelf location.

        Duplicate aisle/bin pairs are refused because pickers rely on the
        label being unique within a site.
        """
        for existing in self.locations:
            if existing.aisle == aisle and existing.bin == bin_number:
                raise ValueError(f"location {existing.label()} already exists")
        location = Warehouse.Location(aisle=aisle, bin=bin_number, capacity=capacity)
        self.locations.append(location)
        return location

    def locate(self, sku: str) -> Optional["Warehouse.Location"]:
        """Find the first shelf location holding the given SKU, if any."""
        for location in self.locations:
            if sku in location.skus:
                return location
        return None

    def stock_for(self, sku: str) -> StockLevel:
        """Return the stock level for a SKU, creating an empty one on first use."""
        if sku not in self.levels:
            self.levels[sku] = StockLevel(sku=sku, on_hand=0)
        return self.levels[sku]

    def iter_low_stock(self) -> Iterator[StockLevel]:
        """Yield every stock level at or below its reorder point, sorted by SKU."""
        for sku in sorted(self.levels):
            level = self.levels[sku]
            if level.is_low():
                yield level

    def total_units(self) -> int:
        """Count all units on hand across every SKU in the warehouse."""
        return sum(level.on_hand for level in self.levels.values())
