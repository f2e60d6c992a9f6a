"""The simulated model's skill behaviour: load the skill the catalog offers for the task, then follow its Method list.

Everything here is read from the request, as a real model would: the catalog from the system prompt
(tier 1, which skill is chosen and why is `_skill_reading.py`), a skill's body from the `load_skill`
result (tier 2), its files from `read_skill_resource` results (tier 3). The body's `## Method` is a
numbered list whose first word is a verb this model can follow:

- `Read `path`` [when the question mentions a, b or c] — read a file of the skill;
- `Ask "question"` — asked when the next Call or Prompt cannot fill its slots from the user's words;
- `Call `tool(arg=value, ...)`` — a value is a literal, `<a|b>` (each one the user names),
  `<each a|b>` (every one) or `<like *.py>` (words matching the pattern);
- `Prompt `server/prompt(arg=value)`` — fetch an MCP prompt through the host's `get_skill_prompt`;
- `Answer "template with {field}"` — one sentence per tool result that has those JSON fields.

Anything else is prose this model cannot follow, and the notes say so. A skill's Call steps are followed
to the letter, arguments the schema does not declare included (the `approved: true` lesson).
"""

from __future__ import annotations

import itertools
import re
from fnmatch import fnmatchcase
from typing import Any

from labkit._i18n import _, listing

from ._answers import sentences
from ._dialogue import Decision, Dialogue, PlannedCall, ToolOutcome, ToolSeen
from ._playbooks import resolve_tool
from ._quoting import cut, json_of
from ._skill_reading import Step, choose_skill, read_catalog, read_method
from ._words import content_words

__all__ = ["LOAD", "PROMPT", "READ", "SkillDecision", "follow_skill"]

LOAD, READ, PROMPT = "load_skill", "read_skill_resource", "get_skill_prompt"
_ROW = re.compile(r"^\|([^|]+)\|([^|]+)\|\s*$", re.M)
_STRIP = "`'\".,;:!?()[]{}"


class SkillDecision(Decision):
    """A decision taken by following a skill: its calls are sent as written, not fitted to the schema (notebook 06)."""

    literal = True


def follow_skill(dialogue: Dialogue, declined: list[str] | None = None) -> Decision | None:
    """Load a matching skill, or take the next step of the loaded one; None when skills play no part (notebook 06).

    When the catalog was read but no skill matched, the reasons are appended to `declined`.
    """
    catalog = read_catalog(dialogue.system)
    offered = [t.name for t in dialogue.tools]
    if not catalog or LOAD not in offered or dialogue.choice.mode in {"none", "tool"}:
        return None
    history = _history(dialogue)
    loads = [(c, r) for c, r in history if c.name == LOAD]
    if not loads:
        last = dialogue.last
        if last is None or last.role != "user" or last.results:
            return None
        name, notes = choose_skill(catalog, " ".join(dialogue.user_texts))
        if name is None and declined is not None:
            declined.extend(notes)
        return SkillDecision("", [PlannedCall(LOAD, {"name": name})], notes) if name else None
    call, result = loads[-1]
    if result is None or result.is_error:
        return None
    return _next_step(dialogue, str(call.arguments.get("name")), result.text, history, offered)


def _next_step(
    dialogue: Dialogue, skill: str, body: str, history: list[tuple[ToolSeen, ToolOutcome | None]], offered: list[str]
) -> Decision:
    steps = read_method(body)
    said = " ".join(dialogue.user_texts)
    read = {c.arguments.get("path"): r for c, r in history if c.name == READ and c.arguments.get("skill") == skill}
    synonyms = _synonyms([r.text for r in read.values() if r is not None and not r.is_error])
    notes = [_("following skill {skill!r}: {n} method step(s)").format(skill=skill, n=len(steps))]
    for index, step in enumerate(steps):
        where = _("step {n} ({verb})").format(n=step.n, verb=step.verb)
        if step.verb == "read":
            if step.target in read:
                continue
            if step.mentions and not content_words(" ".join(step.mentions)) & content_words(said):
                notes.append(
                    _("{where}: skipped, the question mentions none of {words}").format(
                        where=where, words=listing(step.mentions)
                    )
                )
                continue
            notes.append(_("{where}: read {target}").format(where=where, target=step.target))
            return SkillDecision("", [PlannedCall(READ, {"skill": skill, "path": step.target})], notes)
        if step.verb == "ask":
            wanting = next((s for s in steps[index + 1 :] if s.verb in {"call", "prompt"}), None)
            if wanting is not None and _missing(wanting, said, synonyms):
                missing = listing(_missing(wanting, said, synonyms))
                notes.append(_("{where}: {missing} not given, so ask").format(where=where, missing=missing))
                return SkillDecision(step.quote or _("Could you tell me more?"), notes=notes)
            continue
        if step.verb in {"call", "prompt"}:
            decision = _call_step(dialogue, step, where, said, synonyms, history, offered, notes)
            if decision is not None:
                return decision
            continue
        if step.verb == "answer":
            return SkillDecision(_answer(skill, step, steps, history, list(read), said), notes=[*notes, where])
        notes.append(_("{where}: prose, which this simulated model cannot follow").format(where=where))
    return SkillDecision(_answer(skill, Step(0, "answer"), steps, history, list(read), said), notes=notes)


