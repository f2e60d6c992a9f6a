"""Strict mode: a tool's input schema as providers' strict modes require it, and the nulls it makes dropped again."""

from __future__ import annotations

import copy
import functools
from typing import Any

__all__ = ["drop_nulls", "strict_schema"]


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if kind is None:
        return {"anyOf": [schema, {"type": "null"}]}
    kinds = kind if isinstance(kind, list) else [kind]
    nullable = {**schema, "type": kinds if "null" in kinds else [*kinds, "null"]}
    if "enum" in schema and None not in schema["enum"]:
        nullable["enum"] = [*schema["enum"], None]
    return nullable


def strict_schema(schema: dict[str, Any], *, require_all: bool = True) -> dict[str, Any]:
    """Strict mode done right: no extra keys anywhere; for OpenAI (`require_all`) every property required and
    optional ones nullable; Anthropic's strict keeps optional properties optional (notebook 02)."""
    result = copy.deepcopy(schema)
    inner = functools.partial(strict_schema, require_all=require_all)
    if result.get("type") == "object" or "properties" in result:
        properties = result.get("properties") or {}
        required = set(result.get("required") or [])
        result["properties"] = {
            k: inner(v) if k in required or not require_all else _nullable(inner(v)) for k, v in properties.items()
        }
        if require_all:
            result["required"] = list(properties)
        result["additionalProperties"] = False
    if isinstance(result.get("items"), dict):
        result["items"] = inner(result["items"])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in result:
            result[key] = [inner(s) for s in result[key]]
    for key in ("$defs", "definitions"):
        if key in result:
            result[key] = {k: inner(s) for k, s in result[key].items()}
    return result


def drop_nulls(value: Any) -> Any:
    """Remove `null` arguments (strict mode's "not given") so the MCP server's defaults apply (notebook 02)."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value
