"""Checks for notebook 01 (function calling): each one runs the simulated model on the learner's answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import openai

from labkit._i18n import N_, _

from ...host import convert_tools
from ...simulator import MODEL_NAME
from .._exercises import register
from .._model import make_client

__all__ = ["check_description", "check_messages", "check_responses_input", "check_schema"]

# The simulator on every check, whatever LABKIT_MODEL says, with playbooks off so only the rules decide.
_OFFLINE: dict[str, str] = {}
_RULES_ONLY = "none"
_ORDERS_QUESTION = "Which orders are still pending?"
_ERRORS_QUESTION = "Why did order-service errors rise last night?"
_VAGUE_QUESTION = "Why did errors rise last night?"
_EXACT_QUESTION = "How many errors did payment-service log since 2026-10-29T20:00?"
# The neighbour a learner's tool must not steal questions from (the logs server's tool, in brief).
_QUERY_ERRORS = {
    "name": "query_errors",
    "description": (
        "Count a service's ERROR log lines per hour and list its most frequent errors in a time window. "
        "Use it when the user asks when or why a service's errors rose, e.g. why did order-service fail last night. "
        "Returns the total, the peak hour, errors per hour and the top error codes."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "service": {"type": "string", "description": 'Service name, e.g. "order-service".'},
            "since": {
                "type": "string",
                "description": 'Window start, format YYYY-MM-DDTHH:MM, e.g. "2026-10-29T20:00".',
            },
        },
        "required": ["service", "since"],
    },
}
# A second neighbour sharing the word "order", so the name alone cannot win the orders question.
_CANCEL_ORDER = {
    "name": "cancel_order",
    "description": (
        "Cancel one order by its id and refund the customer. Use it when the user asks to cancel an order. "
        "Returns the order id and the refund amount."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {"order_id": {"type": "string", "description": 'The order id, e.g. "SO-1024".'}},
        "required": ["order_id"],
    },
}
_ELEMENTS = (
    (N_("when to use it (a sentence with 'use' … 'when'/'for'/'if')"), r"\buse\b[^.]*\b(when|for|if)\b"),
    (N_("when not to use it (a sentence with 'not', 'never' or 'only')"), r"\b(not|never|only|don't)\b"),
    (N_("what it returns (a sentence with 'return')"), r"\breturn"),
)


def _first_reply(tools: list[dict[str, Any]], question: str) -> Any:
    """The simulated model's first answer to `question`, through the real anthropic SDK."""
    converted, _names = convert_tools(tools, "anthropic")
    client = make_client("anthropic", sync=True, scenario=_RULES_ONLY, env=_OFFLINE)
    with client:
        return client.messages.create(
            model=MODEL_NAME,
            max_tokens=1024,
            messages=[{"role": "user", "content": question}],
            tools=[t.definition for t in converted],
            tool_choice={"type": "auto"},
        )


def _refused(send: Callable[[Any], Any]) -> str | None:
    """Send the learner's history to the simulated OpenAI API; None if accepted, else the API's own 400 message."""
    client = make_client("openai", sync=True, scenario=_RULES_ONLY, env=_OFFLINE)
    try:
        with client:
            send(client)
    except openai.BadRequestError as error:
        message = error.body.get("message") if isinstance(error.body, dict) else error
        return _("the API refused the request with a 400: {message}").format(message=message)
    return None


def _calls(reply: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(b.name, b.input) for b in reply.content if b.type == "tool_use"]


def _text(reply: Any) -> str:
    return " ".join(b.text for b in reply.content if b.type == "text")


