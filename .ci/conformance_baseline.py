"""Write the harness's expected-failures file for one server and spec version: `python ... SERVER VERSION OUT`.

`.ci/conformance_baseline.yml` is the one list, for every server and both versions, of what the
official harness may fail and why. An entry must say what the scenario needs that a lab server
does not offer (`needs: fixture` for the harness's own `test_*` tools, prompts and resources;
`needs: capability` for a capability the server does not declare) and give a reason; anything
else is refused here, so the baseline cannot quietly grow into "whatever fails today".
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

BASELINE = Path(__file__).with_name("conformance_baseline.yml")
NEEDS = ("fixture", "capability")


def expected_failures(server: str, version: str) -> list[str]:
    entries = yaml.safe_load(BASELINE.read_text())["server"]
    problems = [
        f"{entry.get('id')!r}: needs must be one of {NEEDS} and the reason must say why"
        for entry in entries
        if entry.get("needs") not in NEEDS or not str(entry.get("reason") or "").strip()
    ]
    if problems:
        raise SystemExit(f"{BASELINE.name}: " + "; ".join(problems))
    return [
        entry["id"]
        for entry in entries
        # YAML reads an unquoted 2025-11-25 as a date; str() gives back the same text.
        if server in entry.get("servers", [server]) and version in map(str, entry.get("versions", [version]))
    ]


if __name__ == "__main__":
    server, version, out = sys.argv[1:4]
    Path(out).write_text(yaml.safe_dump({"server": expected_failures(server, version)}))
