"""What HTTP said, told truthfully: a failed request's status and auth headers in the default table (tokens
redacted), the error the SDK makes up recorded as the client's, and an unresolvable 401/403 as one clear error."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from labkit import GatePolicy, Host, ServerSpec, Trace, select
from labkit.host import HttpRefused, redact_credential
from labkit.processes import free_port

PROTECTED = str(Path(__file__).resolve().parent / "protected_server.py")
TOKEN = "let-me-in"


@pytest.fixture(params=["read", "write"])
def protected(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """The test server wanting scope `read` (the token has it) or `write` (it does not)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, PROTECTED, "--port", str(port), "--scope", request.param], stderr=subprocess.DEVNULL
    )
    try:
        # Until it listens or exits, however long a busy machine takes to start it: a fixed limit here once handed
        # the test a port nobody held yet.
        while process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        assert process.poll() is None, f"the protected test server exited with status {process.returncode}"
        yield f"http://127.0.0.1:{port}/mcp", request.param
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("token", [None, "not-the-token"])
async def test_a_401_is_one_error_naming_the_server_the_status_and_the_challenge(
    protected: tuple[str, str], token: str | None
) -> None:
    url, _scope = protected
    trace = Trace()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with anyio.fail_after(30), pytest.raises(HttpRefused) as caught:
        async with Host(trace, [ServerSpec("remote", url=url, headers=headers)]):
            pass
    error = caught.value
    assert (error.server, error.status, error.url) == ("remote", 401, url)
    assert error.challenge is not None and 'error="invalid_token"' in error.challenge
    assert "resource_metadata=" in error.challenge and error.challenge in str(error) and "remote" in str(error)
    shown = select(trace)  # the default table's events
    failed = [e for e in shown if e.kind == "http.response"]
    assert failed and all(e.meta["status"] == 401 for e in failed)
    assert all(e.payload["headers"]["www-authenticate"] == error.challenge for e in failed)
    # the JSON-RPC errors are the SDK client's own, made up from the status: never the server's
    errors = [e for e in trace if e.kind == "jsonrpc.error"]
    assert errors and all(e.src == "client" and e.meta["made_up_from"] == 401 for e in errors)
    if token:
        shown = redact_credential(f"Bearer {token}")
        assert all(e.payload["request"]["headers"]["authorization"] == shown for e in failed)
        assert token not in repr([(e.summary, e.payload) for e in trace])


async def test_a_403_names_the_missing_scope_and_a_good_token_gets_through(protected: tuple[str, str]) -> None:
    url, scope = protected
    trace = Trace()
    spec = ServerSpec("remote", url=url, headers={"Authorization": f"Bearer {TOKEN}"})
    with anyio.fail_after(30):
        if scope == "read":
            async with Host(trace, [spec], policy=GatePolicy(approve_all=True)) as host:
                result = await host.call("hello", {})
            assert not result.is_error and json.loads(result.text) == {"result": "hello"}
            assert not [e for e in select(trace) if e.kind == "http.response"]  # nothing failed, nothing shown
            return
        with pytest.raises(HttpRefused) as caught:
            async with Host(trace, [spec]):
                pass
    assert caught.value.status == 403 and 'error="insufficient_scope"' in str(caught.value)
    assert "Required scope: write" in str(caught.value)


def test_redaction_keeps_the_scheme_and_the_length_only() -> None:
    assert redact_credential("Bearer abc.def.ghi") == "Bearer [redacted, 11 characters]"
    assert redact_credential("opaque") == "[redacted, 6 characters]"
