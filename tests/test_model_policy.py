"""The decision function on its own, and tool_choice as each SDK sends it."""

from __future__ import annotations

from typing import Any

import pytest

from labkit.host import Conversation
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME, Dialogue, decide
from labkit.simulator._dialogue import Choice, Message, ToolOutcome, ToolSeen, ToolSpec
from labkit.simulator._quoting import quote_chart, quote_query

WEATHER = ToolSpec(
    "get_weather",
    "Get the current weather for a city. Use when the user asks about weather.",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
CURRENCY = ToolSpec(
    "convert_currency",
    "Convert an amount of money between two currencies.",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "from_currency": {"type": "string", "enum": ["EUR", "NOK", "USD"]},
            "to_currency": {"type": "string", "enum": ["EUR", "NOK", "USD"]},
        },
        "required": ["amount", "from_currency", "to_currency"],
    },
)
GOOD = ToolSpec(
    "search_logs",
    "Counts errors per hour for one service. Use when the user asks why a service's errors rise or fall.",
    {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]},
)
POOR = ToolSpec("query_errors", "Does stuff.", GOOD.schema)
PLAIN = ToolSpec("error_stats", "Counts errors per hour for one service and returns the numbers.", GOOD.schema)


def ask(question: str, tools: list[ToolSpec], **options: object) -> Any:
    return decide(Dialogue([Message("user", question)], tools, **options))  # type: ignore[arg-type]


def test_picks_the_tool_and_reads_arguments_from_the_words() -> None:
    decision = ask("Convert 100 EUR to NOK", [WEATHER, CURRENCY])
    assert [(c.name, c.arguments) for c in decision.calls] == [
        ("convert_currency", {"amount": 100.0, "from_currency": "EUR", "to_currency": "NOK"})
    ]
    assert any(note.startswith("score convert_currency = ") for note in decision.notes)


def test_name_equals_value_and_quoted_strings() -> None:
    tool = ToolSpec(
        "find_user",
        "Find a user account by email or name.",
        {
            "type": "object",
            "properties": {"name": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["name"],
        },
    )
    decision = ask('Find the user "Ada Lovelace", limit=3', [tool])
    assert decision.calls[0].arguments == {"name": "Ada Lovelace", "limit": 3}


def test_missing_required_parameter_asks_back_then_reads_the_reply() -> None:
    first = ask("Convert 100 dollars please", [CURRENCY])
    assert first.calls == [] and "missing the required parameter(s) `from_currency`" in first.text
    messages = [Message("user", "Convert 100 dollars please"), Message("assistant", first.text), Message("user", "USD")]
    second = decide(Dialogue(messages, [CURRENCY]))
    assert second.calls[0].arguments["from_currency"] == "USD"


def test_nothing_matches_means_text() -> None:
    decision = ask("Tell me a joke", [WEATHER, CURRENCY])
    assert decision.calls == [] and decision.text.startswith("[simulated] None of the available tools")


def test_a_description_that_says_when_to_use_it_wins() -> None:
    question = "Why did payment-service errors rise?"
    assert ask(question, [PLAIN, GOOD]).calls[0].name == "search_logs"
    assert ask(question, [PLAIN]).calls[0].name == "error_stats"


def test_a_vague_description_is_not_picked_even_with_a_matching_name() -> None:
    assert ask("Why did payment-service errors rise?", [POOR, GOOD]).calls[0].name == "search_logs"
    alone = ask("Why did payment-service errors rise?", [POOR])
    assert alone.calls == [] and "too vague" in alone.text


def test_parallel_calls_for_several_values_unless_disabled() -> None:
    both = ask("Weather in Paris and Oslo?", [WEATHER])
    assert [c.arguments["city"] for c in both.calls] == ["Paris", "Oslo"]
    one = ask("Weather in Paris and Oslo?", [WEATHER], parallel=False)
    assert [c.arguments["city"] for c in one.calls] == ["Paris"]
    # The other city is asked for in the next turn, once Paris is answered, and nothing is asked twice.
    paris = Message("assistant", calls=(ToolSeen("c1", "get_weather", {"city": "Paris"}),))
    answered = [
        Message("user", "Weather in Paris and Oslo?"),
        paris,
        Message("user", results=(ToolOutcome("c1", "9 C"),)),
    ]
    then = decide(Dialogue(answered, [WEATHER], parallel=False))
    assert [c.arguments["city"] for c in then.calls] == ["Oslo"]
    oslo = Message("assistant", calls=(ToolSeen("c2", "get_weather", {"city": "Oslo"}),))
    done = decide(
        Dialogue([*answered, oslo, Message("user", results=(ToolOutcome("c2", "2 C"),))], [WEATHER], parallel=False)
    )
    assert done.calls == [] and "9 C" in done.text and "2 C" in done.text, "the answer covers both turns' results"


def test_forced_choice_guesses_and_never_asks() -> None:
    forced = ask("Tell me a joke", [WEATHER, CURRENCY], choice=Choice("tool", "convert_currency"))
    assert forced.text == "" and forced.calls[0].arguments == {
        "amount": 1.0,
        "from_currency": "EUR",
        "to_currency": "EUR",
    }
    anything = ask("Tell me a joke", [WEATHER], choice=Choice("any"))
    assert anything.calls[0].name == "get_weather" and "guessed" in anything.notes[-1]


def test_strict_nullable_required_parameters_are_sent_as_null() -> None:
    strict = ToolSpec(
        "get_weather",
        WEATHER.description,
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["city", "unit"],
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", None]},
            },
        },
    )
    assert ask("Weather in Oslo?", [strict]).calls[0].arguments == {"city": "Oslo", "unit": None}


