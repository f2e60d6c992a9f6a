"""The lab without a browser: `python -m labkit run canonical` prints the trace and writes its diagram."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import anyio

from .host import ERAS
from .lessons import SCENARIO_NAMES, run_scenario
from .trace import save_png, sequence_diagram, steps_table, table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one scenario; the exit status says whether the answer was delivered."""
    parser = argparse.ArgumentParser(prog="python -m labkit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a scenario against the real servers")
    run.add_argument("scenario", choices=SCENARIO_NAMES)
    run.add_argument("--era", choices=sorted(ERAS), default="2026-07-28", help="MCP protocol era")
    run.add_argument("--api", choices=["anthropic", "chat", "responses"], default="anthropic", help="model API")
    run.add_argument("--http", action="store_true", help="reach the servers over Streamable HTTP, not stdio")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    run.add_argument("--out", type=Path, default=Path("out"), help="folder for the diagram files (default: out)")
    options = parser.parse_args(argv)
    result = anyio.run(_run, options)
    return 0 if result else 1


async def _run(options: argparse.Namespace) -> bool:
    outcome = await run_scenario(
        options.scenario, era=options.era, api=options.api, transport="http" if options.http else "stdio"
    )
    if options.json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False))
        return outcome.result.delivered
    stem = options.out / f"{options.scenario}-{options.era}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    sequence_diagram(outcome.trace).save(str(stem.with_suffix(".mmd")))
    save_png(outcome.trace, stem.with_suffix(".png"))
    print(f"scenario {outcome.scenario} · era {outcome.era} · model {outcome.model} (simulated unless LABKIT_MODEL is set)")
    print(table(outcome.trace).to_string(max_colwidth=70))
    print()
    print(steps_table(outcome.steps).to_string(max_colwidth=90))
    print()
    counts = ", ".join(f"{actor} {n}" for actor, n in outcome.counts.items())
    print(f"{len(outcome.steps)} steps: {counts}")
    print(f"result: {outcome.result.reason} after {outcome.result.rounds} model round(s), {outcome.seconds:.2f} s")
    print(f"diagram: {stem.with_suffix('.mmd')} and {stem.with_suffix('.png')}")
    return outcome.result.delivered


if __name__ == "__main__":
    sys.exit(main())
