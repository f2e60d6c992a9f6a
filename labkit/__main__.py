"""The lab without a browser: `python -m labkit run canonical` prints the trace and writes its diagram."""

from __future__ import annotations

import os
import signal


def _quit_before_the_run(number: int, _frame: object) -> None:
    # Until the run takes the signals over, nothing of ours is running: exit at once, without a traceback.
    os.write(2, b"labkit: interrupted (Ctrl-C)\n" if number == signal.SIGINT else b"labkit: terminated (SIGTERM)\n")
    os._exit(128 + number)


# Set first, before the imports below, which take a second or more: a Ctrl-C there must not print a traceback.
if __name__ == "__main__":
    for _number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_number, _quit_before_the_run)

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import anyio  # noqa: E402
from anyio.abc import TaskStatus  # noqa: E402

from ._i18n import N_, _  # noqa: E402
from ._time_limits import time_scale  # noqa: E402
from .host import ENV_VAR, ERAS, ServerStartError, select_model  # noqa: E402
from .host._writable import data_folder, unwritable  # noqa: E402
from .lessons import SCENARIO_NAMES, run_scenario  # noqa: E402
from .processes import DATA_DIR_ENV, ServerEnded  # noqa: E402
from .trace import SIMULATED_MODEL, Kind, Trace, save_png, sequence_diagram, steps_table, table  # noqa: E402

__all__ = ["main"]

_STOPPING = {signal.SIGINT: N_("interrupted (Ctrl-C)"), signal.SIGTERM: N_("terminated (SIGTERM)")}
# Within this the run closes its servers itself; past it (or at a second signal) the CLI exits at once and
# the supervisors, which die with their parent, take the servers down.
_GRACE_SECONDS = 1.5
_APIS_OF = {"anthropic": ("anthropic",), "openai": ("chat", "responses")}


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one scenario; the exit status says whether the answer was delivered."""
    parser = argparse.ArgumentParser(prog="python -m labkit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help=_("run a scenario against the real servers"))
    run.add_argument("scenario", choices=SCENARIO_NAMES)
    run.add_argument("--era", choices=sorted(ERAS), default="2026-07-28", help=_("MCP protocol era"))
    run.add_argument(
        "--api",
        choices=["anthropic", "chat", "responses"],
        help=_("model API (default: the one LABKIT_MODEL's provider speaks, else anthropic)"),
    )
    run.add_argument("--http", action="store_true", help=_("reach the servers over Streamable HTTP, not stdio"))
    run.add_argument("--json", action="store_true", help=_("print one JSON object instead of tables"))
    run.add_argument("--out", type=Path, default=Path("out"), help=_("folder for the diagram files (default: out)"))
    options = parser.parse_args(argv)
    if options.out.exists() and not options.out.is_dir():
        parser.error(
            _("--out {out} is a file: name a folder for the diagram files (created if missing)").format(out=options.out)
        )
    try:
        options.api = _api_for_the_model(options.api)
        time_scale()  # read by every limit, deep in the run: a value it cannot use is named here, once
    except ValueError as error:
        parser.error(str(error))
    if (stuck := unwritable(data_folder())) is not None:
        message = _(
            "labkit: the lab's data folder {folder} cannot be written ({stuck} is read-only or not yours): "
            "set {variable} to a folder you can write, e.g. {variable}=$(mktemp -d)"
        )
        parser.exit(2, message.format(folder=data_folder(), stuck=stuck, variable=DATA_DIR_ENV) + "\n")
    if not options.json and (stuck := unwritable(options.out)) is not None:
        warning = _(
            "labkit: {out} cannot be written ({stuck} is read-only or not yours): the tables are printed, the "
            "diagram is not saved; name another folder with --out"
        )
        print(warning.format(out=options.out, stuck=stuck), file=sys.stderr)
        options.out = None
    if options.out is not None and not options.json:
        try:
            options.out.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # e.g. under /proc, or on a full disk: found now, not after the run
            warning = _(
                "labkit: {out} cannot be created ({cause}): the tables are printed, the diagram is not saved; name "
                "another folder with --out"
            )
            print(warning.format(out=options.out, cause=error.strerror or error), file=sys.stderr)
            options.out = None
    try:
        return anyio.run(_run_until_signalled, options)
    except Exception as error:
        # A server that could not start, or ended mid-run, says why in its message (which server, its stderr, a busy
        # machine): that is the whole story, so it is printed without the traceback of the host's task groups.
        starts = _only(error, (ServerStartError, ServerEnded))
        if not starts:
            raise
        for start in starts:
            print(_("labkit: {error}").format(error=start), file=sys.stderr)
        return 1


def _set_aside(trace: Trace) -> list[str]:
    """Why each server the host went on without could not start (a busy machine names itself and its setting there):
    the run's tables show the event, the terminal gets the whole cause."""
    return [
        str((event.payload or {}).get("error") or event.summary)
        for event in trace
        if event.kind == Kind.HOST_UNAVAILABLE
    ]


