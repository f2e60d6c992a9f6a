"""One-line summaries of JSON-RPC frames, and folding of long values, for tables and diagrams."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from labkit._i18n import _, listing

from ._kinds import Kind

__all__ = ["find_fold", "fold", "frame_kind", "hidden_marker", "summarise_frame"]

_SENTINEL = 987654321


def frame_kind(payload: dict[str, Any]) -> str:
    """`jsonrpc.request`, `.notification`, `.response` or `.error`, from the frame's own keys."""
    if "method" in payload:
        return Kind.JSONRPC_REQUEST if "id" in payload else Kind.JSONRPC_NOTIFICATION
    return Kind.JSONRPC_ERROR if "error" in payload else Kind.JSONRPC_RESPONSE


def fold(value: Any, limit: int = 60) -> str:
    """A value as compact text, cut in the middle with a marker saying how much was left out (notebook 02)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= limit:
        return text
    keep = max(limit - 12, 8)
    head, tail = text[: keep * 2 // 3], text[-(keep // 3) :]
    return f"{head}{hidden_marker(len(text) - len(head) - len(tail))}…{tail}"


def hidden_marker(hidden: int) -> str:
    """The marker standing for `hidden` characters left out, `…(+N chars)`, in the learner's language."""
    return _("…(+{hidden} chars)").format(hidden=hidden)


def find_fold(text: str) -> re.Match[str] | None:
    """Where `fold` cut `text` (the marker and the `…` after it); the count of hidden characters is `more`."""
    return _fold_pattern(hidden_marker(_SENTINEL)).search(text)


@functools.cache
def _fold_pattern(marker: str) -> re.Pattern[str]:
    # Built once per language from the marker itself, so fold and its reader share one rule.
    return re.compile(re.escape(marker + "…").replace(str(_SENTINEL), r"(?P<more>\d+)"))


def summarise_frame(payload: dict[str, Any], method: str | None = None) -> str:
    """What a frame says, in a few words: method and target, or the shape of the reply.

    Never raises: a frame of a shape it does not know is shown folded instead.
    """
    try:
        return _summarise(payload, method)
    except (AttributeError, KeyError, TypeError):
        return fold(payload, 70)


def _summarise(payload: dict[str, Any], method: str | None) -> str:
    kind = frame_kind(payload)
    params = payload.get("params") or {}
    if kind == Kind.JSONRPC_REQUEST:
        return _summarise_request(payload["method"], params)
    if kind == Kind.JSONRPC_NOTIFICATION:
        if payload["method"] == "notifications/cancelled" and "requestId" in params:
            # Which request it ends: a call the host gave up on (notebook 05), or a listen request it closes (10).
            reason = f" ({fold(params['reason'], 40)})" if params.get("reason") else ""
            return f"notifications/cancelled {params['requestId']}{reason}"
        return payload["method"]
    if kind == Kind.JSONRPC_ERROR:
        error = payload["error"]
        return f"error {error.get('code')}: {fold(error.get('message', ''), 70)}"
    return _summarise_result(method, payload.get("result") or {})


def _summarise_request(method: str, params: dict[str, Any]) -> str:
    if method == "tools/call":
        text = f"tools/call {params.get('name')} {fold(params.get('arguments', {}), 70)}"
        if "requestState" in params:
            answers = fold(params.get("inputResponses", {}), 50)
            text += f" + inputResponses {answers} + requestState"
        return text
    if method == "elicitation/create":
        return f"elicitation/create: {fold(params.get('message', ''), 60)}"
    if method in ("prompts/get", "resources/read"):
        return f"{method} {params.get('name') or params.get('uri')}"
    if method == "initialize":
        return f"initialize (protocolVersion {params.get('protocolVersion')})"
    return method


def _summarise_result(method: str | None, result: dict[str, Any]) -> str:
    prefix = f"{method} → " if method else ""
    if result.get("resultType") == "input_required":
        asks = listing(result.get("inputRequests", {}))
        return f"{prefix}input_required ({asks}) + requestState"
    if method == "tools/list" or "tools" in result:
        names = [t.get("name") for t in result.get("tools", [])]
        ttl = _(", ttlMs {ttl}").format(ttl=result["ttlMs"]) if "ttlMs" in result else ""
        return _("{prefix}{n} tools{ttl}: {names}").format(
            prefix=prefix, n=len(names), ttl=ttl, names=fold(listing(names), 60)
        )
    if "action" in result:
        return f"{prefix}{result['action']} {fold(result.get('content', {}), 50)}"
    if isinstance(result.get("content"), list):
        kinds = [c.get("type") for c in result["content"]]
        flag = "isError " if result.get("isError") else ""
        structured = " + structuredContent" if "structuredContent" in result else ""
        text = next((c.get("text") for c in result["content"] if c.get("type") == "text"), "")
        # One line: a table shows a newline of pretty-printed JSON as a literal "\n".
        flat = " ".join((text or "").split())
        return f"{prefix}{flag}{'+'.join(kinds) or _('no content')}{structured}: {fold(flat, 50)}"
    if method == "initialize":
        return f"{prefix}protocolVersion {result.get('protocolVersion')}"
    if method == "server/discover":
        return f"{prefix}supportedVersions {result.get('supportedVersions')}"
    return f"{prefix}{fold(result, 60)}"
