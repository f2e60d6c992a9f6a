"""The simulated model as one HTTP handler: bytes in, bytes out, for the transport and the server alike."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..trace import REASON_HEADER
from ._anthropic_api import AnthropicMessages
from ._chat_api import ChatCompletions
from ._dialogue import Decision, Dialogue
from ._errors import Rejected, openai_error
from ._policy import decide
from ._responses_api import ResponsesAPI
from ._stamps import digest, make_id

__all__ = ["Reply", "TeachingModel"]

SCENARIO_HEADER = "x-teaching-scenario"


class _Adapter(Protocol):
    path: str

    def parse(self, body: dict[str, Any], scenario: str | None) -> Dialogue: ...
    def render(self, decision: Decision, body: dict[str, Any], seed: str) -> dict[str, Any]: ...
    def error(self, rejected: Rejected, seed: str) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status, headers, body bytes (notebook 01)."""

    status: int
    headers: dict[str, str]
    body: bytes


class TeachingModel:
    """Serves `/v1/messages`, `/v1/chat/completions` and `/v1/responses` deterministically (notebook 01)."""

    def __init__(self) -> None:
        adapters: list[_Adapter] = [AnthropicMessages(), ChatCompletions(), ResponsesAPI()]
        self._adapters = {a.path: a for a in adapters}

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """Answer one request; never raises for a bad request, it answers 4xx like the real APIs."""
        adapter = self._adapters.get(path.split("?")[0].rstrip("/"))
        if method != "POST" or adapter is None:
            return _reply(404, openai_error(Rejected(f"No route for {method} {path}.")), [], "")
        try:
            request = json.loads(body or b"{}")
        except ValueError as error:
            rejected = Rejected(f"We could not parse the JSON body of your request: {error}.")
            return _reply(400, adapter.error(rejected, ""), [], "")
        seed = digest(request)
        try:
            if request.get("stream"):
                raise Rejected("The teaching model does not stream; call it without stream=True.", param="stream")
            dialogue = adapter.parse(request, _header(headers, SCENARIO_HEADER))
        except Rejected as rejected:
            return _reply(400, adapter.error(rejected, seed), [], seed)
        try:
            decision = decide(dialogue)
            return _reply(200, adapter.render(decision, request, seed), decision.notes, seed, decision.reason)
        except Exception as error:  # noqa: BLE001 - a policy bug should reach the learner as an API error, not a hang
            crash = Rejected(f"The teaching model failed: {type(error).__name__}: {error}")
            return _reply(500, adapter.error(crash, seed), [], seed)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def _reply(status: int, payload: dict[str, Any], notes: list[str], seed: str, reason: str = "") -> Reply:
    request_id = make_id("req_sim_", seed)
    headers = {
        "content-type": "application/json",
        "x-teaching-model": "simulated",
        "x-teaching-model-trace": json.dumps(notes),
        "request-id": request_id,
        "x-request-id": request_id,
    }
    if reason:
        headers[REASON_HEADER] = json.dumps(reason)
    if status >= 400:
        headers["x-should-retry"] = "false"
    return Reply(status, headers, json.dumps(payload, ensure_ascii=False).encode())
