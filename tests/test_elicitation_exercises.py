"""Notebook 04's exercise checks really run charts servers: right answers pass, typical wrong ones are explained."""

from __future__ import annotations

import secrets

import pytest
from mcp import Client
from mcp_types import ElicitResult

from labkit.host import stdio_transport
from labkit.lessons import TODO, check
from labkit.trace import Trace
from tests.servers_helpers import driven_by_hand

ARGS = {"service": "payment-service", "since": "2026-10-29T20:00"}
TEAM = {"space": ElicitResult(action="accept", content={"space": "team"})}


@pytest.fixture
def shared_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """As §4 of the notebook does: every server started from here on shares one sealing key."""
    key = secrets.token_urlsafe(32)
    monkeypatch.setenv("LABKIT_REQUEST_STATE_KEY", key)
    return key


async def _pending_state() -> str | None:
    async with Client(stdio_transport("charts", Trace()), elicitation_callback=driven_by_hand) as charts:
        return (await charts.session.call_tool("render_error_trend", ARGS, allow_input_required=True)).request_state


def _retry(state: str, **changes) -> dict:
    return {"name": "render_error_trend", "arguments": ARGS, "input_responses": TEAM, "request_state": state, **changes}


async def test_04_1_a_faithful_retry_passes_on_a_new_process_and_a_changed_one_does_not(shared_key):
    state = await _pending_state()
    assert check("04.1", _retry(state)).passed
    wrong_args = check("04.1", _retry(state, arguments={**ARGS, "service": "order-service"}))
    assert not wrong_args.passed and "-32602" in wrong_args.message and "§3" in wrong_args.message
    personal = {"space": ElicitResult(action="accept", content={"space": "personal"})}
    assert "team space" in check("04.1", _retry(state, input_responses=personal)).message
    assert "not yet answered" in check("04.1", TODO).message


def test_04_2_replicas_must_share_a_key_and_a_short_ttl():
    key = secrets.token_urlsafe(32)
    good = {"LABKIT_REQUEST_STATE_KEY": key, "LABKIT_REQUEST_STATE_TTL": "300"}
    assert check("04.2", {"A": good, "B": good}).passed
    other = {**good, "LABKIT_REQUEST_STATE_KEY": secrets.token_urlsafe(32)}
    assert "the keys differ" in check("04.2", {"A": good, "B": other}).message
    assert "at most 300 s" in check("04.2", {"A": {"LABKIT_REQUEST_STATE_KEY": key}, "B": good}).message
    assert "does not set" in check("04.2", {"A": good, "B": {}}).message


def test_04_3_the_answerer_must_decline_unknown_forms_and_pick_team():
    async def always_team(message, schema):
        return {"space": "team"}

    async def careful(message, schema):
        fields = schema.get("properties", {})
        return {"space": "team"} if set(fields) == {"space"} else None

    assert "instead of None" in check("04.3", always_team).message
    assert check("04.3", careful).passed
    assert "async function" in check("04.3", lambda message, schema: None).message
