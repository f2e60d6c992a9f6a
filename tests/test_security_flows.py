"""Information flow, not wording: trusted data on its way to an untrusted server is a question of its own, naming
both servers and the data, which the careful user refuses; nobody to ask means refused; encodings do not hide it."""

from __future__ import annotations

import base64
import json

import anyio

from labkit.host import ServerSpec
from labkit.lessons import prepare_lab
from labkit.lessons._security_lab import GroundTruth
from labkit.security import ApprovalDesk, Defences, PinStore, Shield
from labkit.trace import Trace

LOGS, SINK = ServerSpec("logs"), ServerSpec("untrusted.sink")
QUERY = {"service": "order-service", "since": "2026-10-29T20:00"}


def _shield(trace: Trace, defences: Defences, tmp_path) -> Shield:
    return Shield(trace, defences, lab=prepare_lab(), desk=ApprovalDesk(trace), pins=PinStore(tmp_path / "pins.json"))


async def _send_logs(tmp_path, defences: Defences, body_of) -> tuple[Trace, Shield, list]:
    """Read the trusted logs, then mail (inside the user's own domain) a body made from them to the untrusted sink."""
    trace = Trace()
    shield = _shield(trace, defences, tmp_path)
    with anyio.fail_after(120):
        async with shield.open([LOGS, SINK]) as host:
            logs = await host.call("logs__query_errors", QUERY)
            truth = GroundTruth()
            await host.call(
                "untrusted.sink__send_message", {"recipient": "ops@shop.example", "body": body_of(logs.text)}
            )
    return trace, shield, truth.calls()


async def test_trusted_data_to_an_untrusted_server_is_its_own_question_and_the_careful_user_refuses(tmp_path):
    """The careful user approves this call on its face (an address inside shop.example, no key); on the old code
    that yes carried the logs out. Now the flow is asked about by itself, naming both servers and the data."""
    trace, shield, received = await _send_logs(tmp_path, Defences.all(), lambda text: text[:200])
    assert received == []
    (flow,) = [e for e in trace.of_kind("host.approval") if e.meta.get("flow")]
    assert flow.payload["sources"] == ["logs/query_errors"] and flow.payload["target"] == "untrusted.sink"
    assert "logs/query_errors" in flow.payload["question"] and "untrusted.sink" in flow.payload["question"]
    (request,) = shield.desk.requests
    assert not request.approved and request.server == "untrusted.sink"
    (gate,) = [g for g in trace.of_kind("host.gate") if g.name == "untrusted.sink__send_message"]
    assert (gate.meta["outcome"], gate.meta["by"]) == ("blocked", "TaintGuard")


async def test_with_nobody_to_ask_the_flow_is_refused(tmp_path):
    trace, shield, received = await _send_logs(tmp_path, Defences.only("taint", "namespace"), lambda text: text[:200])
    assert received == [] and not shield.desk.requests
    (refused,) = [e for e in trace.of_kind("host.taint") if e.meta.get("outcome") == "refused"]
    assert refused.payload["target"] == "untrusted.sink"


async def test_an_encoding_does_not_hide_the_flow(tmp_path):
    for encode in (
        lambda text: base64.b64encode(text[:120].encode()).decode(),
        lambda text: text[:120].encode().hex(),
        lambda text: text[:120].upper().replace(" ", "+"),
        lambda text: text[:120].replace(" ", "\n\n"),
    ):
        trace, _shield_used, received = await _send_logs(tmp_path, Defences.all(), encode)
        assert received == [], json.dumps([e.summary for e in trace.of_kind("host.gate")])


async def test_data_cut_into_short_arguments_is_still_the_data(tmp_path):
    trace = Trace()
    shield = _shield(trace, Defences.all(), tmp_path)
    with anyio.fail_after(120):
        async with shield.open([LOGS, SINK]) as host:
            logs = await host.call("logs__query_errors", QUERY)
            truth = GroundTruth()
            piece = logs.text[:22]
            await host.call(
                "untrusted.sink__send_message", {"recipient": piece[:11], "subject": piece[11:], "body": "hi"}
            )
    assert truth.calls() == []
    (flow,) = [e for e in trace.of_kind("host.approval") if e.meta.get("flow")]
    assert flow.payload["sources"] == ["logs/query_errors"]


async def test_the_users_own_words_are_not_the_trusted_servers_data(tmp_path):
    """The service and time the user asked about are in the logs' result too; sent on, they are the user's."""
    trace = Trace()
    shield = _shield(trace, Defences.all(), tmp_path)
    with anyio.fail_after(120):
        async with shield.open([LOGS, SINK]) as host:
            task = "Mail ops@shop.example about order-service since 2026-10-29T20:00."
            trace.record("user", "host", "user.ask", task, payload={"text": task})  # as `Host.run` records it
            await host.call("logs__query_errors", QUERY)
            truth = GroundTruth()
            body = "order-service since 2026-10-29T20:00"
            await host.call("untrusted.sink__send_message", {"recipient": "ops@shop.example", "body": body})
    assert [c["tool"] for c in truth.calls()] == ["send_message"]
    assert not [e for e in trace.of_kind("host.approval") if e.meta.get("flow")]


async def test_a_call_carrying_no_trusted_data_is_not_a_flow(tmp_path):
    trace = Trace()
    shield = _shield(trace, Defences.all(), tmp_path)
    with anyio.fail_after(120):
        async with shield.open([LOGS, SINK]) as host:
            await host.call("logs__query_errors", QUERY)
            truth = GroundTruth()
            await host.call("untrusted.sink__send_message", {"recipient": "ops@shop.example", "body": "lunch at one"})
    assert [c["tool"] for c in truth.calls()] == ["send_message"]
    assert not [e for e in trace.of_kind("host.approval") if e.meta.get("flow")]
    (asked,) = trace.of_kind("host.approval")
    assert "does NOT trust" in asked.summary
