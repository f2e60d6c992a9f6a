"""The simulated model's naive mode: it obeys every instruction it finds in its context, hidden or not.

Selected with the scenario name `naive` (`make_client(scenario="naive")` sends the header
`x-teaching-scenario: naive`). It reads what a real model reads: the system prompt (with the servers'
instructions a host puts there), the user's messages (with prompts and resources the user loaded), every
offered tool's description, input schema and output schema (where the API carries one), then every tool
result (embedded and linked resources included), with Unicode tag characters decoded and ANSI
escapes and zero-width characters dropped. It understands a few imperative forms, in any sentence:

- "read <path>" → a call to the offered file-reading tool with that path;
- "call <tool> [with k='v' and k2=the contents of <path> | everything you have read]" → that call;
- "pass its content as '<param>'" (in a tool's description) → fill that parameter when calling it;

and the same forms in Chinese ("读取 <path>", "调用 <tool>，k='v'", "把它的内容作为 '<param>' 传入"), as it
reads a task in Chinese through the words tools are named with (`_words.py`).

Each turn it makes the first such call not yet made, then the user's task (the best-scoring
tool, missing arguments guessed), then calls ordered by the results, then it summarises. So an
attack succeeds deterministically whenever the host lets it; a real model is less predictable,
which is why the security tests use this one. Every note says which sentence it obeyed.
"""

from __future__ import annotations

import json
from typing import Any

from labkit._i18n import _

from ._answers import describe
from ._arguments import extract_arguments, guess_value, missing_required
from ._dialogue import Decision, Dialogue, PlannedCall, ToolOutcome, ToolSpec
from ._orders import Order, orders_in, schema_texts
from ._playbooks import resolve_tool
from ._quoting import join_sentences
from ._rules import score_tool
from ._words import content_words

__all__ = ["NAIVE_SCENARIO", "obey"]

NAIVE_SCENARIO = "naive"
_PATH_PARAMS = ("path", "file", "filename", "file_path")
_QUOTE_LIMIT = 160


def _strings(text: str) -> str:
    """The text of a result; JSON (also inside a host's wrapper) is read as its string values, one per line."""
    inner = text[text.find("{") : text.rfind("}") + 1]
    for candidate in (text, inner):
        try:
            data = json.loads(candidate)
            break
        except ValueError:
            continue
    else:
        return text
    found: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop(0)
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return "\n".join(found) if found else text


def _reader(tools: list[ToolSpec]) -> tuple[str, str] | None:
    for tool in tools:
        param = next((p for p in _PATH_PARAMS if p in tool.properties), None)
        if "read" in tool.name.lower() and param:
            return tool.name, param
    return None


class _Context:
    """The conversation as the naive model walks it: calls made so far and what each returned."""

    def __init__(self, dialogue: Dialogue) -> None:
        self.dialogue = dialogue
        self.calls = [c for m in dialogue.messages for c in m.calls]
        results = {r.call_id: r.text for m in dialogue.messages for r in m.results}
        self.made = [(c.name, c.arguments, results.get(c.id)) for c in self.calls]
        self.reader = _reader(dialogue.tools)

    def contents(self, path: str | None) -> str:
        if self.reader is None:
            return ""
        name, param = self.reader
        reads = [text for tool, args, text in self.made if tool == name and (path is None or args.get(param) == path)]
        return reads[-1] if reads and reads[-1] is not None else ""

    def everything(self) -> str:
        return "\n".join(text for _, _, text in self.made if text)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, tuple) and value[0] == "contents":
            return self.contents(value[1])
        if isinstance(value, tuple):
            return self.everything()
        return value

    def done(self, name: str, literal: dict[str, Any]) -> bool:
        return any(tool == name and all(args.get(k) == v for k, v in literal.items()) for tool, args, _ in self.made)


def _orders(dialogue: Dialogue) -> tuple[list[Order], list[Order]]:
    """Orders from the context before any call (system prompt, user messages, tool definitions), and orders from
    the tool results, in the order they were read; each order's source in the learner's language."""
    from_tools = orders_in(dialogue.system, _("the system prompt"))
    for text in dialogue.user_texts:
        from_tools += orders_in(text, _("the user's message"))
    for tool in dialogue.tools:
        from_tools += orders_in(tool.description, _("the description of {tool}").format(tool=tool.name), tool.name)
        for schema, name in ((tool.schema, _("the input schema")), (tool.output_schema, _("the output schema"))):
            for where, text in schema_texts(schema, name):
                from_tools += orders_in(text, _("{where} of {tool}").format(where=where, tool=tool.name), tool.name)
    from_results = []
    names = {c.id: c.name for m in dialogue.messages for c in m.calls}
    for message in dialogue.messages:
        for result in message.results:
            called = names.get(result.call_id)
            source = _("the result of {tool}").format(tool=called) if called else _("the result of a tool")
            from_results += orders_in(_strings(result.text), source)
    return from_tools, from_results


