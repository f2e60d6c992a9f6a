"""Measuring tool choice: a versioned test set of questions, the model's first reply to each, and a scored report."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client

from labkit._i18n import N_, _, listing

from ..host import Api, Conversation, select_model, stdio_transport, wire_tool
from ..trace import Trace
from ._model import make_client

__all__ = [
    "EVAL_SET",
    "VERDICTS",
    "EvalCase",
    "EvalOutcome",
    "EvalSet",
    "ToolChoiceReport",
    "call_text",
    "load_eval_set",
    "run_tool_eval",
    "server_tools",
]

EVAL_SET = Path(__file__).with_name("data") / "tool_choice_eval.json"
"""The lab's tool-choice test set: questions → the expected tool and arguments, or no call (notebook 10)."""

RIGHT, DECLINED, WRONG_TOOL, WRONG_ARGUMENTS, MISSED, FALSE_CALL = (
    N_("right call"),
    N_("rightly no call"),
    N_("wrong tool"),
    N_("wrong arguments"),
    N_("missed call"),
    N_("false call"),
)
VERDICTS = (RIGHT, DECLINED, WRONG_TOOL, WRONG_ARGUMENTS, MISSED, FALSE_CALL)
"""Every verdict a case can get, in report order; the first two count as correct."""
_CORRECT = frozenset({RIGHT, DECLINED})


@dataclass(frozen=True)
class EvalCase:
    """One question, and the tool and arguments it should get; `tool=None` means no tool should be called."""

    id: str
    question: str
    tool: str | None
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalSet:
    """A named, versioned list of cases, with the lab servers whose tools it is written for (notebook 10)."""

    name: str
    version: str
    servers: tuple[str, ...]
    cases: tuple[EvalCase, ...]
    sha256: str


def load_eval_set(path: str | Path = EVAL_SET) -> EvalSet:
    """Read a test set file; a case without a question or with a malformed `expect` is a clear error (notebook 10)."""
    raw = Path(path).read_bytes()
    data = json.loads(raw)
    cases = []
    for number, case in enumerate(data.get("cases") or [], 1):
        expect = case.get("expect")
        if not case.get("id") or not case.get("question") or not (expect is None or isinstance(expect, dict)):
            raise ValueError(
                _("{path}: case {number} needs an id, a question and an expect (an object or null)").format(
                    path=path, number=number
                )
            )
        cases.append(
            EvalCase(
                case["id"], case["question"], (expect or {}).get("tool"), dict((expect or {}).get("arguments") or {})
            )
        )
    if not cases:
        raise ValueError(_("{path} holds no cases").format(path=path))
    return EvalSet(
        data.get("name", Path(path).stem),
        str(data.get("version", "?")),
        tuple(data.get("servers") or ()),
        tuple(cases),
        hashlib.sha256(raw).hexdigest(),
    )


@dataclass(frozen=True)
class EvalOutcome:
    """What the model did with one case: its first call (or none), the verdict, and which arguments differed."""

    case: EvalCase
    called: str | None
    arguments: dict[str, Any]
    verdict: str
    differing: tuple[str, ...] = ()
    text: str = ""

    @property
    def correct(self) -> bool:
        return self.verdict in _CORRECT


@dataclass(frozen=True)
class ToolChoiceReport:
    """The scored run of a test set against one model: accuracy and each kind of mistake (notebook 10)."""

    eval_set: EvalSet
    model: str
    simulated: bool
    tools: tuple[str, ...]
    outcomes: tuple[EvalOutcome, ...]

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(o.verdict for o in self.outcomes)
        return {_(verdict): found[verdict] for verdict in VERDICTS}

    @property
    def accuracy(self) -> float:
        return sum(o.correct for o in self.outcomes) / len(self.outcomes)

    def summary(self) -> dict[str, Any]:
        """One row: the set and its version, the model, how many cases, the accuracy and each mistake's count."""
        return {
            _("test set"): f"{self.eval_set.name} {self.eval_set.version}",
            _("model"): self.model,
            _("cases"): len(self.outcomes),
            _("accuracy"): round(self.accuracy, 3),
            **self.counts,
        }

    def rows(self) -> list[dict[str, Any]]:
        """One row per case: the question, what was expected, what the model called, and the verdict."""
        return [
            {
                _("case"): o.case.id,
                _("question"): o.case.question,
                _("expected"): call_text(o.case.tool, o.case.arguments),
                _("called"): call_text(o.called, o.arguments),
                _("verdict"): _(o.verdict),
            }
            for o in self.outcomes
        ]

    def changed(self, other: ToolChoiceReport) -> list[dict[str, Any]]:
        """The cases whose verdict differs between this run and `other` (same set): what a change broke or fixed."""
        before = {o.case.id: o for o in other.outcomes}
        return [
            {
                _("case"): o.case.id,
                _("question"): o.case.question,
                _("before"): _(before[o.case.id].verdict),
                _("after"): _(o.verdict),
                _("called after"): call_text(o.called, o.arguments),
            }
            for o in self.outcomes
            if o.case.id in before and before[o.case.id].verdict != o.verdict
        ]


