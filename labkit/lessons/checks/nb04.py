"""Checks for notebook 04 (two-round elicitation): each one runs real charts servers on the learner's answer."""

from __future__ import annotations

import inspect
import json
import tempfile
from typing import Any

from mcp import Client
from mcp.server.mcpserver import AESGCMRequestStateCodec, InvalidRequestState
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult, InputResponses

from labkit._i18n import N_, _

from ...host import (
    GatePolicy,
    Host,
    ServerSpec,
    ToolCall,
    http_server,
    http_transport,
    jsonschema_module,
    stdio_transport,
)
from ...server_contract import DATA_DIR_ENV, REQUEST_STATE_KEY_ENV, REQUEST_STATE_TTL_ENV
from ...trace import Trace
from .._exercises import register, result_text, run_sync

__all__ = ["check_elicitor", "check_replicas", "check_retry"]

TOOL = "render_error_trend"
CHART_ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}
KEY_ENV, TTL_ENV = REQUEST_STATE_KEY_ENV, REQUEST_STATE_TTL_ENV
MAX_TTL = 300
_UNKNOWN_FORM = {"type": "object", "properties": {"password": {"type": "string"}}, "required": ["password"]}
_CHART_POLICY = GatePolicy(auto_approve=frozenset({TOOL}))


async def _driven_by_hand(context: Any, params: Any) -> ElicitResult:
    """Declares form elicitation, which a 2026-07-28 server needs before it may ask (else -32021); never called."""
    raise AssertionError("the checks drive the rounds themselves")


def _responses(value: Any) -> InputResponses:
    return {
        key: answer if isinstance(answer, ElicitResult) else ElicitResult.model_validate(answer)
        for key, answer in value.items()
    }


def _saved_space(result: Any) -> str | None:
    if isinstance(result, CallToolResult) and not result.is_error and result.structured_content:
        return result.structured_content.get("space")
    return None


async def _retry_on_a_new_process(answer: dict[str, Any]) -> Any:
    # A data folder of its own: the server keeps each state's save (its idempotency key), so a second check
    # of the same state in a shared folder would get the first check's chart back instead of a verdict.
    with tempfile.TemporaryFile(mode="w+") as log, tempfile.TemporaryDirectory() as data:
        transport = stdio_transport("charts", Trace(), env={DATA_DIR_ENV: data}, errlog=log)
        async with Client(transport, elicitation_callback=_driven_by_hand) as charts:
            try:
                return await charts.session.call_tool(
                    answer["name"],
                    answer["arguments"],
                    input_responses=_responses(answer["input_responses"]),
                    request_state=answer["request_state"],
                    allow_input_required=True,
                )
            except MCPError as error:
                return error


@register(
    "04.1",
    N_(
        "A 2026-07-28 retry carries the same name and arguments, the answers under the request's key, "
        "and the requestState byte for byte; any process that shares the sealing key can finish it."
    ),
    N_("§3 The retry and §4 Round two on another server process"),
)
def check_retry(answer: Any) -> str | None:
    keys = {"name", "arguments", "input_responses", "request_state"}
    if not isinstance(answer, dict) or set(answer) != keys:
        return _("answer_1 must be a dict with exactly the keys {keys} (the keyword arguments of the retry).").format(
            keys=sorted(keys)
        )
    if not isinstance(answer["input_responses"], dict):
        return _("input_responses must be a dict: {request key: ElicitResult(...)}.")
    result = run_sync(lambda: _retry_on_a_new_process(answer))
    if isinstance(result, MCPError):
        return _(
            "a fresh charts process answered {code} {message!r}. The state must be exactly "
            "pending.request_state, with the same name and arguments as round 1 (and this kernel must "
            "still have {KEY_ENV} set, as §4 did)."
        ).format(code=result.error.code, message=result.error.message, KEY_ENV=KEY_ENV)
    if isinstance(result, InputRequiredResult):
        return _("the server asked again ({keys}): answer the key it asked under.").format(
            keys=list(result.input_requests or {})
        )
    if result.is_error:
        return _("the server refused the answer: {text}").format(text=result_text(result))
    if _saved_space(result) != "team":
        return _("the chart was saved in {_saved_space!r}; the exercise asks for the team space.").format(
            _saved_space=_saved_space(result)
        )
    return None


async def _hand_off(env_a: dict[str, str], env_b: dict[str, str]) -> tuple[Any, Any]:
    trace = Trace()
    with http_server("charts", env=env_a) as url_a, http_server("charts", env=env_b) as url_b:
        async with (
            Client(http_transport(url_a, trace, server="A"), elicitation_callback=_driven_by_hand) as a,
            Client(http_transport(url_b, trace, server="B"), elicitation_callback=_driven_by_hand) as b,
        ):
            asked = await a.session.call_tool(TOOL, CHART_ARGS, allow_input_required=True)
            try:
                team: InputResponses = {"space": ElicitResult(action="accept", content={"space": "team"})}
                done = await b.session.call_tool(
                    TOOL,
                    CHART_ARGS,
                    input_responses=team,
                    request_state=getattr(asked, "request_state", None),
                    allow_input_required=True,
                )
            except MCPError as error:
                return asked, error
    return asked, done