@register(
    "01.1",
    N_(
        "A tool description needs four elements: what it does, when (not) to use it, each parameter "
        "with an example, and what it returns."
    ),
    N_("§5 The description decides"),
)
def check_description(tool: dict[str, Any]) -> str | None:
    if not isinstance(tool, dict) or tool.get("name") != "query_orders" or "inputSchema" not in tool:
        return _(
            "answer_1 should be the tool dict {'name': 'query_orders', 'description': ..., 'inputSchema': "
            "orders_schema}."
        )
    description = tool.get("description") or ""
    if len(description.split()) < 25:
        return _("{n_split} words are too few to say what, when, which parameters and what comes back.").format(
            n_split=len(description.split())
        )
    for element, pattern in _ELEMENTS:
        if not re.search(pattern, description, re.I):
            return _("the description does not say {element}.").format(element=_(element))
    for parameter in tool["inputSchema"].get("properties", {}):
        if parameter not in description:
            return f"the description never mentions the parameter `{parameter}`."
    if not re.search(r"\b(e\.g\.|for example|such as)", description, re.I):
        return "the description gives no example value (write 'e.g. ...')."
    neighbours = [_CANCEL_ORDER, _QUERY_ERRORS]  # listed first: on a tie the model takes the earlier tool
    reply = _first_reply([*neighbours, tool], _ORDERS_QUESTION)
    orders = _calls(reply)
    if not orders or orders[0][0] != "query_orders":
        chosen = orders or _text(reply)[:90] + "…"
        return _(
            "asked {question!r} beside cancel_order and query_errors, the model did not pick query_orders ({chosen})."
        ).format(question=_ORDERS_QUESTION, chosen=chosen)
    if orders[0][1].get("status") != "pending":
        return _("query_orders was called with {orders}, not status='pending'.").format(orders=orders[0][1])
    errors = _calls(_first_reply([*neighbours, tool], _ERRORS_QUESTION))
    if any(name == "query_orders" for name, _ in errors):
        return _(
            "asked {question!r}, the model chose query_orders: say which questions it is for, and which not."
        ).format(question=_ERRORS_QUESTION)
    return None


def _plan_problem(call_id: str, plan: Any, content: Any) -> str | None:
    """Whether `content` is the result of looking up `plan` (the plans server's own domain function)."""
    from servers.plans import (
        look_up_plan,  # imported late: the plans server pulls in the MCP server SDK
    )

    try:
        result = json.loads(content)
    except (TypeError, ValueError):
        return _("the content for {call_id} is not the JSON of look_up_plan(...): {content!r}.").format(
            call_id=call_id, content=str(content)[:60]
        )
    expected = look_up_plan(plan).model_dump(mode="json")
    if result != expected:
        return _(
            "call {call_id} asked for plan {plan!r}, but its content is {content!r}…: pair each result "
            "with its own call's id."
        ).format(call_id=call_id, plan=plan, content=str(content)[:60])
    return None


def _assistant_calls(messages: list[Any]) -> dict[str, dict[str, Any]]:
    """call id → arguments, for the tool calls of the last assistant message."""
    assistant = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant" and m.get("tool_calls")]
    if not assistant:
        return {}
    return {c["id"]: json.loads(c["function"]["arguments"]) for c in assistant[-1]["tool_calls"]}