def _call_step(
    dialogue: Dialogue,
    step: Step,
    where: str,
    said: str,
    synonyms: dict[str, str],
    history: list[tuple[ToolSeen, ToolOutcome | None]],
    offered: list[str],
    notes: list[str],
) -> Decision | None:
    missing = _missing(step, said, synonyms)
    if missing:
        text = _("The method needs {missing} for `{target}`, and the question does not say. Could you tell me?")
        return SkillDecision(
            text.format(missing=listing(missing), target=step.target),
            notes=[*notes, _("{where}: cannot fill {missing}").format(where=where, missing=missing)],
        )
    sets = _argument_sets(step, said, synonyms)
    if step.verb == "prompt":
        server, _slash, prompt = step.target.partition("/")
        wanted: list[tuple[str, dict[str, Any]]] = [
            (PROMPT, {"server": server, "name": prompt, "arguments": a}) for a in sets
        ]
    else:
        name = resolve_tool(step.target, offered)
        if name is None:
            text = _("The skill's method calls `{target}`, which the host does not offer, so I cannot follow it.")
            return SkillDecision(
                text.format(target=step.target),
                notes=[*notes, _("{where}: {target} not offered").format(where=where, target=step.target)],
                declined=True,
            )
        wanted = [(name, a) for a in sets]
    made = [(c.name, c.arguments) for c, _ in history]
    pending = [PlannedCall(n, a) for n, a in wanted if (n, a) not in made]
    if not pending:
        return None
    if not dialogue.parallel:
        pending = pending[:1]
    notes.append(
        _("{where}: {n} call(s) to {target}, arguments as the method writes them").format(
            where=where, n=len(pending), target=step.target
        )
    )
    return SkillDecision("", pending, notes)


def _history(dialogue: Dialogue) -> list[tuple[ToolSeen, ToolOutcome | None]]:
    results = {r.call_id: r for m in dialogue.messages for r in m.results}
    return [(c, results.get(c.id)) for m in dialogue.messages for c in m.calls]


def _values(spec: str, said: str, synonyms: dict[str, str]) -> list[object]:
    """Every value a slot takes from the user's words, in the order they were mentioned; [] if none."""
    if not spec.startswith("<"):
        return [_literal(spec)]
    inner = spec.strip("<>").strip()
    if inner.startswith("each "):
        return [v.strip() for v in inner[5:].split("|")]
    if inner.startswith("like "):
        words = [w.strip(_STRIP) for w in said.split()]
        return list(dict.fromkeys(w for w in words if w and fnmatchcase(w, inner[5:].strip())))
    found = []
    for value in (v.strip() for v in inner.split("|")):
        spellings = [value] + [word for word, meant in synonyms.items() if meant == value]
        for spelling in spellings:
            found += [(m.start(), value) for m in re.finditer(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", said, re.I)]
    return list(dict.fromkeys(v for _, v in sorted(found)))


def _missing(step: Step, said: str, synonyms: dict[str, str]) -> list[str]:
    return [f"`{k}` ({v})" for k, v in step.arguments.items() if not _values(v, said, synonyms)]


def _argument_sets(step: Step, said: str, synonyms: dict[str, str]) -> list[dict[str, object]]:
    keys = list(step.arguments)
    choices = [_values(step.arguments[k], said, synonyms) for k in keys]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*choices)]


def _literal(text: str) -> object:
    text = text.strip()
    if text.lower() in {"true", "false"}:
        return text.lower() == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text.strip('"')


def _synonyms(texts: list[str]) -> dict[str, str]:
    """Words a skill's files map to a value: Markdown table rows `| household, kids | family |`."""
    table: dict[str, str] = {}
    for text in texts:
        for words, value in _ROW.findall(text):
            for word in words.split(","):
                if word.strip() and not set(word.strip()) <= set("-: "):
                    table[word.strip().strip("`").lower()] = value.strip().strip("`").lower()
    return table


def _answer(
    skill: str,
    step: Step,
    steps: list[Step],
    history: list[tuple[ToolSeen, ToolOutcome | None]],
    read: list[object],
    question: str,
) -> str:
    """The method's quote filled from each result; without a quote, the results in sentences."""
    tools = {s.target for s in steps if s.verb == "call"}
    lines, unquoted, quoted = [], [], False
    for call, result in history:
        if result is None or call.name in {LOAD, READ, PROMPT} or not any(resolve_tool(t, [call.name]) for t in tools):
            continue
        if result.is_error or result.text.startswith(("Error", "The host did not run")):
            lines.append(_("`{name}` did not give a result: {reason}").format(name=call.name, reason=cut(result.text)))
            continue
        filled = _fill(step.quote, result.text)
        if filled:
            lines.append(filled)
            quoted = True
        else:
            unquoted.append((call, result))
    # A result without the quote's fields fed a later step (the file read before its check, notebook 06): it is put in
    # words only when no result fits the quote, never appended to an answer the quote already gives.
    if unquoted and not quoted:
        lines.append(sentences(unquoted, question))
    files = _(" (read first: {files})").format(files=listing(map(str, read))) if read else ""
    body = " ".join(lines) or _("the tools gave nothing I could quote, so I have no answer.")
    return _("Following the `{skill}` skill{files}: {body}").format(skill=skill, files=files, body=body)


def _fill(template: str, text: str) -> str | None:
    """The method's quote with the result's fields in it; None without a quote or when a field is missing."""
    data = json_of(text)
    fields = re.findall(r"\{(\w+)\}", template)
    if not template or not isinstance(data, dict) or any(f not in data for f in fields):
        return None
    return template.format(**{f: _plain(data[f]) for f in fields})


def _plain(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value
