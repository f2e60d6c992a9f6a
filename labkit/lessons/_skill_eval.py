"""Skills measured on a test set: which skill the model loads for each question, and the call a loaded method makes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..host import select_model
from ..skills import SkillLibrary, SkillLoader
from ..trace import Trace
from ._skill_runs import BASE_PROMPT, run_with_skills
from ._tool_eval import EvalSet, ToolChoiceReport, load_eval_set, run_tool_eval, score

__all__ = ["ACTIVATION_SET", "METHOD_SET", "run_activation_eval", "run_method_eval"]

ACTIVATION_SET = Path(__file__).with_name("data") / "skill_activation_eval.json"
"""Questions → the skill a good model loads (`load_skill(name=…)`), or no call (notebook 06, exercise 1)."""
METHOD_SET = Path(__file__).with_name("data") / "skill_method_eval.json"
"""Questions → the one `query_orders` call the `order-status` skill's method should make (notebook 06, exercise 2)."""


async def run_activation_eval(
    library: SkillLibrary,
    eval_set: EvalSet | None = None,
    *,
    trace: Trace | None = None,
    env: Mapping[str, str] | None = None,
) -> ToolChoiceReport:
    """Score the model's first reply to each question with `library`'s catalog in the prompt (notebook 06).

    Activating a skill is a tool call, `load_skill(name=…)`, so this is notebook 10's tool-choice evaluation with
    the skill tools offered: the simulated model unless `LABKIT_MODEL` names a real one.
    """
    trace = trace if trace is not None else Trace()
    loader = SkillLoader(library, trace)
    return await run_tool_eval(
        [local.tool for local in loader.tools],
        eval_set or load_eval_set(ACTIVATION_SET),
        system=loader.system_prompt(BASE_PROMPT),
        trace=trace,
        env=env,
    )


async def run_method_eval(library: SkillLibrary, eval_set: EvalSet | None = None) -> ToolChoiceReport:
    """Run each question through a host with `library` and the set's servers; score the first call a server
    received, so what is measured is the skill's effect, whatever words its method uses (notebook 06).
    """
    eval_set = eval_set or load_eval_set(METHOD_SET)
    outcomes = []
    for case in eval_set.cases:
        run = await run_with_skills(case.question, skills=library, servers=eval_set.servers)
        called, arguments = run.sent[0] if run.sent else (None, {})
        outcomes.append(score(case, called, arguments, run.result.answer))
    selection = select_model("anthropic")
    tools = tuple(sorted({c.tool for c in eval_set.cases if c.tool}))
    return ToolChoiceReport(eval_set, selection.model, not selection.live, tools, tuple(outcomes))