def call_text(tool: str | None, arguments: Mapping[str, Any]) -> str:
    """A call as one line, `tool(name=value, …)`, or "(no call)" (notebooks 06 and 10)."""
    if tool is None:
        return _("(no call)")
    return f"{tool}({', '.join(f'{k}={v!r}' for k, v in sorted(arguments.items()))})"


def _same(expected: Any, actual: Any) -> bool:
    """Equal as a user would mean it: strings ignoring case and outer spaces, numbers by value."""
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    return bool(expected == actual)


def score(case: EvalCase, called: str | None, arguments: Mapping[str, Any], text: str = "") -> EvalOutcome:
    """The verdict for one reply: every expected argument must match; extra optional arguments are allowed."""
    arguments = dict(arguments)
    if case.tool is None:
        return EvalOutcome(case, called, arguments, DECLINED if called is None else FALSE_CALL, text=text)
    if called is None:
        return EvalOutcome(case, None, {}, MISSED, text=text)
    if called != case.tool:
        return EvalOutcome(case, called, arguments, WRONG_TOOL, text=text)
    differing = tuple(k for k, v in case.arguments.items() if not _same(v, arguments.get(k)))
    return EvalOutcome(case, called, arguments, WRONG_ARGUMENTS if differing else RIGHT, differing, text)


async def run_tool_eval(
    tools: Sequence[Any],
    eval_set: EvalSet | None = None,
    *,
    provider: str | None = None,
    api: Api | None = None,
    system: str | None = None,
    trace: Trace | None = None,
    env: Mapping[str, str] | None = None,
) -> ToolChoiceReport:
    """Ask each question once, in a fresh conversation offering `tools`, and score the first reply (notebook 10).

    The model is the simulated one unless `LABKIT_MODEL` names a real one: the same call measures
    either. Only the first reply is scored: the choice of tool and arguments, before anything runs.
    The simulator's lesson scripts are off, so its rules alone decide.
    """
    eval_set = eval_set or load_eval_set()
    offered = [wire_tool(tool) for tool in tools]
    names = {tool["name"] for tool in offered}
    unknown = sorted({c.tool for c in eval_set.cases if c.tool and c.tool not in names})
    if unknown:
        raise ValueError(
            _("the test set expects {unknown}, which the offered tools ({names}) do not include").format(
                unknown=listing(unknown), names=listing(sorted(names))
            )
        )
    selection = select_model(provider, env)  # type: ignore[arg-type]
    client = make_client(selection.provider, trace=trace, scenario="none", env=env)
    outcomes = []
    for case in eval_set.cases:
        conversation = Conversation(client, selection.model, offered, system, api=api)
        conversation.add_user(case.question)
        turn = await conversation.ask()
        first = turn.tool_calls[0] if turn.tool_calls else None
        outcomes.append(score(case, first.name if first else None, (first.arguments or {}) if first else {}, turn.text))
    await client.close()
    return ToolChoiceReport(eval_set, selection.model, not selection.live, tuple(sorted(names)), tuple(outcomes))


async def server_tools(servers: Iterable[str], trace: Trace | None = None) -> list[dict[str, Any]]:
    """The tools the named lab servers list over stdio, in order, as their wire JSON (notebook 10)."""
    trace = trace if trace is not None else Trace()
    tools: list[dict[str, Any]] = []
    for name in servers:
        async with Client(stdio_transport(name, trace)) as client:
            tools += [wire_tool(tool) for tool in (await client.list_tools()).tools]
    return tools