@register(
    "01.2",
    N_("Every tool call gets exactly one result, paired by its id (tool_call_id in Chat Completions)."),
    N_("§3 The loop and §7 Parallel calls"),
)
def check_messages(messages: list[Any]) -> str | None:
    if not isinstance(messages, list):
        return _("answer_2 should be a list: plans_chat.history plus one {'role': 'tool', ...} message per call.")
    calls = _assistant_calls(messages)
    if len(calls) < 2:
        return _("the list lacks the assistant message with the two tool_calls (start from plans_chat.history).")
    tool_messages = [m for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
    answered = [m.get("tool_call_id") for m in tool_messages]
    if sorted(answered, key=str) != sorted(calls, key=str):  # a learner's message may lack its id
        return _("the tool messages answer {answered}, but the calls were {calls}: one message per call id.").format(
            answered=answered, calls=list(calls)
        )
    for message in tool_messages:
        call_id = message["tool_call_id"]
        if problem := _plan_problem(call_id, calls[call_id].get("plan"), message.get("content")):
            return problem
    return _refused(lambda client: client.chat.completions.create(model=MODEL_NAME, messages=messages))


@register(
    "01.3",
    N_(
        "Parameter design: name what the code needs, mark what it cannot do without as required, "
        "give formats and examples; then the model asks instead of guessing."
    ),
    N_("§6 A missing parameter and §5 The description decides"),
)
def check_schema(schema: dict[str, Any]) -> str | None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return _("answer_3 should be a JSON Schema dict with 'type': 'object'.")
    properties = schema.get("properties") or {}
    if not {"service", "since"} <= set(properties):
        return _("the properties are {properties}; the log store needs `service` and `since`.").format(
            properties=sorted(properties)
        )
    if any(properties[name].get("type") != "string" for name in ("service", "since")):
        return _("`service` and `since` should be strings: the log store reads since as text like 2026-10-29T20:00.")
    if len(properties) > 5:
        return _("{n_properties} parameters is too many for one tool: keep it to five at most.").format(
            n_properties=len(properties)
        )
    if not {"service", "since"} <= set(schema.get("required") or []):
        return _("`service` and `since` are not both in `required`, so the model may call without them.")
    for name, prop in properties.items():
        if not re.search(r"e\.g\.|example", str(prop.get("description", "")), re.I):
            return _("the description of `{name}` has no example (write 'e.g. ...').").format(name=name)
    if "YYYY-MM-DD" not in str(properties["since"].get("description", "")):
        return _("the description of `since` does not state its format (YYYY-MM-DDTHH:MM).")
    tool = {"name": "query_errors", "description": _QUERY_ERRORS["description"], "inputSchema": schema}
    vague = _first_reply([tool], _VAGUE_QUESTION)
    if _calls(vague) or "`service`" not in _text(vague):
        return _("asked {question!r}, the model did not ask back for the service (it proposed {calls}).").format(
            question=_VAGUE_QUESTION, calls=_calls(vague)
        )
    calls = _calls(_first_reply([tool], _EXACT_QUESTION))
    if not calls:
        return _("asked {question!r}, the model did not call query_errors: check service and since.").format(
            question=_EXACT_QUESTION
        )
    arguments = calls[0][1]
    if arguments.get("service") != "payment-service" or arguments.get("since") != "2026-10-29T20:00":
        return _("asked {question!r}, the model filled {arguments}: give service and since plain string types.").format(
            question=_EXACT_QUESTION, arguments=arguments
        )
    from servers.systems.log_store import (
        parse_window,  # the log store's own check of a time window
    )

    try:
        parse_window(arguments["since"], arguments.get("until"))
    except ValueError as error:
        return _("the model filled {arguments}, which the log store refuses: {error}.").format(
            arguments=arguments, error=error
        )
    return None


@register(
    "01.4",
    N_("In the Responses API a function_call_output pairs with the call's `call_id`, not its item `id`."),
    N_("§2 The same form in OpenAI's two APIs"),
)
def check_responses_input(items: list[Any]) -> str | None:
    if not isinstance(items, list):
        return _("answer_4 should be a list: responses.history plus one function_call_output item.")
    calls = {i.get("call_id"): i for i in items if isinstance(i, dict) and i.get("type") == "function_call"}
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if not calls or len(outputs) != len(calls):
        return _(
            "found {n_calls} function_call and {n_outputs} function_call_output item(s): one output per call."
        ).format(n_calls=len(calls), n_outputs=len(outputs))
    item_ids = {c.get("id"): call_id for call_id, c in calls.items()}
    for output in outputs:
        paired = output.get("call_id")
        if paired in item_ids:
            return _("the output pairs with {paired}, the item id; use the call_id {item_ids} instead.").format(
                paired=paired, item_ids=item_ids[paired]
            )
        if paired not in calls:
            return _("the output's call_id {paired!r} matches no function_call item.").format(paired=paired)
        if problem := _plan_problem(
            str(paired), json.loads(calls[paired]["arguments"]).get("plan"), output.get("output")
        ):
            return problem
    return _refused(lambda client: client.responses.create(model=MODEL_NAME, input=items))
