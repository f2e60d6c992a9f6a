"""The rule-based fallback: which offered tool fits the user's words, and with which arguments."""

from __future__ import annotations

import re
from typing import Any

from ._arguments import candidates, coerce, extract_arguments, guess_value, missing_required
from ._dialogue import Decision, Dialogue, PlannedCall, ToolSpec
from ._words import content_words, name_words

__all__ = ["ASK_MARK", "choose_tool", "score_tool"]

ASK_MARK = "but I am missing the required parameter(s)"
_WHEN = re.compile(r"\buse (?:this |it )?(?:tool )?(?:when|for|to)\b([^.]*)", re.I)
_VAGUE_BELOW = 3
_MAX_PARALLEL = 4


def score_tool(tool: ToolSpec, words: set[str]) -> tuple[int, str]:
    """3·name words + description words + 2·"use when…" words shared with the user, and why (notebook 01)."""
    by_name = name_words(tool.name) & words
    by_description = content_words(tool.description) & words
    by_when = set().union(*(content_words(m) for m in _WHEN.findall(tool.description))) & words
    score = 3 * len(by_name) + len(by_description) + 2 * len(by_when)
    why = f"name {sorted(by_name)}, description {sorted(by_description)}, use-when {sorted(by_when)}"
    return score, why


def _is_vague(tool: ToolSpec) -> bool:
    return len(content_words(tool.description)) < _VAGUE_BELOW


def _ranked(dialogue: Dialogue, notes: list[str]) -> list[tuple[int, ToolSpec]]:
    words = content_words(" ".join(dialogue.user_texts))
    ranked = []
    for index, tool in enumerate(dialogue.tools):
        score, why = score_tool(tool, words)
        notes.append(
            f"score {tool.name} = {score} ({why})" + (" — description too vague to rely on" if _is_vague(tool) else "")
        )
        ranked.append((score, -index, tool))
    return [(score, tool) for score, _, tool in sorted(ranked, key=lambda r: r[:2], reverse=True)]


def _pick(dialogue: Dialogue, notes: list[str]) -> ToolSpec | None:
    ranked = _ranked(dialogue, notes)
    choice = dialogue.choice
    if choice.mode == "tool":
        return dialogue.tool(choice.name or "")
    if choice.mode == "any":
        return ranked[0][1]
    eligible = [(score, tool) for score, tool in ranked if score > 0 and not _is_vague(tool)]
    return eligible[0][1] if eligible else None


def _answer_to_question(dialogue: Dialogue, tool: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """Read a short reply to our own clarifying question as the first missing parameter."""
    messages = dialogue.messages
    asked = len(messages) >= 2 and messages[-2].role == "assistant" and ASK_MARK in messages[-2].text
    reply = messages[-1].text.strip().rstrip(".") if messages else ""
    missing = missing_required(tool.schema, arguments)
    if asked and missing and f"`{tool.name}`" in messages[-2].text and 0 < len(reply.split()) <= 5:
        return {**arguments, missing[0]: coerce(tool.properties.get(missing[0], {}), reply)}
    return arguments


def _spread(tool: ToolSpec, arguments: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """One call per value when the user names several for a tool's only required parameter."""
    if len(tool.required) != 1:
        return [arguments]
    name = tool.required[0]
    values = list(dict.fromkeys(v for _, v in candidates(name, tool.properties.get(name, {}), text)))
    return [{**arguments, name: v} for v in values[:_MAX_PARALLEL]] if len(values) > 1 else [arguments]


def choose_tool(dialogue: Dialogue) -> Decision:
    """Pick a tool from the user's words, fill its arguments, or ask back / answer in text (notebook 01)."""
    notes: list[str] = []
    tool = _pick(dialogue, notes)
    forced = dialogue.choice.mode in {"any", "tool"}
    if tool is None:
        names = ", ".join(f"`{t.name}`" for t in dialogue.tools)
        vague = [f"`{t.name}`" for t in dialogue.tools if _is_vague(t)]
        hint = f" ({', '.join(vague)}: the description is too vague to tell what it does)" if vague else ""
        question = dialogue.user_texts[-1] if dialogue.user_texts else ""
        return Decision(
            f'None of the available tools ({names}) seems to match "{question}"{hint}, so I answer without tools.',
            notes=notes,
        )
    text = " ".join(dialogue.user_texts)
    arguments = _answer_to_question(dialogue, tool, extract_arguments(tool.schema, text))
    missing = missing_required(tool.schema, arguments)
    if missing and not forced:
        wanted = ", ".join(
            f"`{m}` ({tool.properties.get(m, {}).get('description', 'no description')})" for m in missing
        )
        return Decision(f"I could use `{tool.name}`, {ASK_MARK} {wanted}. Could you tell me?", notes=notes)
    if missing:
        guessed = {m: guess_value(m, tool.properties.get(m, {})) for m in missing}
        notes.append(f"tool_choice={dialogue.choice.mode} forces a call: guessed {guessed}")
        arguments |= guessed
    spread = _spread(tool, arguments, text) if dialogue.parallel else [arguments]
    return Decision("", [PlannedCall(tool.name, args) for args in spread], notes)
