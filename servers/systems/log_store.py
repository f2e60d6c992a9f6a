"""The log store: a deterministic SQLite log of four services with a spike in order-service last night."""

from __future__ import annotations

import random
import re
import sqlite3
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, Field

from servers.systems._sqlite import open_read_only

__all__ = [
    "LAST_NIGHT",
    "MAX_WINDOW",
    "NOW",
    "SERVICES",
    "SERVICE_HELP",
    "SINCE_HELP",
    "UNTIL_HELP",
    "HourlyCount",
    "LogStore",
    "TopError",
    "format_hour",
    "parse_local_time",
    "parse_window",
    "peak",
]

# How to write the arguments every tool over this store takes, for the tools' schemas.
SERVICE_HELP = 'Service name, e.g. "order-service" (also payment-service, inventory-service, shipping-service).'
SINCE_HELP = 'Start of the window, local time UTC+08:00, format YYYY-MM-DDTHH:MM, e.g. "2026-10-29T20:00".'
UNTIL_HELP = (
    'End of the window (exclusive), same format, e.g. "2026-10-30T09:00"; omitted means now (2026-10-30T09:00). '
    "The window may span at most 7 days."
)

NOW = datetime(2026, 10, 30, 9, 0)
"""The lab's fixed clock, local time UTC+08:00 (all times in the store are naive local times)."""
LAST_NIGHT = datetime(2026, 10, 29, 20, 0)
MAX_WINDOW = timedelta(days=7)
SERVICES = ("order-service", "payment-service", "inventory-service", "shipping-service")

_FIRST_HOUR = datetime(2026, 10, 23, 0, 0)
_DEPLOY_AT = datetime(2026, 10, 29, 21, 55)
# order-service errors per hour after the bad deploy; the rollback lands at 02:10.
_SPIKE = {22: 38, 23: 86, 0: 124, 1: 97, 2: 21}
_BASELINE = {"order-service": 3, "payment-service": 2, "inventory-service": 2, "shipping-service": 1}
_EVERYDAY_ERRORS = {
    "order-service": [
        ("VALIDATION_FAILED", "order rejected: quantity must be positive"),
        ("UPSTREAM_TIMEOUT", "payment-service did not answer within 3000 ms"),
    ],
    "payment-service": [
        ("CARD_DECLINED", "issuer declined the card (code 05)"),
        # Colourised output from a library that assumed a terminal: the logs server must strip it.
        ("GATEWAY_5XX", "\x1b[31mgateway returned 502 Bad Gateway\x1b[0m"),
    ],
    "inventory-service": [
        ("LOCK_CONFLICT", "stock row locked by another transaction, retrying"),
        ("SKU_UNKNOWN", "sku not found in catalogue\x07"),
    ],
    "shipping-service": [("CARRIER_TIMEOUT", "carrier API timed out after 10 s")],
}
_SPIKE_ERRORS = [
    ("DB_POOL_EXHAUSTED", "db pool exhausted: no free connection after 5000 ms (pool size 5, 5 busy)"),
    ("DB_POOL_EXHAUSTED", "db pool exhausted: no free connection after 5000 ms (pool size 5, 5 busy)"),
    ("DB_POOL_EXHAUSTED", "db pool exhausted: no free connection after 5000 ms (pool size 5, 5 busy)"),
    ("UPSTREAM_TIMEOUT", "payment-service did not answer within 3000 ms"),
]
_TIME_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?")
_SEED = 20261030


class HourlyCount(BaseModel):
    hour: str = Field(description="Start of the hour, local time UTC+08:00, e.g. 2026-10-29T22:00")
    errors: int = Field(description="ERROR log lines in that hour")


class TopError(BaseModel):
    code: str = Field(description="Error code, e.g. DB_POOL_EXHAUSTED")
    message: str = Field(description="One example message for that code")
    count: int = Field(description="How many ERROR lines carried that code")


