"""The servers' domain logic without the protocol: stores, checks, cleaning, rate limits, charts, sealing keys."""

from __future__ import annotations

import hashlib
import sqlite3
import statistics
import struct
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from servers import _wiring
from servers.charts import HEIGHT, WIDTH, render_trend_png
from servers.logs import MAX_MESSAGE_CHARS, RateLimiter, build_report, clean_text, summarize
from servers.orders import MAX_LIMIT, clamp_limit, weekly_report_prompt
from servers.plans import look_up_plan
from servers.systems.chart_space import list_charts, save_chart
from servers.systems.log_store import LAST_NIGHT, NOW, LogStore, parse_window
from servers.systems.order_db import STATUSES, OrderDb
from tests.servers_helpers import query


@pytest.fixture
def store(tmp_path: Path) -> LogStore:
    return LogStore(tmp_path)


def _digest(path: Path) -> str:
    rows = query(path, "SELECT * FROM logs ORDER BY rowid")
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def test_the_log_store_is_built_in_one_transaction_once_and_identically_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What keeps a server's first start quick: every row goes in within one transaction (one commit, not one per
    # row), and a store that exists is read as it is, never built again.
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = connect(*args, **kwargs)
        db.set_trace_callback(statements.append)
        return db

    monkeypatch.setattr(sqlite3, "connect", traced)
    first, second = LogStore(tmp_path / "a"), LogStore(tmp_path / "b")
    first.services()
    verbs = Counter(statement.split()[0].upper() for statement in statements)
    assert verbs["INSERT"] > 1000 and verbs["BEGIN"] == verbs["COMMIT"] == 1, verbs
    built = len(statements)
    first.services()
    assert [statement.split()[0].upper() for statement in statements[built:]] == ["SELECT"]
    second.services()
    assert _digest(first.path) == _digest(second.path)
    assert 1000 < query(first.path, "SELECT COUNT(*) FROM logs")[0][0] < 10000


def test_the_log_store_is_rebuilt_when_missing(store: LogStore) -> None:
    before = store.hourly_errors("order-service", LAST_NIGHT, NOW)
    store.path.unlink()
    assert store.hourly_errors("order-service", LAST_NIGHT, NOW) == before
    assert store.path.exists()


def test_order_service_spikes_last_night_after_the_deploy(store: LogStore) -> None:
    week = store.hourly_errors("order-service", LAST_NIGHT - timedelta(days=6), LAST_NIGHT)
    night = build_report(store, "order-service", LAST_NIGHT, NOW)
    usual = statistics.median(point.errors for point in week)
    assert night.peak_errors > 10 * max(usual, 1)
    assert night.peak_hour is not None and "2026-10-29T22:00" <= night.peak_hour <= "2026-10-30T02:00"
    assert night.top_errors[0].code == "DB_POOL_EXHAUSTED"
    deploys = query(store.path, "SELECT ts FROM logs WHERE code = 'DEPLOY' AND service = 'order-service'")
    assert [ts for (ts,) in deploys] == ["2026-10-29T21:55:00"]


def test_hourly_counts_add_up_to_the_raw_rows(store: LogStore) -> None:
    report = build_report(store, "inventory-service", LAST_NIGHT, NOW)
    raw = query(
        store.path,
        "SELECT COUNT(*) FROM logs WHERE service = 'inventory-service' AND level = 'ERROR' AND ts >= ? AND ts < ?",
        LAST_NIGHT.isoformat(),
        NOW.isoformat(),
    )[0][0]
    assert report.total == raw == sum(point.errors for point in report.hourly)
    assert len(report.hourly) == 13 and report.hourly[0].hour == "2026-10-29T20:00"
    assert f"{report.total} errors" in summarize(report)


