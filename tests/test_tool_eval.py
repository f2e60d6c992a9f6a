"""The tool-choice evaluation: its scorer, its test set, and one run against a model named by LABKIT_MODEL alone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from labkit.lessons import EVAL_SET, VERDICTS, EvalCase, load_eval_set, run_tool_eval, server_tools
from labkit.lessons._tool_eval import score
from labkit.simulator import MODEL_NAME

pytestmark = pytest.mark.anyio
PLAN = EvalCase("p", "How many accounts does the family plan allow?", "get_plan", {"plan": "family"})
NONE = EvalCase("n", "Tell me a joke.", None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("case", "called", "arguments", "verdict"),
    [
        (PLAN, "get_plan", {"plan": "Family "}, "right call"),  # as a user means it: case and spaces aside
        (PLAN, "get_plan", {"plan": "family", "verbose": True}, "right call"),  # an extra optional argument is no error
        (PLAN, "get_plan", {"plan": "personal"}, "wrong arguments"),
        (PLAN, "get_plan", {}, "wrong arguments"),
        (PLAN, "query_orders", {"status": "pending"}, "wrong tool"),
        (PLAN, None, {}, "missed call"),
        (NONE, None, {}, "rightly no call"),
        (NONE, "get_plan", {"plan": "family"}, "false call"),
    ],
)
def test_each_reply_gets_one_verdict(case: EvalCase, called: str | None, arguments: dict, verdict: str) -> None:
    outcome = score(case, called, arguments)
    assert outcome.verdict == verdict and verdict in VERDICTS
    assert outcome.correct == (verdict in {"right call", "rightly no call"})


def test_numbers_compare_by_value_and_booleans_are_not_numbers() -> None:
    case = EvalCase("o", "Show 5 cancelled orders", "query_orders", {"limit": 5})
    assert score(case, "query_orders", {"limit": 5.0}).verdict == "right call"
    assert score(EvalCase("b", "q", "t", {"n": 1}), "t", {"n": True}).differing == ("n",)


def test_the_test_set_is_versioned_and_has_questions_to_decline() -> None:
    eval_set = load_eval_set()
    data = json.loads(EVAL_SET.read_text(encoding="utf-8"))
    assert eval_set.version == data["version"] and len(eval_set.sha256) == 64
    assert len({c.id for c in eval_set.cases}) == len(eval_set.cases)
    assert any(c.tool is None for c in eval_set.cases) and any(c.tool for c in eval_set.cases)


def test_a_malformed_case_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "set.json"
    bad.write_text(json.dumps({"cases": [{"id": "a", "question": "q", "expect": "get_plan"}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="case 1 needs an id, a question and an expect"):
        load_eval_set(bad)


async def test_an_expected_tool_nobody_offers_is_refused_before_any_request() -> None:
    with pytest.raises(ValueError, match="expects get_plan, query_errors, query_orders"):
        await run_tool_eval([], env={})


@pytest.fixture(scope="module")
def lab_tools() -> list[dict]:
    import asyncio

    return asyncio.run(server_tools(load_eval_set().servers))


async def test_the_simulated_run_scores_every_case_from_its_replies(lab_tools: list[dict]) -> None:
    from labkit import Trace, select

    trace = Trace()
    report = await run_tool_eval(lab_tools, trace=trace, env={})
    assert report.simulated and report.model == MODEL_NAME
    assert sum(report.counts.values()) == len(report.outcomes) == len(load_eval_set().cases)
    responses = select(trace, kinds=["model.response"])
    assert len(responses) == len(report.outcomes)  # one first reply per case, nothing else
    for outcome, response in zip(report.outcomes, responses, strict=True):
        calls = [b for b in response.payload["body"]["content"] if b["type"] == "tool_use"]
        assert outcome.called == (calls[0]["name"] if calls else None)


@pytest.fixture
def local_endpoint() -> Iterator[str]:
    """Our own OpenAI-compatible server on 127.0.0.1, in its own process; ended by its id."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.local_model_server"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


async def test_labkit_model_alone_points_the_same_run_at_a_real_endpoint(
    lab_tools: list[dict], local_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from labkit import Trace, select

    assert local_endpoint.startswith("http://127.0.0.1:")
    for name, value in {
        "LABKIT_MODEL": "openai:local-model",
        "OPENAI_API_KEY": "local-key",
        "OPENAI_BASE_URL": local_endpoint,
        "NO_PROXY": "127.0.0.1,localhost",
    }.items():
        monkeypatch.setenv(name, value)
    trace = Trace()
    report = await run_tool_eval(lab_tools, trace=trace)  # the call a learner makes, with nothing else changed
    assert not report.simulated and report.model == "local-model"
    requests = select(trace, kinds=["model.request"])
    assert len(requests) == len(report.outcomes)
    assert {r.payload["path"] for r in requests} == {"/v1/chat/completions"}
    assert {r.payload["body"]["model"] for r in requests} == {"local-model"}
    assert requests[0].payload["headers"]["authorization"] != "Bearer local-key"  # the key is redacted in the trace
    monkeypatch.delenv("LABKIT_MODEL")
    offline = await run_tool_eval(lab_tools, provider="openai", env={})
    # The endpoint answered with the same rules, so the same verdicts: the figures are the model's, not the code's.
    assert [o.verdict for o in report.outcomes] == [o.verdict for o in offline.outcomes]
