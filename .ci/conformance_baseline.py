"""Write the harness's expected-failures file: `python ... server SERVER VERSION OUT` or `... client VERSION OUT`.

`.ci/conformance_baseline.yml` is the one list of what the official harness may fail and why: in
server mode for every lab server and both versions, in client mode for the lab's host signing in
(the authorization scenarios). A server entry must say what the scenario needs that a lab server
does not offer (`needs: fixture` for the harness's own `test_*` tools, prompts and resources;
`needs: capability` for a capability the server does not declare); a client entry what the host
would need (`needs: sdk` for a client feature the pinned SDK lacks). Each gives a reason; anything
else is refused here, so the baseline cannot quietly grow into "whatever fails today".
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

BASELINE = Path(__file__).with_name("conformance_baseline.yml")
NEEDS = {"server": ("fixture", "capability"), "client": ("sdk",)}


def expected_failures(mode: str, server: str = "", version: str = "") -> list[str]:
    entries = yaml.safe_load(BASELINE.read_text())[mode]
    problems = [
        f"{entry.get('id')!r}: needs must be one of {NEEDS[mode]} and the reason must say why"
        for entry in entries
        if entry.get("needs") not in NEEDS[mode] or not str(entry.get("reason") or "").strip()
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
    mode, *where, out = sys.argv[1:]
    server, version = where if mode == "server" else ("", *where)
    Path(out).write_text(yaml.safe_dump({mode: expected_failures(mode, server, version)}))
