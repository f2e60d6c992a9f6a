"""Schemas are data: a server's schema naming a document elsewhere is flagged when listed, its calls fail closed,
and the host sends no request anywhere; a real listener on 127.0.0.1 stands where the attacker's would."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from labkit.host import GatePolicy, Host, ServerSpec, outside_references, schema_problems
from labkit.lessons import prepare_lab
from labkit.security import Defences, PinStore, Shield, scan_tool
from labkit.trace import Trace
from tests.attack_corpus.runner import Listener


@pytest.fixture
def listener() -> Iterator[Listener]:
    heard = Listener()
    yield heard
    heard.socket.close()


def _spec(technique: str, listener: Listener) -> ServerSpec:
    return ServerSpec("attacks.schemaref", args=("--technique", technique, "--schemas-url", listener.url))


@pytest.mark.parametrize("technique", ["input", "id", "meta"])
async def test_a_call_whose_input_schema_names_an_outside_document_fails_closed_and_fetches_nothing(
    technique, listener
):
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [_spec(technique, listener)]) as host:
            result = await host.call("lookup_ticket", {"ticket": "T-1042"})
    assert result.is_error and "fetches nothing" in result.text
    (gate,) = trace.of_kind("host.gate")
    assert (gate.meta["outcome"], gate.meta["by"]) == ("blocked", "schema")
    assert listener.heard == []


async def test_an_outside_output_schema_fails_the_call_before_it_is_sent_and_the_sdk_fetches_nothing(listener):
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [_spec("output", listener)]) as host:
            result = await host.call("ticket_status", {"ticket": "T-1042"})
            with pytest.raises(Exception, match=r"Unresolvable|status\.json"):  # the SDK's own check: no registry
                await host.pool.client("attacks.schemaref").call_tool("ticket_status", {"ticket": "T-1042"})
    assert result.is_error and "output schema refers outside itself" in result.text
    assert listener.heard == []


async def test_the_shield_flags_such_a_tool_when_it_is_listed(listener, tmp_path):
    trace = Trace()
    shield = Shield(trace, Defences.all(), lab=prepare_lab(), pins=PinStore(tmp_path / "pins.json"))
    with anyio.fail_after(120):
        async with shield.open([_spec("output", listener)]) as host:
            offered = [tool.name for tool in host.tools]
    assert offered == ["attacks.schemaref__lookup_ticket"]
    (withheld,) = [e for e in trace.of_kind("host.scan") if e.meta.get("outcome") == "withheld"]
    assert [f["rule"] for f in withheld.payload] == ["outside-reference"]
    assert listener.heard == []


def test_references_inside_the_schema_and_the_meta_schemas_the_host_holds_are_not_outside():
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/Query"}, "$ref": {"type": "string", "default": "x.json"}},
        "$defs": {"Query": {"type": "string", "enum": ["http://a.example/x.json"]}},
    }
    assert outside_references(schema) == []
    assert schema_problems(schema, {"q": "http://a.example/x.json"}) == []
    assert schema_problems(schema, {"q": 1})[0].startswith("q: 1 is not of type 'string'")
    foreign = {"$schema": "https://schemas.example/mine", "properties": {"a": {"$dynamicRef": "other.json#x"}}}
    assert outside_references(foreign) == [
        ("$schema", "https://schemas.example/mine"),
        ("properties.a.$dynamicRef", "other.json#x"),
    ]
    assert {f.rule for f in scan_tool({"name": "t", "inputSchema": foreign})} == {"outside-reference"}


async def test_a_result_the_sdk_cannot_check_against_its_output_schema_fails_that_call_and_no_other() -> None:
    """An outputSchema whose `$ref` resolves nowhere: the SDK raises as it checks the result; the host turns that into
    this call's error, and the server beside it (and the host) go on."""
    broken = ServerSpec(
        "broken", command=sys.executable, args=(str(Path(__file__).with_name("broken_output_schema_server.py")),)
    )
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [broken, ServerSpec("logs")], policy=GatePolicy(approve_all=True)) as host:
            refused = await host.call("status", {})
            answered = await host.call("query_errors", {"service": "order-service", "since": "2026-10-29T20:00"})
    assert refused.is_error and "PointerToNowhere" in refused.text and not answered.is_error
    assert [e.name for e in trace.of_kind("host.error")] == ["status"]


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}},
        {"$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}}, "$ref": "#/$defs/x"},
    ],
    ids=["itself", "its-own-property", "two-that-point-at-each-other"],
)
def test_a_schema_whose_refs_lead_back_to_themselves_is_a_problem_not_a_recursion_error(schema) -> None:
    (problem,) = schema_problems(schema, {"a": 1})
    assert "refers to itself without end" in problem


def test_a_recursive_schema_that_checks_something_at_each_level_still_checks() -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    assert schema_problems(tree, {"children": [{"children": []}]}) == []
    assert schema_problems(tree, {"children": [{"children": 3}]}) == ["children/0/children: 3 is not of type 'array'"]
