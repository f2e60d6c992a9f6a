"""The rule-based fallback: which offered tool fits the user's words, and with which arguments."""

from __future__ import annotations

import re
from typing import Any

from labkit._i18n import N_, _, listing

from ._arguments import candidates, coerce, extract_arguments, guess_value, missing_required
from ._dialogue import Decision, Dialogue, PlannedCall, ToolSpec
from ._words import content_words, name_words

__all__ = ["ASK_MARK", "asks_to_read", "choose_tool", "score_tool", "writes"]

ASK_MARK = N_("but I am missing the required parameter(s)")
_WHEN = re.compile(r"\buse (?:this |it )?(?:tool )?(?:when|for|to)\b([^.]*)", re.I)
_VAGUE_BELOW = 3
_WRITE_VERBS = frozenset(
    """add apply cancel checkout commit create delete deploy drop edit init insert merge move patch post push
    put remove rename reset restart revert save send set update upload write""".split()
)
_READ_OPENERS = frozenset("what which how who when where why is are does do did show list tell find check".split())
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
            _("score {tool} = {score} ({why})").format(tool=tool.name, score=score, why=why)
            + (_(" — description too vague to rely on") if _is_vague(tool) else "")
        )
        ranked.append((score, -index, tool))
    return [(score, tool) for score, _, tool in sorted(ranked, key=lambda r: r[:2], reverse=True)]


def writes(tool: ToolSpec) -> bool:
    """A tool whose name holds a verb that changes things (`git_commit`, `create_issue`) (notebook 01)."""
    return bool(name_words(tool.name) & _WRITE_VERBS)


def asks_to_read(text: str) -> bool:
    """A question or a request to show something: "What changed…?", "Show me…" (notebook 01)."""
    first = re.match(r"\s*([A-Za-z]+)", text)
    return first is not None and first.group(1).lower() in _READ_OPENERS


def _pick(dialogue: Dialogue, notes: list[str]) -> tuple[ToolSpec | None, list[ToolSpec]]:
    """The best offered tool, and the write tools that matched but were left out of a read question."""
    ranked = _ranked(dialogue, notes)
    choice = dialogue.choice
    if choice.mode == "tool":
        return dialogue.tool(choice.name or ""), []
    if choice.mode == "any":
        return ranked[0][1], []
    eligible = [(score, tool) for score, tool in ranked if score > 0 and not _is_vague(tool)]
    reading = asks_to_read(dialogue.user_texts[0] if dialogue.user_texts else "")
    left_out = [tool for _score, tool in eligible if reading and writes(tool)]
    for tool in left_out:
        notes.append(_("{tool} changes things and the user asks to read: not calling it").format(tool=tool.name))
    chosen = [tool for _score, tool in eligible if tool not in left_out]
    return (chosen[0] if chosen else None), left_out


def _answer_to_question(dialogue: Dialogue, tool: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """Read a short reply to our own clarifying question as the first missing parameter."""
    messages = dialogue.messages
    asked = len(messages) >= 2 and messages[-2].role == "assistant" and _(ASK_MARK) in messages[-2].text
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
    """Pick a tool from the user's words, fill its arguments, or ask back / decline (notebook 01)."""
    notes: list[str] = []
    tool, left_out = _pick(dialogue, notes)
    forced = dialogue.choice.mode in {"any", "tool"}
    if tool is None:
        return _decline(dialogue, left_out, notes)
    text = " ".join(dialogue.user_texts)
    arguments = _answer_to_question(dialogue, tool, extract_arguments(tool.schema, text))
    missing = missing_required(tool.schema, arguments)
    if missing and not forced:
        wanted = listing(
            f"`{m}` ({tool.properties.get(m, {}).get('description', _('no description'))})" for m in missing
        )
        return Decision(
            _("I could use `{tool}`, {mark} {wanted}. Could you tell me?").format(
                tool=tool.name, mark=_(ASK_MARK), wanted=wanted
            ),
            notes=notes,
        )
    if missing:
        guessed = {m: guess_value(m, tool.properties.get(m, {})) for m in missing}
        notes.append(
            _("tool_choice={mode} forces a call: guessed {guessed}").format(mode=dialogue.choice.mode, guessed=guessed)
        )
        arguments |= guessed
    spread = _spread(tool, arguments, text) if dialogue.parallel else [arguments]
    return Decision("", [PlannedCall(tool.name, args) for args in spread], notes)


def _decline(dialogue: Dialogue, writers: list[ToolSpec], notes: list[str]) -> Decision:
    """No offered tool can do the task: say so, as a refusal the host can read (not as an answer)."""
    # Quoted without its question mark: a host reads a "?" before the work is done as the model asking back.
    question = (dialogue.user_texts[-1] if dialogue.user_texts else "").strip().rstrip("?!. ")
    if writers:
        text = _(
            '"{question}" asks to read, and the only matching tools ({tools}) change things, so I will '
            "not call them; I cannot answer this with the tools offered."
        ).format(question=question, tools=listing(f"`{t.name}`" for t in writers))
        return Decision(text, notes=notes, declined=True)
    names = listing(f"`{t.name}`" for t in dialogue.tools)
    vague = [f"`{t.name}`" for t in dialogue.tools if _is_vague(t)]
    hint = (
        _(" ({tools}: the description is too vague to tell what it does)").format(tools=listing(vague)) if vague else ""
    )
    text = _('None of the available tools ({tools}) seems to match "{question}"{hint}, so I cannot answer it.').format(
        tools=names, question=question, hint=hint
    )
    return Decision(text, notes=notes, declined=True)
