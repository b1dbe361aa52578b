"""Inventory service: stock feeds, pricing, storage and reports."""

from .models import Item, StockLevel, Warehouse

__all__ = ["Item", "StockLevel", "Warehouse"]
__version__ = "0.4.0"