@pytest.mark.parametrize(
    ("since", "until", "message"),
    [
        ("2026/10/29 20:00", None, "since must look like 2026-10-29T20:00"),
        ("last night", None, "since must look like 2026-10-29T20:00"),
        ("2026-10-29T20:00", "tomorrow", "until must look like 2026-10-29T20:00"),
        ("2026-02-30T20:00", None, "not a real date"),
        ("2026-10-30T10:00", None, "must be before until"),
        ("2026-10-01T00:00", None, "at most 7 days"),
    ],
)
def test_bad_windows_say_what_a_good_one_looks_like(since: str, until: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_window(since, until)


def test_a_good_window_defaults_until_to_now() -> None:
    assert parse_window("2026-10-29T20:00", None) == (LAST_NIGHT, NOW)
    assert parse_window("2026-10-29T20:00:30", "2026-10-29T23:00")[1] == datetime(2026, 10, 29, 23)


def test_clean_text_drops_escapes_and_control_characters_and_caps_length() -> None:
    assert clean_text("\x1b[31mgateway 502\x1b[0m\x07 at\r\nnoon\x00") == "gateway 502 at noon"
    assert clean_text("\x1b]0;title\x07ok") == "ok"
    long = clean_text("x" * 1000)
    assert len(long) == MAX_MESSAGE_CHARS and long.endswith("…")


def test_report_messages_from_the_store_come_out_clean(store: LogStore) -> None:
    report = build_report(store, "payment-service", LAST_NIGHT - timedelta(days=3), NOW)
    assert all(error.message.isprintable() for error in report.top_errors)
    assert "gateway returned 502 Bad Gateway" in [error.message for error in report.top_errors]


def test_the_rate_limiter_counts_per_caller_in_a_sliding_window() -> None:
    now = [0.0]
    limiter = RateLimiter(2, window=60, clock=lambda: now[0])
    assert [limiter.admit("a"), limiter.admit("a")] == [None, None]
    assert limiter.admit("a") == pytest.approx(60)
    assert limiter.admit("b") is None
    now[0] = 30.0
    assert limiter.admit("a") == pytest.approx(30)
    now[0] = 60.0
    assert limiter.admit("a") is None


def test_the_chart_is_a_small_deterministic_png(store: LogStore) -> None:
    points = store.hourly_errors("order-service", LAST_NIGHT, NOW)
    png = render_trend_png("order-service", points)
    assert png == render_trend_png("order-service", points)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and struct.unpack(">II", png[16:24]) == (WIDTH, HEIGHT)
    assert b"tIME" not in png and b"Software" not in png and len(png) < 60_000


def test_charts_land_in_the_chosen_space_only(tmp_path: Path) -> None:
    path = save_chart(tmp_path, "team", "order/service:1", b"png")
    assert path == tmp_path / "spaces" / "team" / "order_service_1.png" and path.read_bytes() == b"png"
    assert list_charts(tmp_path, "team") == [path] and list_charts(tmp_path, "personal") == []
    with pytest.raises(ValueError, match=r"personal, team"):
        save_chart(tmp_path, "public", "x", b"png")  # type: ignore[arg-type]  # the wrong space is the point


def test_orders_are_deterministic_and_cover_every_status(tmp_path: Path) -> None:
    first, second = OrderDb(tmp_path / "a"), OrderDb(tmp_path / "b")
    for status in STATUSES:
        listed = first.by_status(status, MAX_LIMIT)
        assert listed and listed == second.by_status(status, MAX_LIMIT)
        assert [order.created_at for order in listed] == sorted((o.created_at for o in listed), reverse=True)
    assert [clamp_limit(value) for value in (-1, 0, 1, 50, 51)] == [1, 1, 1, 50, 50]


def test_the_weekly_report_prompt_checks_the_week() -> None:
    assert "2026-W44" in weekly_report_prompt("2026-W44")
    with pytest.raises(ValueError, match=r"2026-W44"):
        weekly_report_prompt("week 44")


def test_plans_answer_six_and_three_and_name_the_valid_plans() -> None:
    assert (look_up_plan("family").max_accounts, look_up_plan("personal").max_accounts) == (6, 3)
    with pytest.raises(ValueError, match=r"valid plans: family, personal"):
        look_up_plan("team")


def test_the_sealing_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_wiring.REQUEST_STATE_KEY_ENV, raising=False)
    assert _wiring._request_state_security() is None
    monkeypatch.setenv(_wiring.REQUEST_STATE_KEY_ENV, "k" * 32)
    assert _wiring._request_state_security() is not None
    monkeypatch.setenv(_wiring.REQUEST_STATE_KEY_ENV, "k" * 31)
    with pytest.raises(ValueError, match=r"at least 32 bytes, got 31"):
        _wiring._request_state_security()


def test_the_data_folder_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_wiring.DATA_DIR_ENV, str(tmp_path / "new" / "data"))
    assert _wiring.data_dir() == tmp_path / "new" / "data" and _wiring.data_dir().is_dir()


def test_a_chart_space_replaced_by_a_link_is_refused(tmp_path):
    from servers.systems.chart_space import save_chart

    (tmp_path / "spaces" / "team").mkdir(parents=True)
    (tmp_path / "spaces" / "personal").symlink_to(tmp_path / "spaces" / "team")
    with pytest.raises(ValueError, match=r"personal space .* is a link"):
        save_chart(tmp_path, "personal", "trend", b"png")
    assert list((tmp_path / "spaces" / "team").iterdir()) == []
