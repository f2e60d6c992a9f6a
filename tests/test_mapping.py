"""MCP tools → Anthropic / OpenAI Chat / OpenAI Responses tools, with what each conversion keeps or loses."""

from __future__ import annotations

import mcp_types
import pytest

from labkit.host import (
    Conversation,
    NameMap,
    convert_tool,
    convert_tools,
    drop_nulls,
    provider_name,
    strict_schema,
    to_mcp_call,
    wire_tool,
)
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME

SCHEMA = {
    "type": "object",
    "properties": {
        "service": {"type": "string", "description": "Service name"},
        "since": {"type": "string", "format": "date-time"},
        "level": {"type": "string", "enum": ["error", "warn"], "default": "error"},
        "filters": {
            "type": "object",
            "properties": {"host": {"type": "string"}, "code": {"type": "integer"}},
            "required": ["host"],
        },
    },
    "required": ["service", "since"],
}
TOOL = mcp_types.Tool(
    name="logs.query_errors",
    title="Query errors",
    description="Count errors per hour. Use when asked why errors rose.",
    input_schema=SCHEMA,
    output_schema={"type": "object", "properties": {"total": {"type": "integer"}}},
    annotations=mcp_types.ToolAnnotations(read_only_hint=True),
)


def outcomes(report: list[dict[str, str]]) -> dict[str, str]:
    return {row["item"]: row["outcome"] for row in report}


def test_anthropic_entry_and_report() -> None:
    converted = convert_tool(TOOL, "anthropic")
    assert converted.definition == {
        "name": "logs_query_errors",
        "input_schema": SCHEMA,
        "description": TOOL.description,
    }
    report = outcomes(converted.report)
    assert report["name"] == "changed" and report["title"] == "dropped" and report["outputSchema"] == "dropped"
    assert report["annotations"] == "dropped" and report["description"] == "kept"
    assert (
        report["inputSchema.properties.level.default"] == "kept"
        and report["inputSchema.properties.level.enum"] == "kept"
    )
    assert report["inputSchema.properties.since.format"] == "kept" and report["strict"] == "not sent"
    assert all(set(row) == {"api", "tool", "item", "outcome", "detail"} for row in converted.report)


def test_anthropic_strict_closes_objects_and_keeps_optional_properties_optional() -> None:
    converted = convert_tool(TOOL, "anthropic", strict=True)
    schema = converted.definition["input_schema"]
    assert converted.definition["strict"] is True and "strict" not in convert_tool(TOOL, "anthropic").definition
    assert schema["required"] == ["service", "since"] and schema["additionalProperties"] is False
    assert schema["properties"]["level"] == SCHEMA["properties"]["level"]  # not made nullable
    assert schema["properties"]["filters"]["additionalProperties"] is False
    assert schema["properties"]["filters"]["required"] == ["host"]
    report = outcomes(converted.report)
    assert report["strict"] == "added" and report["inputSchema.required"] == "kept"
    assert report["inputSchema.additionalProperties"] == "changed"
    assert report["inputSchema.properties.level.enum"] == "kept"


def test_strict_columns_of_the_three_apis_side_by_side() -> None:
    rows = [
        row
        for api in ("anthropic", "chat", "responses")
        for strict in (False, True)
        for row in convert_tool(TOOL, api, strict=strict).report
        if row["item"] == "strict"
    ]
    assert [(row["api"], row["outcome"]) for row in rows] == [
        ("anthropic", "not sent"),
        ("anthropic", "added"),
        ("chat", "added"),
        ("chat", "added"),
        ("responses", "added"),
        ("responses", "added"),
    ]


async def test_anthropic_strict_tools_pass_the_real_sdk() -> None:
    conversation = Conversation(make_client("anthropic", env={}), MODEL_NAME, [TOOL], strict=True)
    conversation.add_user("Why did errors rise for service=order-service since=2026-10-29T20:00?")
    turn = await conversation.ask()
    sent = conversation.converted[0].definition
    assert sent["strict"] is True and [c.name for c in turn.tool_calls] == ["logs.query_errors"]


def test_chat_entry_sends_strict_explicitly() -> None:
    converted = convert_tool(TOOL, "chat")
    assert converted.definition == {
        "type": "function",
        "function": {
            "name": "logs_query_errors",
            "description": TOOL.description,
            "parameters": SCHEMA,
            "strict": False,
        },
    }
    assert outcomes(converted.report)["strict"] == "added"


def test_responses_entry_is_flat_and_keeps_the_output_schema() -> None:
    definition = convert_tool(TOOL, "responses", strict=True).definition
    assert (
        definition["type"] == "function" and definition["name"] == "logs_query_errors" and definition["strict"] is True
    )
    assert definition["output_schema"] == {"type": "object", "properties": {"total": {"type": "integer"}}}
    assert outcomes(convert_tool(TOOL, "responses").report)["outputSchema"] == "kept"


def test_strict_mode_requires_everything_and_makes_optional_nullable_recursively() -> None:
    strict = strict_schema(SCHEMA)
    assert strict["required"] == ["service", "since", "level", "filters"] and strict["additionalProperties"] is False
    assert strict["properties"]["service"] == SCHEMA["properties"]["service"]
    assert strict["properties"]["level"]["type"] == ["string", "null"]
    assert strict["properties"]["level"]["enum"] == ["error", "warn", None]
    nested = strict["properties"]["filters"]
    assert nested["type"] == ["object", "null"] and nested["additionalProperties"] is False
    assert nested["required"] == ["host", "code"] and nested["properties"]["code"]["type"] == ["integer", "null"]
    assert SCHEMA["required"] == ["service", "since"], "the input schema must not be modified"


