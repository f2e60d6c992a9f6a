"""Checks for notebook 02: where a schema goes, a `tools/call` by hand, who decides a primitive, structured results."""

from __future__ import annotations

from typing import Any

import mcp_types

from labkit._i18n import N_, _

from ...host import Api, convert_tool, jsonschema_module
from .._exercises import register, result_text, run_sync

__all__ = ["check_schema_path", "check_structured_peak", "check_tools_call", "check_who_decides"]

_APIS: tuple[Api, ...] = ("anthropic", "chat", "responses")
# A tool no lab server has, so the answer must come from how labkit.host's mapping places any schema.
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"probe": {"type": "string", "enum": ["nb02"]}, "count": {"type": "integer", "default": 1}},
    "required": ["probe"],
}
_PROBE = mcp_types.Tool(name="probe_tool", description="A probe for exercise 02.1.", input_schema=_PROBE_SCHEMA)
_DECIDERS = {
    "tools": {"model", "llm", "the model"},
    "resources": {"application", "app", "host", "the application", "the host"},
    "prompts": {"user", "the user"},
}
_METHODS: dict[str, type[mcp_types.Request[Any, Any]]] = {
    "tools": mcp_types.CallToolRequest,
    "resources": mcp_types.ReadResourceRequest,
    "prompts": mcp_types.GetPromptRequest,
}


def _follow(definition: dict[str, Any], path: str) -> Any:
    value: Any = definition
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            keys = sorted(value) if isinstance(value, dict) else []
            raise KeyError(_("{part!r} is not there (the keys at that level are {keys})").format(part=part, keys=keys))
        value = value[part]
    return value


@register("02.1", N_("Know where each model API carries a tool's MCP inputSchema."), N_("§6 One tool, four shapes"))
def check_schema_path(answer: Any) -> str | None:
    """Follow each path in a tool `labkit.convert_tool` converted for that API: it must reach the input schema."""
    if not isinstance(answer, dict) or set(answer) != set(_APIS):
        return _("answer_1 must be a dict with exactly the keys {_APIS}, each a dotted path such as 'a.b'.").format(
            _APIS=list(_APIS)
        )
    for api in _APIS:
        path = answer[api]
        if not isinstance(path, str) or not path:
            return _("the path for {api!r} must be a non-empty string, got {path!r}.").format(api=api, path=path)
        definition = convert_tool(_PROBE, api).definition
        try:
            found = _follow(definition, path)
        except KeyError as error:
            return _("following {path!r} in the {api} tool definition fails: {reason}.").format(
                path=path, api=api, reason=error.args[0]
            )
        if found != _PROBE_SCHEMA:
            return _("for {api}, {path!r} leads to {found!r}, not to the tool's JSON Schema.").format(
                api=api, path=path, found=found
            )
    return None


@register(
    "02.2",
    N_("Write a tools/call that names a listed tool, with arguments that fit its inputSchema."),
    N_("§3 tools/list on the wire and §4 tools/call on the wire"),
)
def check_tools_call(answer: Any) -> str | None:
    """Validate against the orders server's real inputSchema, run the call on it, compare with the order database."""
    # Imported here: the servers are needed only when this exercise is checked.
    from mcp import Client

    from servers._wiring import data_dir
    from servers.orders import build_server
    from servers.systems.order_db import OrderDb

    if not isinstance(answer, dict) or set(answer) != {"name", "arguments"}:
        return _("answer_2 must be the params of a tools/call: a dict with exactly the keys 'name' and 'arguments'.")
    server = build_server()
    tools = {tool.name: tool for tool in run_sync(server.list_tools)}
    if answer["name"] not in tools:
        return _("the orders server lists no tool named {name!r}; it lists {tools}.").format(
            name=answer["name"], tools=sorted(tools)
        )
    arguments = answer["arguments"]
    try:
        jsonschema_module().validate(arguments, tools[answer["name"]].input_schema)
    except jsonschema_module().ValidationError as error:
        return _("the arguments do not fit the tool's inputSchema: {message}.").format(message=error.message)

    async def call() -> mcp_types.CallToolResult:
        async with Client(server) as client:
            return await client.call_tool(answer["name"], arguments)

    result = run_sync(call)
    if result.is_error:
        return _("the server ran the call and answered isError: {text}").format(text=result_text(result))
    listed = result.structured_content or {}
    expected = OrderDb(data_dir()).by_status("delivered", 3)
    got = [order["id"] for order in listed.get("orders", [])]
    if listed.get("status") != "delivered":
        return _("the server listed {status!r} orders, not 'delivered' ones.").format(status=listed.get("status"))
    if got != [order.id for order in expected]:
        return _("the server returned {n_got} orders; the task asks for the 3 newest delivered ones.").format(
            n_got=len(got)
        )
    return None


@register(
    "02.3",
    N_("Say who decides when each primitive is used, and which request uses one."),
    N_("§8 Tools, resources, prompts: who decides"),
)
def check_who_decides(answer: Any) -> str | None:
    """Who decides each primitive, and the method of the SDK's request type that uses one."""
    if not isinstance(answer, dict) or set(answer) != set(_METHODS):
        return _("answer_3 must be a dict with exactly the keys {_METHODS}.").format(_METHODS=sorted(_METHODS))
    for primitive, request in _METHODS.items():
        entry = answer[primitive]
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            return _(
                "answer_3[{primitive!r}] must be a pair (who decides, the method that fetches or runs it)."
            ).format(primitive=primitive)
        who, method = entry
        if str(who).strip().lower() not in _DECIDERS[primitive]:
            return _(
                "for {primitive}, {who!r} is not who decides; think about who sees the list of {primitive}."
            ).format(primitive=primitive, who=who)
        wanted = request.model_fields["method"].default
        if method != wanted:
            return _(
                "for {primitive}, {method!r} is not the JSON-RPC method the client sends to use one (look "
                "at the frames)."
            ).format(primitive=primitive, method=method)
    return None


@register(
    "02.4", N_("Read a tool result as data: structuredContent, not the text."), N_("§5 content vs structuredContent")
)
def check_structured_peak(answer: Any) -> str | None:
    """The peak hour and its count, recomputed from the log store by the logs server's own report function."""
    from servers._wiring import data_dir
    from servers.logs import build_report
    from servers.systems.log_store import LAST_NIGHT, NOW, LogStore

    if not isinstance(answer, dict) or set(answer) != {"peak_hour", "peak_errors"}:
        return _("answer_4 must be a dict with exactly the keys 'peak_hour' and 'peak_errors'.")
    report = build_report(LogStore(data_dir()), "order-service", LAST_NIGHT, NOW)
    if not isinstance(answer["peak_errors"], int) or isinstance(answer["peak_errors"], bool):
        return _("peak_errors should be an integer taken from the data, got {type_name}.").format(
            type_name=type(answer["peak_errors"]).__name__
        )
    if answer["peak_hour"] != report.peak_hour:
        return _("{peak_hour!r} is not the peak hour the log store reports.").format(peak_hour=answer["peak_hour"])
    if answer["peak_errors"] != report.peak_errors:
        return _("{peak_errors!r} is not the number of errors in the peak hour.").format(
            peak_errors=answer["peak_errors"]
        )
    return None
