"""Checks for notebook 08: the learner's own server, called over MCP: a tool, a resource template, a config."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from labkit._i18n import N_, _

from ...host import Host, specs_from_config
from ...trace import Trace
from .._exercises import register, result_text, run_sync

__all__ = ["check_config", "check_order_resource", "check_order_total"]

# The seed's three orders (seed 001), which the notebook's ops_demo.py holds: what a right answer returns.
_TOTALS = {"pending": 2680.00 + 899.00, "shipped": 15600.00, "cancelled": 0.0}
_ORDER_URI, _ORDER_FACTS = "orders://SO-1024", ("SO-1024", "2680")


def _server(answer: Any, name: str) -> MCPServer | str:
    if isinstance(answer, MCPServer):
        return answer
    return _("{name} must be your server (the MCPServer that build_server() returned), not {type_name}.").format(
        name=name, type_name=type(answer).__name__
    )


def _number(result: Any) -> float | None:
    structured = result.structured_content or {}
    value = structured.get("result") if isinstance(structured, dict) else None
    if value is None and result.content and getattr(result.content[0], "text", None) is not None:
        value = result.content[0].text
    try:
        return float(value)  # type: ignore[arg-type]  # None or any text a learner's tool returned
    except (TypeError, ValueError):
        return None


@register(
    "08.1",
    N_("Add a tool whose type hints become its schema and whose docstring becomes its description."),
    N_("§1 The smallest server and §2 Run it as a real process"),
)
def check_order_total(answer: Any) -> str | None:
    """List the learner's server's tools, read `order_total`'s schema, and call it for every status."""
    server = _server(answer, "answer_1")
    if isinstance(server, str):
        return server

    async def probe() -> tuple[Any, dict[str, float | str | None]]:
        async with Client(server) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            tool = tools.get("order_total")
            if tool is None:
                return sorted(tools), {}
            totals: dict[str, float | str | None] = {}
            for status in _TOTALS:
                result = await client.call_tool("order_total", {"status": status})
                totals[status] = result_text(result) if result.is_error else _number(result)
            return tool, totals

    tool, totals = run_sync(probe)
    if isinstance(tool, list):
        return _("your server lists no tool named 'order_total'; it lists {tool}.").format(tool=tool)
    if not (tool.description or "").strip():
        return _("order_total has no description: write a docstring saying what it returns and when to use it.")
    properties, required = tool.input_schema.get("properties", {}), tool.input_schema.get("required", [])
    if properties.get("status", {}).get("type") != "string" or "status" not in required:
        return _(
            "order_total's inputSchema should require a string 'status' (a type hint without a "
            "default); it is {input_schema}."
        ).format(input_schema=tool.input_schema)
    for status, expected in _TOTALS.items():
        total = totals[status]
        if not isinstance(total, float) or abs(total - expected) > 0.005:
            return _(
                "order_total(status={status!r}) returned {totals!r}; the table's {status} orders add up to "
                "{expected:.2f}."
            ).format(status=status, totals=totals[status], expected=expected)
    return None


@register(
    "08.2",
    N_("Expose data as a resource template: a URI with a parameter that the host reads."),
    N_("§1 The smallest server (resources)"),
)
def check_order_resource(answer: Any) -> str | None:
    """List the learner's resource templates and read one order through `orders://SO-1024`."""
    server = _server(answer, "answer_2")
    if isinstance(server, str):
        return server

    async def probe() -> tuple[list[str], str | None]:
        async with Client(server) as client:
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            if "orders://{order_id}" not in templates:
                return templates, None
            contents = (await client.read_resource(_ORDER_URI)).contents
            return templates, "".join(getattr(c, "text", "") for c in contents)

    templates, text = run_sync(probe)
    if text is None:
        return _("your server lists no resource template 'orders://{{order_id}}'; it lists {templates}.").format(
            templates=templates
        )
    missing = [fact for fact in _ORDER_FACTS if fact not in text]
    if missing:
        return _("reading {_ORDER_URI} gave {text!r}, which lacks {missing}: return that order's row.").format(
            _ORDER_URI=_ORDER_URI, text=text, missing=missing
        )
    return None


@register(
    "08.3",
    N_("Plug a server into a host with an mcpServers config: a command and its args."),
    N_("§6 A server nobody here wrote"),
)
def check_config(answer: Any) -> str | None:
    """Read the config like a desktop host, start the server it names, list its tools and call query_orders."""
    if not isinstance(answer, dict):
        return _("answer_3 must be the config as a dict ({{'mcpServers': {{...}}}}), not {type_name}.").format(
            type_name=type(answer).__name__
        )
    try:
        specs = specs_from_config(answer, source="answer_3")
    except ValueError as error:
        return str(error)
    if len(specs) != 1:
        return _("answer_3 should name exactly one server (your ops-demo), not {n_specs}.").format(n_specs=len(specs))

    async def probe() -> tuple[list[str], str | None]:
        async with Host(Trace(), specs) as host:
            names = [tool.name for tool in host.tools]
            if "query_orders" not in names:
                return names, None
            return names, (await host.call("query_orders", {"status": "shipped"})).text

    names, text = run_sync(probe)
    if text is None:
        return _("the server your config starts lists {names}, not query_orders: is it ops_demo.py?").format(
            names=names
        )
    if "SO-1026" not in text:
        return _("query_orders(status='shipped') answered {text!r}; the ops-demo table has SO-1026 shipped.").format(
            text=text
        )
    return None
