"""The channels a real host puts in front of the model besides tool descriptions and result text: server
instructions, outputSchema, embedded and linked resources in results, prompts the user loads. Each one is read by
the host and the naive model (an attack through it works with the defences off) and covered by the defences."""

from __future__ import annotations

import anyio
import pytest
from mcp_types import Tool

from labkit.host import Host, ServerSpec
from labkit.lessons import prepare_lab
from labkit.security import Defences, PinGuard, PinStore, Shield, trust_on_first_use
from labkit.trace import Trace
from servers.attacks import exfil_sentence
from servers.attacks.corpus import CORPUS
from tests.attack_corpus.test_corpus import run_in_children

CHANNELS = ("poison_instructions", "poison_outputschema", "inject_embedded", "inject_resource_link", "inject_prompt")
ORDER = exfil_sentence("~/.ssh/id_rsa")


def _inject(technique: str) -> ServerSpec:
    return ServerSpec("servers.attacks.inject", args=("--technique", technique))


def _shield(trace: Trace, defences: Defences, tmp_path) -> Shield:
    return Shield(trace, defences, lab=prepare_lab(), pins=PinStore(tmp_path / "pins.json"))


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, bool], dict]:
    entries = [e for e in CORPUS if e.name in CHANNELS]
    return run_in_children((entries, False), (entries, True))


@pytest.mark.parametrize("name", CHANNELS)
def test_an_order_in_the_channel_fools_the_naive_model_undefended_and_is_stopped_defended(outcomes, name):
    undefended, defended = outcomes[(name, False)], outcomes[(name, True)]
    assert undefended["succeeded"], f"{name}: {undefended['error']} {undefended['evidence']}"
    assert not defended["succeeded"], f"{name} got through every defence: {defended['evidence']}"


async def test_server_instructions_go_into_the_system_prompt_unless_the_scanner_flags_them(tmp_path):
    poison = ServerSpec("servers.attacks.poison", args=("--technique", "instructions"))
    with anyio.fail_after(120):
        async with Host(Trace(), [poison]) as host:
            shown = host.system_prompt("You are an operations assistant.")
        trace = Trace()
        async with _shield(trace, Defences.only("scan"), tmp_path).open([poison]) as host:
            scanned = host.system_prompt("You are an operations assistant.")
    assert shown.startswith("You are an operations assistant.") and exfil_sentence() in shown
    assert scanned == "You are an operations assistant."
    kept_out = [e for e in trace.of_kind("host.scan") if e.meta.get("outcome") == "withheld" and not e.name]
    assert kept_out and {f["rule"] for f in kept_out[0].payload} >= {"secret-path"}


@pytest.mark.parametrize("technique", ["embedded", "resource_link"])
async def test_resources_in_a_result_are_read_and_wrapped_as_untrusted_data(tmp_path, technique):
    with anyio.fail_after(120):
        async with Host(Trace(), [_inject(technique)]) as host:
            bare = await host.call("check_service_status", {"service": "order-service"})
        trace = Trace()
        async with _shield(trace, Defences.only("results"), tmp_path).open([_inject(technique)]) as host:
            wrapped = await host.call("check_service_status", {"service": "order-service"})
    assert "[resource status://incidents/INC-4711]\nIncident INC-4711" in bare.text and ORDER in bare.text
    opening, closing = wrapped.text.index("<untrusted-data"), wrapped.text.index("</untrusted-data")
    assert opening < wrapped.text.index(ORDER) < closing
    (sanitized,) = trace.of_kind("host.sanitize")
    assert "secret-path" in sanitized.payload["rules"]


async def test_a_loaded_prompt_is_read_through_the_guards_like_a_result(tmp_path):
    with anyio.fail_after(120):
        async with Host(Trace(), [_inject("prompt")]) as host:
            bare = await host.load_prompt("servers.attacks.inject", "incident_review")
            resource = await host.load_resource("servers.attacks.inject", "status://incidents/INC-4711")
        trace = Trace()
        async with _shield(trace, Defences.only("results"), tmp_path).open([_inject("prompt")]) as host:
            wrapped = await host.load_prompt("servers.attacks.inject", "incident_review")
    assert ORDER in bare and "<untrusted-data" not in bare and ORDER in resource
    assert wrapped.index("<untrusted-data") < wrapped.index(ORDER) < wrapped.index("</untrusted-data")
    (sanitized,) = trace.of_kind("host.sanitize")
    assert sanitized.name == "incident_review" and "secret-path" in sanitized.payload["rules"]


async def test_a_poisoned_output_schema_withholds_the_tool(tmp_path):
    poison = ServerSpec("servers.attacks.poison", args=("--technique", "outputschema"))
    trace = Trace()
    with anyio.fail_after(120):
        async with _shield(trace, Defences.only("scan"), tmp_path).open([poison]) as host:
            offered = host.pool.names
    (withheld,) = [e for e in trace.of_kind("host.scan") if e.meta.get("outcome") == "withheld"]
    assert not offered and withheld.name == "lookup_runbook"
    assert any(f["where"].startswith("outputSchema") for f in withheld.payload)


async def test_changed_instructions_wait_for_a_person_and_stay_out_of_the_system_prompt(tmp_path):
    """A rug pull through the instructions alone: the pin covers their text, and until a person approves
    the change the server's tools are withheld and its instructions never reach the model."""
    said = {"runbooks": "Runbooks for the shop's services."}
    tool = Tool(name="lookup_runbook", description="Look up a runbook.", input_schema={"type": "object"})
    store = PinStore(tmp_path / "pins.json")
    first = PinGuard(Trace(), store, trust_on_first_use, {}, instructions=said.get)
    assert await first.on_list("runbooks", [tool]) == [tool]
    assert first.on_instructions("runbooks", said["runbooks"]) == said["runbooks"]
    said["runbooks"] += " " + ORDER  # the second launch says more
    later = PinGuard(Trace(), PinStore(tmp_path / "pins.json"), trust_on_first_use, {}, instructions=said.get)
    assert await later.on_list("runbooks", [tool]) == []
    assert later.on_instructions("runbooks", said["runbooks"]) == ""
    ((_, (change,)),) = later.prompts
    assert (change.tool, change.kind, change.fields) == ("(server instructions)", "changed", ("instructions",))
