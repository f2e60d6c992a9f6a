"""The order database: a deterministic SQLite table of shop orders from 2026-W42 to 2026-W44."""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, Field

from servers.systems._sqlite import open_read_only

__all__ = ["STATUSES", "Order", "OrderDb"]

STATUSES = ("pending", "shipped", "delivered", "cancelled")
_CUSTOMERS = (
    "Hangzhou Cloud Hill Trading",
    "Shanghai Lingang Tools",
    "Shenzhen Nanshan Electronics",
    "Chengdu Panda Foods",
    "Wuhan Riverbank Textiles",
    "Suzhou Garden Furniture",
)
_FIRST_DAY = datetime(2026, 10, 12, 8, 0)
_ORDER_COUNT = 72
_SEED = 44


class Order(BaseModel):
    id: str = Field(description="Order number, e.g. SO-1024")
    customer: str
    amount_cny: float = Field(description="Order total in yuan (CNY)")
    status: str = Field(description="pending, shipped, delivered or cancelled")
    created_at: str = Field(description="Local time UTC+08:00, e.g. 2026-10-28T14:03")


class OrderDb:
    """Read access to `orders.sqlite` in a data folder; the file is (re)built whenever it is missing."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "orders.sqlite"

    def by_status(self, status: str, limit: int) -> list[Order]:
        """The newest `limit` orders with `status`."""
        with open_read_only(self.path, _fill) as db:
            rows = db.execute(
                "SELECT id, customer, amount_cny, status, created_at FROM orders"
                " WHERE status = ? ORDER BY created_at DESC LIMIT ?",
                (status, limit),
            )
            fields = ("id", "customer", "amount_cny", "status", "created_at")
            return [Order(**dict(zip(fields, row, strict=True))) for row in rows]


def _fill(db: sqlite3.Connection) -> None:
    rng = random.Random(_SEED)
    rows = []
    for number in range(_ORDER_COUNT):
        created = _FIRST_DAY + timedelta(minutes=rng.randrange(18 * 24 * 60))
        # Recent orders have had less time to ship, so they are more often still pending.
        age_days = (datetime(2026, 10, 30) - created).days
        status = rng.choices(STATUSES, weights=(6, 3, 1, 1) if age_days < 3 else (1, 3, 6, 1))[0]
        amount = round(rng.uniform(80, 16000), 2)
        rows.append((f"SO-{1024 + number}", rng.choice(_CUSTOMERS), amount, status, f"{created:%Y-%m-%dT%H:%M}"))
    db.execute(
        "CREATE TABLE orders (id TEXT PRIMARY KEY, customer TEXT, amount_cny REAL, status TEXT, created_at TEXT)"
    )
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", rows)