def parse_local_time(field: str, text: str) -> datetime:
    """`2026-10-29T20:00` (optionally with seconds) as a naive local time, else ValueError naming the format."""
    if not _TIME_PATTERN.fullmatch(text.strip()):
        raise ValueError(f"{field} must look like 2026-10-29T20:00 (local time, UTC+08:00); got {text!r}")
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{field} is not a real date and time: {text!r}") from None


def parse_window(since: str, until: str | None) -> tuple[datetime, datetime]:
    """Parse and check a query window (`until` defaults to NOW); ValueError says what a valid value looks like."""
    start = parse_local_time("since", since)
    end = NOW if until is None else parse_local_time("until", until)
    if start >= end:
        raise ValueError(f"since ({format_hour(start)}) must be before until ({format_hour(end)})")
    if end - start > MAX_WINDOW:
        raise ValueError(f"the window may span at most {MAX_WINDOW.days} days; narrow since/until")
    return start, end


def format_hour(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def peak(points: list[HourlyCount]) -> HourlyCount | None:
    """The earliest hour with the most errors, or None when every hour is empty."""
    busiest = max(points, key=lambda point: point.errors, default=None)
    return busiest if busiest is not None and busiest.errors else None


class LogStore:
    """Read access to `logs.sqlite` in a data folder; the file is (re)built whenever it is missing."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "logs.sqlite"

    def services(self) -> list[str]:
        with self._connect() as db:
            return [row[0] for row in db.execute("SELECT DISTINCT service FROM logs ORDER BY service")]

    def hourly_errors(self, service: str, since: datetime, until: datetime) -> list[HourlyCount]:
        """Every hour from the one holding `since` up to `until` (exclusive), empty hours included."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT substr(ts, 1, 13) || ':00', COUNT(*) FROM logs"
                " WHERE service = ? AND level = 'ERROR' AND ts >= ? AND ts < ? GROUP BY 1",
                (service, since.isoformat(), until.isoformat()),
            )
            counts = dict(rows.fetchall())
        hour = since.replace(minute=0, second=0)
        points = []
        while hour < until:
            points.append(HourlyCount(hour=format_hour(hour), errors=counts.get(format_hour(hour), 0)))
            hour += timedelta(hours=1)
        return points

    def top_errors(self, service: str, since: datetime, until: datetime, limit: int = 5) -> list[TopError]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT code, MIN(message), COUNT(*) AS n FROM logs"
                " WHERE service = ? AND level = 'ERROR' AND ts >= ? AND ts < ?"
                " GROUP BY code ORDER BY n DESC, code LIMIT ?",
                (service, since.isoformat(), until.isoformat(), limit),
            )
            return [TopError(code=code, message=message, count=n) for code, message, n in rows]

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return open_read_only(self.path, _fill)


def _fill(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE logs (ts TEXT, service TEXT, level TEXT, code TEXT, message TEXT)")
    db.executemany("INSERT INTO logs VALUES (?, ?, ?, ?, ?)", _generate_rows())
    db.execute("CREATE INDEX logs_by_service_time ON logs (service, ts)")


def _generate_rows() -> list[tuple[str, str, str, str, str]]:
    rng = random.Random(_SEED)
    rows = [(_DEPLOY_AT.isoformat(), "order-service", "INFO", "DEPLOY", "deployed v2.14.0 (db pool size 20 -> 5)")]
    hour = _FIRST_HOUR
    while hour < NOW:
        for service in SERVICES:
            errors = [rng.choice(_EVERYDAY_ERRORS[service]) for _ in range(rng.randint(0, _BASELINE[service] * 2))]
            if service == "order-service" and _DEPLOY_AT < hour < _DEPLOY_AT + timedelta(hours=5):
                errors += [rng.choice(_SPIKE_ERRORS) for _ in range(_SPIKE[hour.hour])]
            for code, message in errors:
                moment = hour + timedelta(seconds=rng.randrange(3600))
                rows.append((moment.isoformat(), service, "ERROR", code, message))
            for _ in range(rng.randint(1, 3)):
                moment = hour + timedelta(seconds=rng.randrange(3600))
                rows.append((moment.isoformat(), service, "WARN", "SLOW_REQUEST", "request took longer than 1 s"))
        hour += timedelta(hours=1)
    return rows
