"""Notebook 04 against the real charts server: input_required, the retry, replicas, and rejected states."""

from __future__ import annotations

import json
import secrets
import tempfile
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import AESGCMRequestStateCodec
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ElicitResult, InputRequiredResult, InputResponses

from labkit.host import (
    GatePolicy,
    Host,
    ServerSpec,
    ToolCall,
    http_server,
    http_transport,
    scripted_form,
    stdio_transport,
)
from labkit.lessons import run_scenario, tool_results_sent
from labkit.trace import Trace
from servers.charts import QUESTION
from tests.servers_helpers import driven_by_hand

TOOL = "render_error_trend"
ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}
TEAM: InputResponses = {"space": ElicitResult(action="accept", content={"space": "team"})}
REJECTED = "Invalid or expired requestState"
POLICY = GatePolicy(auto_approve=frozenset({TOOL}))


async def _ask(client: Client, arguments: Mapping[str, str] = ARGS) -> InputRequiredResult:
    first = await client.session.call_tool(TOOL, dict(arguments), allow_input_required=True)
    assert isinstance(first, InputRequiredResult)
    return first


async def _retry(client: Client, state: str | None, arguments: Mapping[str, str] = ARGS) -> Any:
    return await client.session.call_tool(
        TOOL, dict(arguments), input_responses=TEAM, request_state=state, allow_input_required=True
    )


def _log(errlog) -> list[str]:
    errlog.seek(0)
    return errlog.read().splitlines()


async def test_round_one_asks_and_the_retry_has_a_new_id_and_the_same_bytes():
    trace = Trace()
    async with Client(stdio_transport("charts", trace), elicitation_callback=driven_by_hand) as charts:
        first = await _ask(charts)
        final = await _retry(charts, first.request_state)
    assert set(first.input_requests) == {"space"}
    assert first.input_requests["space"].params.message == QUESTION
    assert first.input_requests["space"].params.requested_schema["properties"]["space"]["enum"] == ["personal", "team"]
    round_1, retry = [e for e in trace if e.kind == "jsonrpc.request" and e.name == TOOL]
    asked = next(e for e in trace if e.kind == "jsonrpc.response" and e.ref == round_1.ref).payload["result"]
    assert asked["resultType"] == "input_required" and "content" not in asked
    assert retry.ref != round_1.ref
    assert retry.payload["params"]["arguments"] == round_1.payload["params"]["arguments"]
    assert retry.payload["params"]["requestState"].encode() == asked["requestState"].encode()
    assert retry.payload["params"]["inputResponses"] == {"space": {"action": "accept", "content": {"space": "team"}}}
    assert not final.is_error and final.structured_content["space"] == "team"
    assert "asked-space" not in asked["requestState"]  # sealed: the client cannot read the server's plaintext


async def _replicas(keys: Mapping[str, str]) -> tuple[dict[str, object], dict[str, list[str]], dict[str, str | None]]:
    """Round 1 on replica A, the retry on each other replica; what each returned and logged."""
    logs = {name: tempfile.TemporaryFile(mode="w+") for name in keys}  # noqa: SIM115 - read after the servers end
    outcomes: dict[str, object] = {}
    trace = Trace()
    with http_server("charts", env={"LABKIT_REQUEST_STATE_KEY": keys["A"]}, errlog=logs["A"]) as url_a:
        async with Client(http_transport(url_a, trace, server="A"), elicitation_callback=driven_by_hand) as replica_a:
            first = await _ask(replica_a)
        for name in [n for n in keys if n != "A"]:
            with http_server("charts", env={"LABKIT_REQUEST_STATE_KEY": keys[name]}, errlog=logs[name]) as url:
                assert url != url_a
                async with Client(
                    http_transport(url, trace, server=name), elicitation_callback=driven_by_hand
                ) as replica:
                    try:
                        outcomes[name] = await _retry(replica, first.request_state)
                    except MCPError as error:
                        outcomes[name] = error
    return outcomes, {name: _log(log) for name, log in logs.items()}, {"state": first.request_state}


async def test_a_replica_that_shares_the_key_finishes_the_call_and_one_with_another_key_rejects_it():
    shared = secrets.token_urlsafe(32)
    outcomes, logs, sealed = await _replicas({"A": shared, "B": shared, "C": secrets.token_urlsafe(32)})
    finished, rejected = outcomes["B"], outcomes["C"]
    assert isinstance(finished, CallToolResult) and finished.structured_content["space"] == "team"
    assert isinstance(rejected, MCPError) and rejected.error.code == INVALID_PARAMS
    assert rejected.error.message == REJECTED and rejected.error.data == {"reason": "invalid_request_state"}
    assert logs["C"] == ["requestState rejected on tools/call: unknown key"] and logs["B"] == []
    claims = json.loads(AESGCMRequestStateCodec([shared.encode()]).unseal(sealed["state"]))
    assert (claims["m"], claims["t"], claims["aud"]) == ("tools/call", TOOL, "charts")
    assert claims["s"].startswith("render_error_trend/asked-space/v2/")  # then the save's idempotency key
    assert round(claims["exp"] - claims["iat"]) == 600