@register(
    "04.2",
    N_(
        "Replicas behind one address must share the sealing key, and the key (with its TTL) decides "
        "how long a user may take to answer."
    ),
    N_("§4 Round two on another server process and §5 Tampered, rebound, replayed, expired"),
)
def check_replicas(answer: Any) -> str | None:
    if (
        not isinstance(answer, dict)
        or set(answer) != {"A", "B"}
        or not all(isinstance(v, dict) for v in answer.values())
    ):
        return _("answer_2 must be {'A': {...environment...}, 'B': {...environment...}}.")
    for name, env in answer.items():
        if KEY_ENV not in env:
            return _("replica {name} does not set {KEY_ENV}, so it would seal with a random key of its own.").format(
                name=name, KEY_ENV=KEY_ENV
            )
        if len(str(env[KEY_ENV]).encode()) < 32:
            return _(
                "replica {name}'s {KEY_ENV} is shorter than 32 bytes; the server refuses to start with it."
            ).format(name=name, KEY_ENV=KEY_ENV)
        try:
            ttl = float(env.get(TTL_ENV, 600))
        except ValueError:
            return _("replica {name}'s {TTL_ENV} is not a number of seconds.").format(name=name, TTL_ENV=TTL_ENV)
        if not 0 < ttl <= MAX_TTL:
            return _(
                "replica {name} lets a user take {ttl:g} s to answer; the exercise allows at most {MAX_TTL} s."
            ).format(name=name, ttl=ttl, MAX_TTL=MAX_TTL)
    asked, done = run_sync(
        lambda: _hand_off({k: str(v) for k, v in answer["A"].items()}, {k: str(v) for k, v in answer["B"].items()})
    )
    if isinstance(done, MCPError):
        return _("replica B rejected replica A's state ({code} {message!r}): the keys differ.").format(
            code=done.error.code, message=done.error.message
        )
    if _saved_space(done) != "team":
        return _("the retry on replica B did not save the chart: {done}").format(done=done)
    try:
        claims = json.loads(AESGCMRequestStateCodec([str(answer["A"][KEY_ENV]).encode()]).unseal(asked.request_state))
    except InvalidRequestState as error:
        return _("the state could not be opened with replica A's key ({error}).").format(error=error)
    if round(claims["exp"] - claims["iat"]) > MAX_TTL:
        return _("the sealed state lives {value:.0f} s; set {TTL_ENV} to at most {MAX_TTL}.").format(
            value=claims["exp"] - claims["iat"], TTL_ENV=TTL_ENV, MAX_TTL=MAX_TTL
        )
    return None


async def _host_with(elicitor: Any) -> Any:
    async with Host(Trace(), [ServerSpec("charts")], policy=_CHART_POLICY, elicit=elicitor) as host:
        return await host.router.execute(ToolCall("call_ex3", TOOL, CHART_ARGS))


@register(
    "04.3",
    N_(
        "The host, not the model, answers a server's form: it builds the answer from the requested "
        "schema and declines what it does not understand."
    ),
    N_("§2 The form and §6 The host's side"),
)
def check_elicitor(answer: Any) -> str | None:
    if not callable(answer) or not inspect.iscoroutinefunction(answer):
        return "answer_3 must be an async function: async def answer_3(message, schema): ..."
    unknown = run_sync(lambda: answer("Type your password to continue.", _UNKNOWN_FORM))
    if unknown is not None:
        return _(
            "asked for a field it does not know (password), it answered {unknown!r} instead of None (decline)."
        ).format(unknown=unknown)
    from mcp.server.elicitation import render_elicitation_schema

    from servers.charts import QUESTION, SpaceChoice

    schema = render_elicitation_schema(SpaceChoice)
    reply = run_sync(lambda: answer(_(QUESTION), schema))  # as the charts server asks it
    if not isinstance(reply, dict):
        return _("asked the charts question, it returned {reply!r}, not a dict of answers.").format(reply=reply)
    try:
        jsonschema_module().validate(reply, schema)
    except jsonschema_module().ValidationError as error:
        return _("the answer {reply!r} does not fit the requested schema: {message}.").format(
            reply=reply, message=error.message
        )
    result = run_sync(lambda: _host_with(answer))
    if result.is_error or '"space": "team"' not in result.text:
        return _("the host's chart call did not save to the team space; the model was told: {text}").format(
            text=result.text[:160]
        )
    return None