def test_strict_report_says_what_changed() -> None:
    report = outcomes(convert_tool(TOOL, "chat", strict=True).report)
    assert report["inputSchema.required"] == "changed"
    assert report["inputSchema.properties.level.enum"] == "changed"
    assert report["inputSchema.properties.filters.required"] == "changed"
    assert report["inputSchema.additionalProperties"] == "changed"


def test_a_missing_description_is_reported() -> None:
    converted = convert_tool({"name": "ping", "inputSchema": {"type": "object"}}, "anthropic")
    assert "description" not in converted.definition and outcomes(converted.report)["description"] == "missing"


def test_drop_nulls_removes_nulls_at_every_depth() -> None:
    assert drop_nulls({"a": None, "b": 1, "c": {"d": None, "e": [None, {"f": None}]}}) == {
        "b": 1,
        "c": {"e": [None, {}]},
    }


def test_names_are_sanitised_and_mapped_back() -> None:
    assert provider_name("logs.query_errors") == "logs_query_errors"
    long_name = "x." * 50
    assert len(provider_name(long_name)) == 64
    names = NameMap(["a.b", "a_b", long_name])
    assert names.provider("a.b") == "a_b" and names.provider("a_b") != "a_b"
    for mcp_name in ("a.b", "a_b", long_name):
        assert names.mcp(names.provider(mcp_name)) == mcp_name
    assert names.mcp("query_error_logs") == "query_error_logs"


def test_convert_tools_uses_one_name_map() -> None:
    converted, names = convert_tools([TOOL, {"name": "logs_query_errors", "inputSchema": {"type": "object"}}], "chat")
    provider_names = [c.definition["function"]["name"] for c in converted]
    assert len(set(provider_names)) == 2 and names.mcp(provider_names[0]) == "logs.query_errors"


def test_tool_calls_become_tools_call_params() -> None:
    names = NameMap(["logs.query_errors"])
    assert to_mcp_call("logs_query_errors", {"service": "a"}, names).params() == {
        "name": "logs.query_errors",
        "arguments": {"service": "a"},
    }
    assert to_mcp_call(
        "logs_query_errors", '{"service": "a", "level": null}', names, nulls_mean_absent=True
    ).arguments == {"service": "a"}
    assert to_mcp_call("ping", "").arguments == {}


@pytest.mark.parametrize(
    ("arguments", "message"), [('{"service": ', "not valid JSON"), ("[1, 2]", "must be a JSON object, got list")]
)
def test_bad_arguments_give_an_error_not_an_exception(arguments: str, message: str) -> None:
    call = to_mcp_call("logs_query_errors", arguments)
    assert call.arguments is None and message in (call.error or "")


@pytest.mark.anyio
async def test_strict_tools_pass_the_sdk_and_nulls_are_dropped_before_tools_call() -> None:
    weather = {
        "name": "weather.get",
        "description": "Get the weather for a city. Use when asked about weather.",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    }
    conversation = Conversation(make_client("openai", env={}), MODEL_NAME, [weather], api="chat", strict=True)
    conversation.add_user("What's the weather in Oslo?")
    turn = await conversation.ask()
    sent = conversation.history[-1]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"city":"Oslo","unit":null}'
    assert (turn.tool_calls[0].name, turn.tool_calls[0].arguments) == ("weather.get", {"city": "Oslo"})


EXAMPLES = [
    {"service": "order-service", "since": "2026-10-29T20:00"},
    {"service": "payment-service", "since": "2026-10-30T00:00"},
]


@pytest.mark.parametrize("strict", [False, True])
async def test_schema_examples_become_anthropic_input_examples_and_stay_in_openai_schemas(strict: bool) -> None:
    wire = wire_tool(TOOL)
    wire["inputSchema"] = {**wire["inputSchema"], "examples": EXAMPLES}
    anthropic_tool = convert_tool(wire, "anthropic", strict=strict)
    assert anthropic_tool.definition["input_examples"] == EXAMPLES
    assert "examples" not in anthropic_tool.definition["input_schema"]
    for api in ("chat", "responses"):
        openai_tool = convert_tool(wire, api, strict=strict).definition  # type: ignore[arg-type]
        assert (openai_tool.get("function") or openai_tool)["parameters"]["examples"] == EXAMPLES
    rows = {
        (r["api"], r["outcome"])
        for api in ("anthropic", "chat")
        for r in convert_tool(wire, api).report
        if r["item"] == "inputSchema.examples"
    }
    assert rows == {("anthropic", "changed"), ("chat", "kept")}
    conversation = Conversation(make_client("anthropic", env={}), MODEL_NAME, [wire], strict=strict)
    conversation.add_user("Why did errors rise for service=order-service since=2026-10-29T20:00?")
    assert (await conversation.ask()).tool_calls  # the real SDK takes the field, and the loop goes on


def test_examples_that_are_not_whole_inputs_stay_in_the_schema() -> None:
    wire = wire_tool(TOOL)
    wire["inputSchema"] = {**wire["inputSchema"], "examples": ["order-service"]}
    definition = convert_tool(wire, "anthropic").definition
    assert "input_examples" not in definition and definition["input_schema"]["examples"] == ["order-service"]
