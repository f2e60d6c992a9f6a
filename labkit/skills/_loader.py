"""The host's side of skills: the catalog in the system prompt, and host-side tools that load the rest on demand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import GetPromptResult, TextContent, Tool, ToolAnnotations

from labkit._i18n import _, listing

from ..host import LocalTool, LocalToolResult
from ..trace import Kind, Trace, estimate_tokens
from ._library import SkillLibrary

__all__ = ["SkillLoader"]

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


PromptAsker = Callable[[str, str, dict[str, Any]], Awaitable[GetPromptResult]]
"""Fetches (server, prompt name, arguments) from a connected server: `Host.get_prompt`; KeyError if not connected."""


class SkillLoader:
    """Progressive loading, every load recorded in the trace with its tier, bytes and estimated tokens (notebook 06).

    Tier 1: `system_prompt(base)` adds the catalog (names and descriptions). Tier 2: the model calls
    `load_skill(name)` and gets the skill's body. Tier 3: the model calls
    `read_skill_resource(skill, path)` for one file of a loaded skill, or `get_skill_prompt(...)` for
    an MCP prompt a loaded skill names, fetched through `ask_server` (e.g. `Host.get_prompt`). The host answers all
    three itself.
    """

    def __init__(self, library: SkillLibrary, trace: Trace, *, ask_server: PromptAsker | None = None) -> None:
        self.library = library
        self.trace = trace
        self.ask_server = ask_server
        self.loaded: list[str] = []

    def system_prompt(self, base: str) -> str:
        """`base` followed by the tier-1 catalog; records what the catalog adds to every request."""
        catalog = self.library.catalog()
        self._record(
            1,
            Kind.SKILL_CATALOG,
            "catalog",
            _("the catalog of {n_library} skill(s) goes into the system prompt").format(n_library=len(self.library)),
            catalog,
            "host",
        )
        return f"{base}\n\n{catalog}"

    @property
    def tools(self) -> list[LocalTool]:
        """The host-side tools to pass as `Host(..., local_tools=loader.tools)`."""
        names = {"type": "string", "enum": self.library.names, "description": "The skill's name from the catalog."}
        tools = [
            LocalTool(
                Tool(
                    name="load_skill",
                    description=(
                        "Load a skill's instructions (the body of its SKILL.md) by name. Use it first when the "
                        "user's task matches a skill's description in the catalog, or the user names a skill. "
                        "Returns the skill's Markdown body and the list of its files."
                    ),
                    input_schema={"type": "object", "properties": {"name": names}, "required": ["name"]},
                    annotations=_READ_ONLY,
                ),
                self._load,
            ),
            LocalTool(
                Tool(
                    name="read_skill_resource",
                    description=(
                        "Read one file of a loaded skill by its path inside the skill's folder, e.g. "
                        "references/plan-rules.md. Use it only when the skill's method asks for the file. "
                        "Returns the file's text."
                    ),
                    input_schema={
                        "type": "object",
                        "properties": {
                            "skill": names,
                            "path": {
                                "type": "string",
                                "description": "Relative path inside the skill, e.g. references/x.md",
                            },
                        },
                        "required": ["skill", "path"],
                    },
                    annotations=_READ_ONLY,
                ),
                self._read,
            ),
        ]
        if self.ask_server is not None:
            tools.append(
                LocalTool(
                    Tool(
                        name="get_skill_prompt",
                        description=(
                            "Get a prompt template from a connected MCP server when a loaded skill's method names it "
                            "as server/prompt. Returns the prompt's text."
                        ),
                        input_schema={
                            "type": "object",
                            "properties": {
                                "server": {"type": "string"},
                                "name": {"type": "string"},
                                "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
                            },
                            "required": ["server", "name"],
                        },
                        annotations=_READ_ONLY,
                    ),
                    self._prompt,
                )
            )
        return tools

    async def _load(self, arguments: dict[str, Any]) -> LocalToolResult:
        name = str(arguments.get("name", ""))
        if name not in self.library:
            return self._refuse(
                _("no skill called {name!r}; the catalog lists {names}").format(
                    name=name, names=listing(self.library.names)
                )
            )
        skill = self.library.get(name)
        files = listing(skill.resources) or "none"
        text = (
            f'<skill name="{name}">\n{skill.body}\nFiles of this skill (read one with read_skill_resource '
            f"only when the method asks for it): {files}\n</skill>"
        )
        self.loaded.append(name)
        self._record(
            2, Kind.SKILL_LOAD, name, _("loads the body of {name}, as the model asked").format(name=name), text, "model"
        )
        return LocalToolResult(text)

    async def _read(self, arguments: dict[str, Any]) -> LocalToolResult:
        name, path = str(arguments.get("skill", "")), str(arguments.get("path", ""))
        if name not in self.loaded:
            return self._refuse(_("load the skill {name!r} with load_skill before reading its files").format(name=name))
        try:
            text = self.library.read_resource(name, path)
        except (KeyError, ValueError) as error:
            return self._refuse(str(error).strip("\"'"))
        self._record(
            3,
            Kind.SKILL_RESOURCE,
            f"{name}/{path}",
            _("reads {path} of {name}, as its method asks").format(path=path, name=name),
            text,
            "model",
        )
        return LocalToolResult(text)

    async def _prompt(self, arguments: dict[str, Any]) -> LocalToolResult:
        server, name = str(arguments.get("server", "")), str(arguments.get("name", ""))
        named = any(f"{server}/{name}(" in self.library.get(s).body for s in self.loaded)
        if not named:
            return self._refuse(
                _("no loaded skill names the prompt {server}/{name}; the host fetches only those").format(
                    server=server, name=name
                )
            )
        assert self.ask_server is not None  # the tool is offered only with one
        try:
            result = await self.ask_server(server, name, arguments.get("arguments") or {})
        except KeyError:
            return self._refuse(_("the host is not connected to a server called {server!r}").format(server=server))
        except Exception as error:  # noqa: BLE001 - the server's protocol error, shown to the model as a refusal
            return self._refuse(
                _("the {server} server refused the prompt {name}: {error}").format(
                    server=server, name=name, error=error
                )
            )
        text = "\n".join(m.content.text for m in result.messages if isinstance(m.content, TextContent))
        self._record(
            3,
            Kind.SKILL_PROMPT,
            f"{server}/{name}",
            _("gets the {name} prompt from the {server} server, as the skill's method asks").format(
                name=name, server=server
            ),
            text,
            "model",
        )
        return LocalToolResult(text)

    def _refuse(self, reason: str) -> LocalToolResult:
        self.trace.record("host", "host", Kind.SKILL_REFUSE, f"refuses: {reason}", payload={"reason": reason})
        return LocalToolResult(f"The host refused: {reason}.", is_error=True)

    def _record(self, tier: int, kind: str, item: str, what: str, text: str, requested_by: str) -> None:
        size, tokens = len(text.encode("utf-8")), estimate_tokens(text)
        self.trace.record(
            "host",
            "host",
            kind,
            _("tier {tier}: {what} ({size} bytes, ~{tokens} tokens)").format(
                tier=tier, what=what, size=size, tokens=tokens
            ),
            name=item,
            payload={"text": text},
            tier=tier,
            bytes=size,
            tokens=tokens,
            requested_by=requested_by,
        )