def _only(error: BaseException, kind: tuple[type[Exception], ...]) -> list[BaseException]:
    """The errors of `kind` that make up `error` (itself, or every leaf of its exception groups); none if any is not."""
    if isinstance(error, BaseExceptionGroup):
        found = [_only(inner, kind) for inner in error.exceptions]
        return [leaf for leaves in found for leaf in leaves] if all(found) else []
    return [error] if isinstance(error, kind) else []


def _api_for_the_model(asked: str | None) -> str:
    """The API to speak: the one asked for, which must be the `LABKIT_MODEL` provider's, else that provider's first."""
    selection = select_model()
    speaks = _APIS_OF[selection.provider]
    if asked is None:
        return speaks[0]
    if selection.live and asked not in speaks:
        raise ValueError(
            _(
                "{variable}={value} picks the {provider} provider, which --api {asked} cannot reach: "
                "use --api {speaks}, or unset {variable}"
            ).format(
                variable=ENV_VAR,
                value=os.environ[ENV_VAR],
                provider=selection.provider,
                asked=asked,
                speaks=" or --api ".join(speaks),
            )
        )
    return asked


async def _run_until_signalled(options: argparse.Namespace) -> int:
    """0 when the answer was delivered, 1 when not, 128 + the signal's number when a signal stopped the run."""
    stopped: list[int] = []
    try:
        async with anyio.create_task_group() as group:
            await group.start(_stop_on_signal, group.cancel_scope, stopped)
            delivered = await _run(options)
            group.cancel_scope.cancel()
    except Exception:
        if not stopped:
            raise
    if stopped:
        return 128 + stopped[0]
    return 0 if delivered else 1


async def _stop_on_signal(run: anyio.CancelScope, stopped: list[int], *, task_status: TaskStatus) -> None:
    with anyio.open_signal_receiver(*_STOPPING) as signals:
        task_status.started()
        number = await anext(signals)
    status = 128 + number
    stopped.append(number)
    print(_("labkit: {why}, stopping the servers").format(why=_(_STOPPING[number])), file=sys.stderr, flush=True)
    for again in _STOPPING:
        signal.signal(again, lambda *_: os._exit(status))
    deadline = threading.Timer(_GRACE_SECONDS, os._exit, (status,))
    deadline.daemon = True
    deadline.start()
    run.cancel()


async def _run(options: argparse.Namespace) -> bool:
    outcome = await run_scenario(
        options.scenario, era=options.era, api=options.api, transport="http" if options.http else "stdio"
    )
    for why in _set_aside(outcome.trace):
        print(_("labkit: {error}").format(error=why), file=sys.stderr)
    if options.json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False))
        return outcome.result.delivered
    source = _("simulated") if outcome.model == SIMULATED_MODEL else _("from {variable}").format(variable=ENV_VAR)
    print(
        _("scenario {scenario} · era {era} · {api} API · model {model} ({source})").format(
            scenario=outcome.scenario, era=outcome.era, api=options.api, model=outcome.model, source=source
        )
    )
    print(table(outcome.trace).to_string(max_colwidth=70))
    print()
    print(steps_table(outcome.steps).to_string(max_colwidth=90))
    print()
    counts = ", ".join(f"{actor} {n}" for actor, n in outcome.counts.items())
    print(_("{n} steps: {counts}").format(n=len(outcome.steps), counts=counts))
    print(
        _("result: {reason} after {rounds} model round(s), {seconds:.2f} s").format(
            reason=outcome.result.reason, rounds=outcome.result.rounds, seconds=outcome.seconds
        )
    )
    if options.out is not None:
        stem = options.out / f"{options.scenario}-{options.era}"
        stem.parent.mkdir(parents=True, exist_ok=True)
        sequence_diagram(outcome.trace).save(str(stem.with_suffix(".mmd")))
        save_png(outcome.trace, stem.with_suffix(".png"))
        print(_("diagram: {mmd} and {png}").format(mmd=stem.with_suffix(".mmd"), png=stem.with_suffix(".png")))
    return outcome.result.delivered


if __name__ == "__main__":
    sys.exit(main())