def test_tool_results_are_summarised_not_called_again() -> None:
    messages = [
        Message("user", "Weather in Oslo?"),
        Message("assistant", calls=(ToolSeen("c1", "get_weather", {"city": "Oslo"}),)),
        Message("user", results=(ToolOutcome("c1", "unknown city", is_error=True),)),
    ]
    decision = decide(Dialogue(messages, [WEATHER]))
    assert decision.calls == [] and "`get_weather` reported an error: unknown city" in decision.text


def test_unknown_scenario_is_said_out_loud() -> None:
    decision = decide(Dialogue([Message("user", "Weather in Oslo?")], [WEATHER], scenario="nope"))
    assert decision.calls == [] and "Unknown scenario 'nope'" in decision.text


def test_no_scenario_header_turns_playbooks_off() -> None:
    question = "Why did order-service errors rise last night? Make a trend chart."
    assert (
        decide(Dialogue([Message("user", question)], [POOR, GOOD])).calls[0].name == "query_errors"
    )  # canonical playbook
    assert decide(Dialogue([Message("user", question)], [POOR, GOOD], scenario="none")).calls[0].name == "search_logs"


MCP_TOOLS = [{"name": t.name, "description": t.description, "inputSchema": t.schema} for t in (WEATHER, CURRENCY)]


@pytest.mark.anyio
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        ("auto", []),
        ("required", ["get_weather"]),
        ("none", []),
        ("convert_currency", ["convert_currency"]),
    ],
)
async def test_tool_choice_through_the_sdk(api: str, tool_choice: str, expected: list[str]) -> None:
    client = make_client("anthropic" if api == "anthropic" else "openai", env={})
    conversation = Conversation(client, MODEL_NAME, MCP_TOOLS, tool_choice=tool_choice, api=api)  # type: ignore[arg-type]
    conversation.add_user("Tell me a joke")
    turn = await conversation.ask()
    assert [c.name for c in turn.tool_calls] == expected
    assert bool(turn.text) == (not expected)


def test_quoting_reads_other_result_shapes_and_errors() -> None:
    nested = ToolOutcome("c1", '{"total": 9, "peak": {"hour": "23:00", "count": 4}, "top_error": "timeout"}')
    assert (
        quote_query(nested, "svc", "t0")
        == "svc logged 9 errors since t0. The peak was 23:00 with 4 errors. The top error was timeout."
    )
    series = ToolOutcome("c1", '{"total": 5, "hourly": [{"hour": "a", "errors": 1}, {"hour": "b", "errors": 4}]}')
    assert "The peak was b with 4 errors." in quote_query(series, "svc", "t0")
    assert (
        quote_query(ToolOutcome("c1", "Error: bad since", is_error=True), "svc", "t0")
        == "The query failed: Error: bad since"
    )
    assert (
        quote_chart(ToolOutcome("c2", "chart not saved", is_error=True))
        == "The chart could not be made: chart not saved"
    )
