"""What servers put in the model's context besides tool results: instructions, content blocks, prompts, resources."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from mcp import Client
from mcp.shared.exceptions import MCPError

from .._i18n import _, listing
from ..trace import Kind, Trace
from ._guards import Guard
from ._sanitise import sanitise

__all__ = ["block_text", "contents_text", "follow_links", "guarded", "instructions_prompt"]


def contents_text(contents: Sequence[Any]) -> str:
    """The text of resource contents (`resources/read`, an embedded resource); a blob is named, not inlined."""
    parts = []
    for item in contents:
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(f"[resource {item.uri}]\n{sanitise(text)}")
        else:
            size = len(base64.b64decode(item.blob))
            parts.append(f"[resource {item.uri}: {item.mime_type or 'binary'}, {size} bytes, kept by the host]")
    return "\n".join(parts)


def block_text(block: Any, linked: dict[str, str]) -> str | None:
    """What the model reads of one content block; `linked` holds the text of resource links the host followed."""
    if block.type == "text":
        return sanitise(block.text)
    if block.type == "image":
        return f"[{block.mime_type} image, {len(base64.b64decode(block.data))} bytes, kept by the host]"
    if block.type == "resource":
        return contents_text([block.resource])
    if block.type == "resource_link":
        return linked.get(str(block.uri), f"[resource link {block.uri}]")
    return None


async def follow_links(client: Client, blocks: Sequence[Any]) -> dict[str, str]:
    """Read every resource a result links to, from the server that returned it, as a host that follows links does.

    A link is read only from its own server: a result cannot make the host read another server's resources.
    """
    linked = {}
    for block in blocks:
        if block.type == "resource_link" and str(block.uri) not in linked:
            try:
                read = await client.read_resource(str(block.uri))
            except MCPError as error:
                linked[str(block.uri)] = (
                    f"[resource link {block.uri}: the server could not read it ({error.error.message})]"
                )
                continue
            linked[str(block.uri)] = contents_text(read.contents)
    return linked


def guarded(guards: Sequence[Guard], server: str, name: str, text: str) -> str:
    """Server content on its way into the context, through every guard's `on_result`, as a tool result goes."""
    for guard in guards:
        text = guard.on_result(server, name, text, False)
    return text


def instructions_prompt(trace: Trace, clients: dict[str, Client], guards: Sequence[Guard], base: str | None) -> str:
    """`base` followed by each server's `instructions` that the guards let through, as a host's system prompt."""
    told = {}
    for server, client in clients.items():
        text = client.instructions or ""
        for guard in guards:
            text = guard.on_instructions(server, text)
        if text:
            told[server] = text
    if not told:
        return base or ""
    trace.record(
        "host",
        "host",
        Kind.HOST_CONTEXT,
        _("puts the instructions of {servers} in the system prompt").format(servers=listing(told)),
        payload=told,
    )
    lines = [_("Instructions from the MCP servers:"), *(f"[{server}] {text}" for server, text in told.items())]
    return "\n\n".join([*([base] if base else []), "\n".join(lines)])
