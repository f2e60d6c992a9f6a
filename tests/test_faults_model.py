"""The model path bounded: classroom-sized timeouts and retries, and every retry in the trace (a local endpoint)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import anyio
import pytest

from labkit.host import model_client
from labkit.trace import Trace
from replays.fault_cases import model_never_answers

LIMIT = 60
ANSWERS = {
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
    "openai": {
        "id": "chat_1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    },
}
BUSY = {"anthropic": 529, "openai": 429}


def _live(provider: str, url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Trace]:
    monkeypatch.setenv(f"{provider.upper()}_BASE_URL", url + ("/v1" if provider == "openai" else ""))
    env = {"LABKIT_MODEL": f"{provider}:a-model", f"{provider.upper()}_API_KEY": "a-key"}
    trace = Trace()
    return model_client(provider, trace=trace, env=env), trace  # type: ignore[arg-type]


async def _ask(provider: str, client: Any) -> Any:
    if provider == "anthropic":
        return await client.messages.create(
            model="a-model", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    return await client.chat.completions.create(model="a-model", messages=[{"role": "user", "content": "hi"}])


def test_clients_are_sized_for_a_classroom() -> None:
    live = model_client("anthropic", env={"LABKIT_MODEL": "anthropic:a-model", "ANTHROPIC_API_KEY": "a-key"})
    offline = model_client("openai", env={}, base_url="http://127.0.0.1:9")
    for client in (live, offline):
        assert (client.timeout.read, client.timeout.connect) == (60.0, 10.0)
    assert live.max_retries == 2 and offline.max_retries == 0


@pytest.fixture
def busy_once() -> Iterator[str]:
    """A 127.0.0.1 model endpoint that answers the first request "busy" and the next ones properly."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            provider = "openai" if self.path.startswith("/v1/chat") else "anthropic"
            seen.append(self.path)
            status, body = (
                (BUSY[provider], {"error": {"type": "overloaded", "message": "busy"}})
                if len(seen) == 1
                else (200, ANSWERS[provider])
            )
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("retry-after-ms", "10")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_busy_answer_is_retried_and_the_retry_is_in_the_trace(
    provider: str, busy_once: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, trace = _live(provider, busy_once, monkeypatch)
    with anyio.fail_after(LIMIT):
        await _ask(provider, client)
    requests = trace.of_kind("model.request")
    statuses = [e.payload["status"] for e in trace.of_kind("model.response")]
    assert [e.meta.get("retry") for e in requests] == [None, 1] and statuses == [BUSY[provider], 200]


async def test_an_endpoint_that_never_answers_ends_in_a_timeout_after_each_attempt_is_recorded() -> None:
    # The case asks with a short read limit, so the test does not wait the classroom's 60 s three times.
    with anyio.fail_after(LIMIT):
        replay = await model_never_answers()
    assert isinstance(replay.error, anthropic.APITimeoutError)
    assert [e.meta.get("retry") for e in replay.trace.of_kind("model.request")] == [None, 1, 2]