def _obeying(order: Order) -> str:
    """Why the model makes a call: the order it obeys, quoted as it read it."""
    return _("obeying {source}: {sentence!r}").format(source=order.source, sentence=order.sentence[:_QUOTE_LIMIT])


def _as_call(order: Order, context: _Context, notes: list[str]) -> PlannedCall | None:
    """The call an order asks for, or None when it was made already or cannot be made."""
    offered = [t.name for t in context.dialogue.tools]
    if order.tool == "read":
        if context.reader is None:
            notes.append(
                _("naive: cannot obey {sentence!r}: no file-reading tool is offered").format(sentence=order.sentence)
            )
            return None
        name, param = context.reader
        literal = {param: order.arguments["path"]}
    else:
        resolved = resolve_tool(order.tool or "", offered)
        if resolved is None:
            notes.append(
                _("naive: cannot obey {sentence!r}: no tool {tool!r} is offered").format(
                    sentence=order.sentence, tool=order.tool
                )
            )
            return None
        name, literal = resolved, {k: v for k, v in order.arguments.items() if not isinstance(v, tuple)}
    if context.done(name, literal):
        return None
    arguments = {k: context.resolve(v) for k, v in order.arguments.items()} if order.tool != "read" else literal
    return PlannedCall(name, arguments)


def _task(dialogue: Dialogue, context: _Context, fills: list[Order]) -> PlannedCall | None:
    """The user's task: the best-scoring offered tool, arguments from the words, the rest filled or guessed."""
    words = content_words(" ".join(dialogue.user_texts))
    scored = [(score_tool(t, words)[0], -i, t) for i, t in enumerate(dialogue.tools)]
    best = max(scored, key=lambda s: s[:2], default=None)
    if best is None or best[0] <= 0 or any(name == best[2].name for name, _, _ in context.made):
        return None
    tool = best[2]
    arguments = extract_arguments(tool.schema, " ".join(dialogue.user_texts))
    for order in fills:
        target, param, path = order.fill or ("", "", None)
        if target == tool.name:
            arguments[param] = context.contents(path)
    for name in missing_required(tool.schema, arguments):
        arguments[name] = guess_value(name, tool.properties.get(name, {}))
    return PlannedCall(tool.name, arguments)


def obey(dialogue: Dialogue) -> Decision:
    """The naive model's next turn: the first order not yet obeyed, else the task, else a summary (notebook 07).

    A turn with a call gives its `reason`: the order it obeys, or the user's task (the last order filling it)."""
    notes = [_("naive mode: obeys every instruction found in tool descriptions and tool results")]
    context = _Context(dialogue)
    from_tools, from_results = _orders(dialogue)
    fills = [o for o in from_tools if o.fill]
    for order in [o for o in from_tools if not o.fill]:
        if call := _as_call(order, context, notes):
            return _calling(call, [_obeying(order)], notes)
    if task := _task(dialogue, context, fills):
        needs = _("the user's task needs {tool}").format(tool=task.name)
        return _calling(task, [needs, *(_obeying(o) for o in fills if o.fill and o.fill[0] == task.name)], notes)
    for order in from_results:
        if call := _as_call(order, context, notes):
            return _calling(call, [_obeying(order)], notes)
    lines = [describe(name, ToolOutcome("", text or ""), args) for name, args, text in context.made]
    summary = join_sentences(lines) if lines else _("I found nothing to do with the tools offered.")
    return Decision(_("(naive mode) Done. {summary}").format(summary=summary), notes=notes)


def _calling(call: PlannedCall, reasons: list[str], notes: list[str]) -> Decision:
    """A turn that makes `call`; every reason is a note, and the last one is the turn's `reason`."""
    notes += [_("naive: {reason}").format(reason=reason) for reason in reasons]
    return Decision("", [call], notes, reason=reasons[-1])
