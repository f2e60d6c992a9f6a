"""Big results: a lab server sends at most its cap, and says so in an isError text naming the cap and the size."""

from __future__ import annotations

import anyio
import pytest

from labkit.host import GatePolicy, Host, ServerSpec
from labkit.trace import Trace
from servers._wiring import MAX_RESULT_BYTES_ENV

LIMIT = 90


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_result_over_the_servers_cap_is_an_error_naming_the_cap_and_the_size(transport: str) -> None:
    spec = ServerSpec("faulty", transport=transport, env={MAX_RESULT_BYTES_ENV: "100000"})
    with anyio.fail_after(LIMIT):
        async with Host(Trace(), [spec], policy=GatePolicy(approve_all=True)) as host:
            big = await host.call("huge_result", {"kilobytes": 200})
            small = await host.call("huge_result", {"kilobytes": 64})
    assert big.is_error and "100,000 bytes" in big.text and "204,9" in big.text and MAX_RESULT_BYTES_ENV in big.text
    assert not small.is_error and small.text.startswith("x" * 1000)


async def test_the_trace_keeps_a_large_result_by_reference_with_its_size_and_sha256() -> None:
    import hashlib

    trace = Trace()
    with anyio.fail_after(LIMIT):
        async with Host(trace, [ServerSpec("faulty")], policy=GatePolicy(approve_all=True)) as host:
            result = await host.call("huge_result", {"kilobytes": 512})
    reply = next(e for e in trace.of_kind("jsonrpc.response") if e.meta.get("method") == "tools/call")
    [ref] = reply.meta["payload_refs"]
    whole = "x" * (512 * 1024)
    assert not result.is_error and result.text.startswith(whole[:1000])  # the host still gets the whole result
    assert ref == {
        "path": "result.content.0.text",
        "bytes": len(whole),
        "sha256": hashlib.sha256(whole.encode()).hexdigest(),
    }
    kept = reply.payload["result"]["content"][0]
    assert kept["type"] == "text" and len(kept["text"]) < 1000 and "524,288 bytes" in kept["text"]


def test_small_payloads_are_kept_as_they_are() -> None:
    from labkit.trace._events import by_reference

    payload = {"result": {"content": [{"type": "text", "text": "ok"}], "isError": False}}
    assert by_reference(payload) == (payload, [])