async def test_tampered_replayed_and_expired_states_are_rejected_with_the_reason_only_in_the_server_log():
    errlog = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - read after the server ends
    seen = {}
    env = {"LABKIT_REQUEST_STATE_TTL": "1"}
    async with Client(
        stdio_transport("charts", Trace(), env=env, errlog=errlog), elicitation_callback=driven_by_hand
    ) as charts:
        token = (await _ask(charts)).request_state
        middle = len(token) // 2
        tries = {
            "tampered": (ARGS, token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]),
            "replayed": ({**ARGS, "service": "payment-service"}, token),
            "expired": (ARGS, token),
        }
        for case, (arguments, state) in tries.items():
            if case == "expired":
                await anyio.sleep(1.3)
            with pytest.raises(MCPError) as raised:
                await _retry(charts, state, arguments)
            seen[case] = (raised.value.error.code, raised.value.error.message)
    assert set(seen.values()) == {(INVALID_PARAMS, REJECTED)}
    assert _log(errlog) == [
        f"requestState rejected on tools/call: {reason}" for reason in ("seal", "request binding", "expired")
    ]


async def test_the_ttl_setting_shortens_a_states_life_and_a_state_within_it_still_works():
    key = secrets.token_urlsafe(32)
    env = {"LABKIT_REQUEST_STATE_KEY": key, "LABKIT_REQUEST_STATE_TTL": "5"}
    async with Client(stdio_transport("charts", Trace(), env=env), elicitation_callback=driven_by_hand) as charts:
        first = await _ask(charts)
        claims = json.loads(AESGCMRequestStateCodec([key.encode()]).unseal(first.request_state))
        assert round(claims["exp"] - claims["iat"]) == 5
        assert (await _retry(charts, first.request_state)).structured_content["space"] == "team"


@pytest.mark.parametrize("cap, completes", [(1, True), (0, False)])
async def test_the_hosts_cap_on_rounds(cap, completes):
    trace = Trace()
    async with Host(
        trace,
        [ServerSpec("charts")],
        policy=POLICY,
        elicit=scripted_form({"space": "personal"}),
        input_required_max_rounds=cap,
    ) as host:
        result = await host.router.execute(ToolCall("c1", TOOL, ARGS))
    if completes:
        assert not result.is_error and '"space": "personal"' in result.text
    else:
        assert result.is_error and "kept asking for more input" in result.text
        # What the model reads says what happened; the SDK's advice to a programmer stays in the trace.
        assert "manually" not in result.text and "(0 round(s) of questions)" in result.text
        assert "manually" in trace.of_kind("host.error")[-1].payload["detail"]
        assert host.audit.entries[-1].outcome == "input rounds exceeded"
    assert len(trace.of_kind("host.form")) == cap


async def test_the_model_sees_nothing_of_the_form_only_the_final_result():
    run = await run_scenario("canonical")
    bodies = [json.dumps(e.payload["body"]) for e in run.trace.of_kind("model.request")]
    for secret in ("requestState", "inputRequests", "inputResponses", "elicitation", QUESTION):
        assert not any(secret in body for body in bodies), secret
    assert run.trace.of_kind("host.form") and run.trace.of_kind("user.answer")
    chart_result = json.loads(tool_results_sent(run.trace.of_kind("model.request")[-1])[0])
    assert chart_result["space"] == "personal"


async def test_the_2025_11_25_era_asks_with_elicitation_create_inside_the_open_call():
    trace = Trace()
    async with Host(
        trace, [ServerSpec("charts")], era="2025-11-25", policy=POLICY, elicit=scripted_form({"space": "team"})
    ) as host:
        result = await host.router.execute(ToolCall("c1", TOOL, ARGS))
    assert not result.is_error
    (call,) = [e for e in trace if e.kind == "jsonrpc.request" and e.name == TOOL]
    (reply,) = [e for e in trace if e.kind == "jsonrpc.response" and e.name == TOOL]
    (ask,) = [e for e in trace if e.kind == "jsonrpc.request" and e.src == "server"]
    assert ask.payload["method"] == "elicitation/create" and call.seq < ask.seq < reply.seq
    assert "requestState" not in call.payload["params"] and "resultType" not in reply.payload["result"]
