"""Prompts and resources are pinned like tools: what the user loads is pinned at its first use, and a later change
waits for a person (the scripted reviewer refuses it), so a server cannot turn its prompt after it was trusted."""

from __future__ import annotations

import anyio

from labkit.host import ServerSpec
from labkit.lessons import prepare_lab
from labkit.security import Defences, PinStore, Shield
from labkit.trace import Trace
from servers.untrusted._ground_truth import launch_counter
from servers.untrusted.rugpull import ORDER

RUGPULL = ServerSpec("untrusted.rugpull", args=("--variant", "content"))


async def _load_twice(tmp_path, defences: Defences) -> tuple[Trace, list[str]]:
    prepare_lab()
    launch_counter("rugpull-content").unlink(missing_ok=True)
    trace = Trace()
    shield = Shield(trace, defences, lab=prepare_lab(), pins=PinStore(tmp_path / "pins.json"))
    loaded = []
    with anyio.fail_after(120):
        async with shield.open([RUGPULL]) as host:
            for _ in range(2):
                loaded.append(await host.load_prompt("untrusted.rugpull", "fact_brief", {"topic": "compilers"}))
                loaded.append(await host.load_resource("untrusted.rugpull", "facts://today"))
    return trace, loaded


async def test_a_prompt_or_resource_that_changes_after_first_use_is_withheld(tmp_path):
    trace, (prompt, resource, prompt_again, resource_again) = await _load_twice(tmp_path, Defences.only("pin"))
    assert "compilers" in prompt and ORDER not in prompt and ORDER not in resource
    assert ORDER not in prompt_again and ORDER not in resource_again
    assert "withheld" in prompt_again and "withheld" in resource_again
    asked = [e for e in trace.of_kind("host.pin") if e.dst == "user" and ":" in e.payload[0]["tool"]]
    assert [e.meta.get("changed") for e in asked] == [False, False, True, True]
    assert [e.payload[0]["tool"] for e in asked] == [
        "prompt:fact_brief",
        "resource:facts://today",
        "prompt:fact_brief",
        "resource:facts://today",
    ]
    refused = [e for e in trace.of_kind("user.answer") if e.meta.get("changed")]
    assert [e.meta["outcome"] for e in refused] == ["refused", "refused"]


async def test_a_prompt_is_pinned_as_its_template_so_other_arguments_are_no_change(tmp_path):
    launch_counter("rugpull-content").unlink(missing_ok=True)
    trace = Trace()
    shield = Shield(trace, Defences.only("pin"), lab=prepare_lab(), pins=PinStore(tmp_path / "pins.json"))
    with anyio.fail_after(120):
        async with shield.open([RUGPULL]) as host:
            first = await host.load_prompt("untrusted.rugpull", "fact_brief", {"topic": "compilers"})
    launch_counter("rugpull-content").unlink(missing_ok=True)
    shield = Shield(trace, Defences.only("pin"), lab=prepare_lab(), pins=PinStore(tmp_path / "pins.json"))
    with anyio.fail_after(120):
        async with shield.open([RUGPULL]) as host:
            other = await host.load_prompt("untrusted.rugpull", "fact_brief", {"topic": "operating systems"})
    assert "compilers" in first and "operating systems" in other
    asked = [e for e in trace.of_kind("host.pin") if e.dst == "user" and ":" in e.payload[0]["tool"]]
    assert [e.meta.get("changed") for e in asked] == [False]
