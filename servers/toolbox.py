"""The toolbox server: unit converters listed a page at a time, and a tool list that grows when a pack is enabled."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ToolAnnotations
from pydantic import Field

from servers._wiring import new_server, run

__all__ = ["PAGE_SIZE", "RATES_CNY", "build_server", "page_cursor"]

PAGE_SIZE = 3
"""Tools per `tools/list` page; a longer list comes in pages joined by `nextCursor`."""
RATES_CNY = {"CNY": 1.0, "USD": 7.1, "EUR": 7.7, "JPY": 0.047}
"""Yuan per unit of each currency: fixed teaching rates, not market data."""
_READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def page_cursor(offset: int) -> str:
    """The opaque cursor for the page starting at `offset` (clients must not read it; this one is base64)."""
    return base64.urlsafe_b64encode(f"tools:{offset}".encode()).decode()


def _offset(cursor: Any) -> int:
    try:
        kind, _, number = base64.urlsafe_b64decode(str(cursor).encode()).decode().partition(":")
        if kind == "tools" and number.isdigit():
            return int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")


def build_server(page_size: int = PAGE_SIZE) -> MCPServer:
    mcp = new_server(
        "toolbox", "Unit converters. Enable the currency pack to add currency conversion.", tools_change=True
    )

    async def paginate(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """`tools/list` a page at a time: the cursor says where the page starts, the last page has none."""
        if ctx.method != "tools/list":
            return await call_next(ctx)
        cursor = (ctx.params or {}).get("cursor")
        start = 0 if cursor is None else _offset(cursor)
        result = await call_next(ctx)
        if not isinstance(result, dict):  # the SDK hands middleware the wire-shaped dict; anything else passes
            return result
        tools = result["tools"]
        if start > len(tools):
            raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
        page = {**result, "tools": tools[start : start + page_size]}
        if start + page_size < len(tools):
            page["nextCursor"] = page_cursor(start + page_size)
        return page

    mcp.middleware.append(paginate)

    @mcp.tool(annotations=_READ)
    def convert_length(value: float, unit: Annotated[str, Field(description='"km" or "mi", e.g. "km"')]) -> float:
        """Convert a length between kilometres and miles. Returns the value in the other unit, e.g. 5 km -> 3.107."""
        factors = {"km": 0.621371, "mi": 1 / 0.621371}
        if unit not in factors:
            raise ToolError(f"unknown unit {unit!r}; use km or mi")
        return round(value * factors[unit], 3)

    @mcp.tool(annotations=_READ)
    def convert_weight(value: float, unit: Annotated[str, Field(description='"kg" or "lb", e.g. "kg"')]) -> float:
        """Convert a weight between kilograms and pounds. Returns the value in the other unit, e.g. 2 kg -> 4.409."""
        factors = {"kg": 2.204623, "lb": 1 / 2.204623}
        if unit not in factors:
            raise ToolError(f"unknown unit {unit!r}; use kg or lb")
        return round(value * factors[unit], 3)

    @mcp.tool(annotations=_READ)
    def convert_temperature(value: float, unit: Annotated[str, Field(description='"C" or "F", e.g. "C"')]) -> float:
        """Convert a temperature between Celsius and Fahrenheit. Returns the other unit's value, e.g. 20 C -> 68."""
        if unit not in ("C", "F"):
            raise ToolError(f"unknown unit {unit!r}; use C or F")
        return round(value * 9 / 5 + 32 if unit == "C" else (value - 32) * 5 / 9, 2)

    @mcp.tool(annotations=_READ)
    def convert_volume(value: float, unit: Annotated[str, Field(description='"l" or "gal", e.g. "l"')]) -> float:
        """Convert a volume between litres and US gallons. Returns the value in the other unit, e.g. 10 l -> 2.642."""
        factors = {"l": 0.264172, "gal": 1 / 0.264172}
        if unit not in factors:
            raise ToolError(f"unknown unit {unit!r}; use l or gal")
        return round(value * factors[unit], 3)

    @mcp.tool(annotations=_READ)
    def convert_speed(value: float, unit: Annotated[str, Field(description='"km/h" or "mph", e.g. "km/h"')]) -> float:
        """Convert a speed between km/h and mph. Returns the value in the other unit, e.g. 100 km/h -> 62.137."""
        factors = {"km/h": 0.621371, "mph": 1 / 0.621371}
        if unit not in factors:
            raise ToolError(f"unknown unit {unit!r}; use km/h or mph")
        return round(value * factors[unit], 3)

    def convert_currency(
        amount: float,
        source: Annotated[str, Field(description=f"Currency code, one of {', '.join(RATES_CNY)}, e.g. USD")],
        target: Annotated[str, Field(description=f"Currency code, one of {', '.join(RATES_CNY)}, e.g. CNY")],
    ) -> float:
        """Convert an amount between currencies at fixed teaching rates (not market data).

        Returns the amount in the target currency, e.g. 10 USD -> 71.0 CNY.
        """
        for code in (source, target):
            if code not in RATES_CNY:
                raise ToolError(f"unknown currency {code!r}; known: {', '.join(RATES_CNY)}")
        return round(amount * RATES_CNY[source] / RATES_CNY[target], 2)

    @mcp.tool()
    async def enable_currency_pack(ctx: Context) -> str:
        """Add the currency pack: a new tool, convert_currency, appears in this server's tool list.

        Use it when the user asks to convert money. Subscribed clients are told the list changed.
        Returns a one-line confirmation.
        """
        if "convert_currency" not in {tool.name for tool in await mcp.list_tools()}:
            mcp.tool(annotations=_READ)(convert_currency)
            await ctx.notify_tools_changed()
            if (ctx.protocol_version or "") < "2026-07-28":  # before listen, the change was announced unasked
                await ctx.session.send_tool_list_changed()
        return "the currency pack is enabled: convert_currency is listed"

    return mcp


if __name__ == "__main__":
    run(build_server)
