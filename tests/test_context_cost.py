"""Context cost: deferred and cached tools in real anthropic SDK request bodies, counted by request_costs."""

from __future__ import annotations

import pytest

from labkit.host import Conversation
from labkit.lessons import make_client, padding_tools, request_costs
from labkit.trace import Trace


async def _one_turn(**options):
    trace = Trace()
    tools = padding_tools(5)
    conversation = Conversation(make_client("anthropic", trace=trace), "teaching-model-SIMULATED", tools, **options)
    conversation.add_user("What is 2 + 3?")
    await conversation.ask()
    return trace, tools


async def test_deferred_tools_are_sent_marked_and_left_out_of_what_is_loaded():
    trace, _tools = await _one_turn(defer_tools=[tool.name for tool in padding_tools(5)[1:]])
    sent = trace.of_kind("model.request")[0].payload["body"]["tools"]
    assert [t.get("defer_loading", False) for t in sent[:5]] == [False, True, True, True, True]
    assert sent[-1]["type"] == "tool_search_tool_regex_20251119"
    costs = request_costs(trace).iloc[0]
    assert costs["tools sent"] == 6 and costs["tools loaded"] == 2
    assert costs["tool tokens loaded"] < costs["tool tokens sent"]


async def test_a_cache_mark_after_the_last_tool_changes_the_price_not_the_count():
    marked, _ = await _one_turn(cache_tools=True)
    plain, _ = await _one_turn()
    assert marked.of_kind("model.request")[0].payload["body"]["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    first = request_costs(marked).iloc[0]
    assert first["billed as"] > first["tool tokens loaded"]  # writing the cache costs more, once
    assert request_costs(plain).iloc[0]["billed as"] == request_costs(plain).iloc[0]["tool tokens loaded"]


def test_bad_options_name_the_cause():
    with pytest.raises(ValueError, match="not offered"):
        Conversation(make_client("anthropic"), "m", padding_tools(2), defer_tools=["no_such_tool"])
    with pytest.raises(ValueError, match="Anthropic Messages options"):
        Conversation(make_client("openai"), "m", padding_tools(2), cache_tools=True)
    with pytest.raises(ValueError, match="distinct names"):
        padding_tools(1000)
