"""What tool definitions cost: counted from the recorded model request bodies, per request and per run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from mcp_types import Tool

from labkit._i18n import N_, _

from ..trace import Kind, Trace, estimate_tokens, headed
from ._benign import benign_tools

__all__ = ["CACHE_READ", "CACHE_WRITE", "cost_summary", "padding_tools", "request_costs"]

# Anthropic's prompt-caching prices relative to normal input tokens (5-minute cache): writing a
# prefix costs 1.25×, reading it back 0.1×.
CACHE_WRITE, CACHE_READ = 1.25, 0.1
_HEADINGS = {
    "request": N_("request"),
    "round": N_("round"),
    "tools sent": N_("tools sent"),
    "tools loaded": N_("tools loaded"),
    "tool tokens sent": N_("tool tokens sent"),
    "tool tokens loaded": N_("tool tokens loaded"),
    "billed as": N_("billed as"),
    "whole request tokens": N_("whole request tokens"),
    "run": N_("run"),
    "model requests": N_("model requests"),
    "tool tokens per request (loaded)": N_("tool tokens per request (loaded)"),
    "tool tokens per run (loaded)": N_("tool tokens per run (loaded)"),
    "tool tokens per run (billed as)": N_("tool tokens per run (billed as)"),
    "whole requests per run": N_("whole requests per run"),
}


def padding_tools(count: int, *, besides: Iterable[str] = ()) -> list[Tool]:
    """`count` more tools from the benign set (lab servers' and written tools), none named `besides` (notebook 08)."""
    taken = set(besides)
    tools = []
    for _server, definition in benign_tools():
        if definition["name"] not in taken:
            taken.add(definition["name"])
            tools.append(Tool.model_validate(definition))
    if count > len(tools):
        raise ValueError(
            _("the benign set has {n_tools} tools with distinct names; {count} were asked for").format(
                n_tools=len(tools), count=count
            )
        )
    return tools[:count]


def _tokens(value: Any) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False)) if value else 0


def request_costs(trace: Trace) -> pd.DataFrame:
    """One row per model request: the tools it sent, their definitions' tokens, what the model loads (notebook 08).

    `tool tokens sent` counts every definition in the body; `tool tokens loaded` leaves out the
    deferred ones (`defer_loading`), which the provider keeps out of the context; `billed as` prices
    the loaded tokens with the cache: the marked prefix at `CACHE_WRITE` on the first request and at
    `CACHE_READ` after it.
    """
    rows = []
    for index, event in enumerate(trace.of_kind(Kind.MODEL_REQUEST)):
        body = event.payload["body"]
        tools = body.get("tools") or []
        loaded = [tool for tool in tools if not tool.get("defer_loading")]
        marks = [i for i, tool in enumerate(loaded) if tool.get("cache_control")]
        cached = _tokens(loaded[: marks[-1] + 1]) if marks else 0
        price = CACHE_WRITE if index == 0 else CACHE_READ
        rows.append(
            {
                "request": index + 1,
                "round": event.round,
                "tools sent": len(tools),
                "tools loaded": len(loaded),
                "tool tokens sent": _tokens(tools),
                "tool tokens loaded": _tokens(loaded),
                "billed as": round(_tokens(loaded) - cached + cached * price),
                "whole request tokens": _tokens(body),
            }
        )
    return headed(pd.DataFrame(rows).set_index("request"), _HEADINGS)


def cost_summary(runs: Mapping[str, Trace]) -> pd.DataFrame:
    """One row per run: its model requests, the tool tokens of one request, and the run's totals (notebook 08)."""
    rows = []
    for label, trace in runs.items():
        costs = request_costs(trace)
        rows.append(
            {
                "run": label,
                "model requests": len(costs),
                "tools sent": int(costs["tools sent"].iloc[0]),
                "tool tokens per request (loaded)": int(costs["tool tokens loaded"].iloc[0]),
                "tool tokens per run (loaded)": int(costs["tool tokens loaded"].sum()),
                "tool tokens per run (billed as)": int(costs["billed as"].sum()),
                "whole requests per run": int(costs["whole request tokens"].sum()),
            }
        )
    return headed(pd.DataFrame(rows).set_index("run"), _HEADINGS)
