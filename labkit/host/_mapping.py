"""MCP tool definitions → the tools each model API takes, and the model's tool calls → MCP `tools/call`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .._i18n import N_, _
from ._provider_names import NameMap, provider_name
from ._strict_schema import drop_nulls, strict_schema

__all__ = ["Api", "ConvertedTool", "McpCall", "convert_tool", "convert_tools", "to_mcp_call", "wire_tool"]

Api = Literal["anthropic", "chat", "responses"]
_CONSTRAINTS = ("format", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
_NEVER_SENT = {  # English; said through _() in the learner's language
    "annotations": N_("hints for the host (e.g. ask before a destructiveHint tool), never sent to the model"),
    "icons": N_("display only"),
    "_meta": N_("protocol metadata"),
    "execution": N_("host-side execution settings"),
}


def wire_tool(tool: Any) -> dict[str, Any]:
    """An `mcp_types.Tool` or its wire dict, as the camelCase dict `tools/list` carries (notebook 02)."""
    return tool.model_dump(by_alias=True, exclude_none=True, mode="json") if hasattr(tool, "model_dump") else dict(tool)


@dataclass(frozen=True)
class ConvertedTool:
    """One MCP tool as one API's `tools` entry, with the report of what survived (notebook 02)."""

    api: Api
    mcp_name: str
    definition: dict[str, Any]
    report: list[dict[str, str]] = field(default_factory=list)


class _Report(list[dict[str, str]]):
    """Rows of one conversion: what happened to each item of the MCP definition."""

    def __init__(self, api: Api, tool: str) -> None:
        super().__init__()
        self.api, self.tool = api, tool

    def add(self, item: str, outcome: str, detail: str) -> None:
        self.append({"api": self.api, "tool": self.tool, "item": item, "outcome": outcome, "detail": detail})

    def schema(self, schema: dict[str, Any], strict: bool, path: str = "inputSchema") -> None:
        required = set(schema.get("required") or [])
        properties = schema.get("properties") or {}
        optional = [k for k in properties if k not in required]
        if properties and strict and self.api == "anthropic":
            self.add(
                f"{path}.required",
                "kept",
                _("required {required}, optional {optional} stay optional").format(
                    required=sorted(required), optional=optional
                ),
            )
            self.add(f"{path}.additionalProperties", "changed", _("set to false (strict mode)"))
        elif properties and strict:
            detail = _("all {n} properties required; optional {optional} made nullable").format(
                n=len(properties), optional=optional
            )
            self.add(f"{path}.required", "changed" if optional else "kept", detail)
            self.add(f"{path}.additionalProperties", "changed", _("set to false (strict mode)"))
        elif properties:
            self.add(
                f"{path}.required",
                "kept",
                _("required {required}, optional {optional}").format(required=sorted(required), optional=optional),
            )
        for name, prop in properties.items():
            where = f"{path}.properties.{name}"
            nulled = strict and name not in required and self.api != "anthropic"
            if "default" in prop:
                how = _("the model sends null and drop_nulls lets the server apply it") if strict else _("a hint")
                self.add(
                    f"{where}.default",
                    "kept",
                    _("default {value} kept: {how}").format(value=repr(prop["default"]), how=how),
                )
            if "enum" in prop:
                self.add(f"{where}.enum", "changed" if nulled else "kept", f"{prop['enum']}" + " + null" * nulled)
            for key in (k for k in _CONSTRAINTS if k in prop):
                self.add(
                    f"{where}.{key}",
                    "kept",
                    _("{value} sent as-is; the provider may not enforce it").format(value=repr(prop[key])),
                )
            if prop.get("type") == "object" or "properties" in prop:
                self.schema(prop, strict, where)


