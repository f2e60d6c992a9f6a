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
