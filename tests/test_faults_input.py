"""Input checked up front: a bad argument fails before any server starts, naming the cause and the valid values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from labkit.__main__ import main
from labkit._time_limits import SCALES, TIME_SCALE_ENV
from labkit.host import GatePolicy, Host, ServerSpec, scripted_form
from labkit.lessons import run_scenario
from labkit.processes._warm import warm_python_pid
from labkit.trace import Kind, Trace

LIMIT = 90


async def test_an_unknown_api_is_refused_before_any_server_starts() -> None:
    running = {p.pid for p in psutil.Process().children(recursive=True)}  # warm Pythons earlier tests started
    with pytest.raises(ValueError, match="unknown api 'claude'; choose one of anthropic, chat, responses"):
        await run_scenario(api="claude")  # type: ignore[arg-type]  # the wrong name is the point
    assert not [p for p in psutil.Process().children(recursive=True) if p.pid not in running | {warm_python_pid()}]


def test_the_cli_refuses_an_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "out"
    taken.write_text("not a folder")
    with pytest.raises(SystemExit) as exited:
        main(["run", "canonical", "--out", str(taken)])
    assert exited.value.code == 2 and f"--out {taken} is a file" in capsys.readouterr().err


def _cli(*arguments: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m labkit ARGUMENTS` as a teacher runs it, with `env` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "labkit", *arguments], capture_output=True, text=True, env=os.environ | env, timeout=600
    )


@pytest.mark.parametrize("scale", ["fast", "0", "-1", "3x", "nan", "1e9", str(SCALES[1] * 2), str(SCALES[0] / 2)])
def test_a_time_scale_the_lab_cannot_use_is_one_message_before_any_server_starts(scale: str) -> None:
    """A typo, or a factor so large that a hung call would be waited for as good as for ever: one line naming the
    setting and the range, not a traceback from deep in the run."""
    run = _cli("run", "canonical", **{TIME_SCALE_ENV: scale})
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"{TIME_SCALE_ENV}={scale!r}" in run.stderr and f"from {SCALES[0]:g} to {SCALES[1]:g}" in run.stderr
    assert not run.stdout


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc, where no folder can be created")
def test_an_out_folder_that_cannot_be_created_is_named_up_front_and_the_tables_are_still_printed() -> None:
    run = _cli("run", "canonical", "--out", "/proc/no-such-folder")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.splitlines()[0].startswith("labkit: /proc/no-such-folder cannot be created"), run.stderr
    assert Kind.HOST_DELIVER in run.stdout


def test_the_cli_speaks_the_api_of_the_model_labkit_model_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.__main__ import _api_for_the_model

    monkeypatch.delenv("LABKIT_MODEL", raising=False)
    assert _api_for_the_model(None) == "anthropic"
    monkeypatch.setenv("LABKIT_MODEL", "openai:gpt-x")
    monkeypatch.setenv("OPENAI_API_KEY", "a-key")
    assert _api_for_the_model(None) == "chat" and _api_for_the_model("responses") == "responses"


def test_the_cli_refuses_an_api_the_chosen_model_cannot_speak(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LABKIT_MODEL", "openai:gpt-x")
    monkeypatch.setenv("OPENAI_API_KEY", "a-key")
    with pytest.raises(SystemExit) as exited:
        main(["run", "canonical", "--api", "anthropic"])
    error = capsys.readouterr().err
    assert exited.value.code == 2
    assert (
        "LABKIT_MODEL=openai:gpt-x" in error and "--api anthropic" in error and "--api chat or --api responses" in error
    )


async def test_a_data_folder_the_charts_server_cannot_write_into_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tests run as root, whom permissions do not stop: a file where the spaces folder goes fails the same way.
    (tmp_path / "spaces").write_text("not a folder")
    monkeypatch.setenv("LABKIT_DATA_DIR", str(tmp_path))
    with anyio.fail_after(LIMIT):
        async with Host(
            Trace(),
            [ServerSpec("charts")],
            policy=GatePolicy(auto_approve=frozenset({"render_error_trend"})),
            elicit=scripted_form({"space": "personal"}),
        ) as host:
            result = await host.call("render_error_trend", {"service": "order-service", "since": "2026-10-29T20:00"})
    assert result.is_error and f"cannot write into {tmp_path / 'spaces' / 'personal'}" in result.text


async def test_the_cli_prints_why_each_server_the_host_went_on_without_could_not_start() -> None:
    from labkit.__main__ import _set_aside

    trace = Trace()
    with anyio.fail_after(LIMIT):
        async with Host(trace, [ServerSpec("untrusted.missing"), ServerSpec("logs")]) as host:
            pass
    (why,) = _set_aside(trace)
    assert why == str(host.unavailable["untrusted.missing"]) and "No module named servers.untrusted.missing" in why


@pytest.mark.parametrize("arguments", [["service", "payments"], '{"service": "payments"}', ("service",)])
async def test_call_arguments_that_are_not_a_mapping_are_named_with_the_form_to_use(arguments: Any) -> None:
    """A list, or the JSON text of the arguments: the message names what was given and the form to give, not the
    `dict()` error it would otherwise end in."""
    with anyio.fail_after(LIMIT):
        async with Host(Trace(), [ServerSpec("logs")], policy=GatePolicy(approve_all=True)) as host:
            with pytest.raises(TypeError, match=f"not a {type(arguments).__name__}") as refused:
                await host.call("query_errors", arguments)
    assert "dict of names to values" in str(refused.value)
    assert ("json.loads" in str(refused.value)) == isinstance(arguments, str)