def _report(wire: dict[str, Any], api: Api, name: str, strict: bool) -> _Report:
    report = _Report(api, wire["name"])
    renamed = name != wire["name"]
    report.add(
        "name",
        "changed" if renamed else "kept",
        _("→ {name}: only [a-zA-Z0-9_-], ≤ 64").format(name=repr(name)) if renamed else name,
    )
    title = wire.get("title") or (wire.get("annotations") or {}).get("title")
    if title:
        report.add(
            "title",
            "dropped",
            _("{title}: no such field; the model sees name and description only").format(title=repr(title)),
        )
    described = bool(wire.get("description"))
    report.add("description", "kept" if described else "missing", _("sent") if described else _("none: only the name"))
    report.schema(wire.get("inputSchema") or {}, strict)
    examples = _examples(wire.get("inputSchema") or {})
    if examples and api == "anthropic":
        report.add(
            "inputSchema.examples", "changed", _("{n} example(s) moved to input_examples").format(n=len(examples))
        )
    elif examples:
        report.add("inputSchema.examples", "kept", _("left in the schema: OpenAI has no input_examples field"))
    if "outputSchema" in wire:
        kept = api == "responses"
        detail = _("sent as output_schema") if kept else _("no such field; describe the result in the description")
        report.add("outputSchema", "kept" if kept else "dropped", detail)
    for key in (k for k in _NEVER_SENT if k in wire):
        report.add(key, "dropped", _(_NEVER_SENT[key]))
    if api != "anthropic":
        report.add(
            "strict",
            "added",
            _("strict={strict} sent explicitly (Responses assumes strict if omitted)").format(strict=strict),
        )
    elif strict:
        report.add(
            "strict", "added", _("strict=True: Anthropic validates the tool name and the input against the schema")
        )
    else:
        report.add(
            "strict", "not sent", _("Anthropic does not validate the input against the schema unless strict=True")
        )
    return report


def _examples(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """A schema's top-level `examples` (JSON Schema 2020-12) when each one is a whole input object."""
    examples = schema.get("examples")
    return examples if isinstance(examples, list) and examples and all(isinstance(e, dict) for e in examples) else []


def convert_tool(tool: Any, api: Api, *, strict: bool = False, name: str | None = None) -> ConvertedTool:
    """An MCP tool as an Anthropic, OpenAI Chat or OpenAI Responses tool, plus a losslessness report (notebook 02)."""
    wire = wire_tool(tool)
    name = name or provider_name(wire["name"])
    schema = wire.get("inputSchema") or {"type": "object", "properties": {}}
    parameters = strict_schema(schema, require_all=api != "anthropic") if strict else schema
    described = {"description": wire["description"]} if wire.get("description") else {}
    report = list(_report(wire, api, name, strict))
    if api == "anthropic":
        marked: dict[str, Any] = {"strict": True} if strict else {}
        examples = _examples(parameters)
        if examples:  # Anthropic's own field for whole example inputs; the schema need not carry them twice
            parameters = {k: v for k, v in parameters.items() if k != "examples"}
            marked |= {"input_examples": examples}
        definition = {"name": name, **described, "input_schema": parameters, **marked}
        return ConvertedTool(api, wire["name"], definition, report)
    function = {"name": name, **described, "parameters": parameters, "strict": strict}
    if api == "chat":
        return ConvertedTool(api, wire["name"], {"type": "function", "function": function}, report)
    output = {"output_schema": wire["outputSchema"]} if "outputSchema" in wire else {}
    return ConvertedTool(api, wire["name"], {"type": "function", **function, **output}, report)


def convert_tools(tools: list[Any], api: Api, *, strict: bool = False) -> tuple[list[ConvertedTool], NameMap]:
    """Every tool from `tools/list` for one API, with the name map to read calls back (notebook 02)."""
    wires = [wire_tool(t) for t in tools]
    names = NameMap([w["name"] for w in wires])
    return [convert_tool(w, api, strict=strict, name=names.provider(w["name"])) for w in wires], names


@dataclass(frozen=True)
class McpCall:
    """A model's tool call as MCP `tools/call` params, or why it cannot be sent (notebook 02)."""

    name: str
    arguments: dict[str, Any] | None
    error: str | None = None

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments or {}}


def to_mcp_call(name: str, arguments: Any, names: NameMap | None = None, *, nulls_mean_absent: bool = False) -> McpCall:
    """`tool_use.input` (object) or `function.arguments` (JSON string) → MCP params; bad JSON → error (notebook 02)."""
    mcp_name = names.mcp(name) if names else name
    if arguments is None or arguments == "":
        return McpCall(mcp_name, {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as error:
            return McpCall(mcp_name, None, f"arguments for {name!r} are not valid JSON ({error}): {arguments[:80]!r}")
    if not isinstance(arguments, dict):
        return McpCall(mcp_name, None, f"arguments for {name!r} must be a JSON object, got {type(arguments).__name__}")
    return McpCall(mcp_name, drop_nulls(arguments) if nulls_mean_absent else arguments)
