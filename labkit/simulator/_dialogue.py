"""The neutral conversation form every API adapter parses into, and the decision the policy returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

__all__ = ["Choice", "Decision", "Dialogue", "Message", "PlannedCall", "ToolOutcome", "ToolSeen", "ToolSpec"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as offered to the model: provider name, description, JSON Schema, and the output schema where the
    API carries one (OpenAI Responses) (notebook 01)."""

    name: str
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] = field(default_factory=dict)

    @property
    def properties(self) -> dict[str, Any]:
        return self.schema.get("properties") or {}

    @property
    def required(self) -> list[str]:
        return list(self.schema.get("required") or [])


@dataclass(frozen=True)
class ToolSeen:
    """A tool call the model made earlier in the conversation (notebook 01)."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolOutcome:
    """A tool result the host wrote back, paired with its call (notebook 01)."""

    call_id: str
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class Message:
    """One turn: user text and/or tool results, or assistant text and/or tool calls (notebook 01)."""

    role: Literal["user", "assistant"]
    text: str = ""
    calls: tuple[ToolSeen, ...] = ()
    results: tuple[ToolOutcome, ...] = ()


@dataclass(frozen=True)
class Choice:
    """`tool_choice`, with the three APIs' spellings folded into auto / any / none / tool (notebook 01)."""

    mode: Literal["auto", "any", "none", "tool"] = "auto"
    name: str | None = None


@dataclass
class Dialogue:
    """A whole request, whichever API it came from (notebook 01)."""

    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    choice: Choice = field(default_factory=Choice)
    parallel: bool = True
    system: str = ""
    scenario: str | None = None

    @property
    def user_texts(self) -> list[str]:
        return [m.text for m in self.messages if m.role == "user" and m.text]

    @property
    def assistant_turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "assistant")

    @property
    def last(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)

    def call_name(self, call_id: str) -> str:
        """The tool name of an earlier call, looked up by its id."""
        for message in self.messages:
            for call in message.calls:
                if call.id == call_id:
                    return call.name
        return "unknown tool"


@dataclass(frozen=True)
class PlannedCall:
    """A tool call the model decided to make; the adapter gives it an id (notebook 01)."""

    name: str
    arguments: dict[str, Any]


@dataclass
class Decision:
    """What the model says next: text, tool calls, and the reasons (the decision trace) (notebook 01)."""

    literal: ClassVar[bool] = False
    """True where the calls must be sent as written, not fitted to the tools' schemas (a skill's, notebook 06)."""

    text: str = ""
    calls: list[PlannedCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    declined: bool = False
    """True when the model cannot do the task with what it was given; the adapters send it as each API's
    refusal (Anthropic `stop_reason: "refusal"`, a Chat `refusal`, a Responses refusal part) (notebook 03)."""
    reason: str = ""
    """Why this turn makes its calls, in one note a view can show beside them (the naive model's obeyed order,
    notebook 07); sent in its own header, so nothing reads it out of the notes' words."""
