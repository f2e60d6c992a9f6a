#!/usr/bin/env bash
# Smoke-test every lab server with the official MCP Inspector CLI in both protocol eras: list the tools, then
# call one; every run is bounded by a timeout, so a server that leaves the Inspector waiting fails instead of hanging.
#
# `--protocol-era legacy` (the CLI's default) speaks 2025-11-25: `initialize`, then requests on the session.
# `--protocol-era modern` speaks 2026-07-28: no handshake, each request's _meta declares the client.
# The CLI declares no elicitation capability in either era, so charts must not ask it a question: at
# 2025-11-25 the tool answers isError, at 2026-07-28 the request fails with -32021 (missing required client
# capability). Before that error existed in the server, the modern call hung (stdio and HTTP alike).
# The Inspector is installed once into $LABKIT_NPM_CACHE/inspector (default ~/.cache/labkit-npm/inspector), outside the
# repository, and run with node: `npx -y` resolved the package anew for each of the 24 runs (4 s each here), and on
# a machine whose npm cache was empty its first run spent the whole timeout downloading.
# Usage: .ci/inspector_check.sh   (PYTHON, INSPECTOR_VERSION, INSPECTOR_TIMEOUT, LABKIT_NPM_CACHE may be overridden)
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-.venv/bin/python}"
INSPECTOR_VERSION="${INSPECTOR_VERSION:-2.12.0}"
# Every limit is scaled by LABKIT_TIME_SCALE (labkit/_time_limits.py), as the lab's own are.
INSPECTOR_TIMEOUT="${INSPECTOR_TIMEOUT:-$(python3 labkit/_time_limits.py 60)}"
# The Inspector's own connect limit is 15 s: CI runs this beside the test suites, where a cold start takes longer.
INSPECTOR_CONNECT_MS="${INSPECTOR_CONNECT_MS:-$(python3 labkit/_time_limits.py 45000)}"
INSPECTOR_HOME="${LABKIT_NPM_CACHE:-$HOME/.cache/labkit-npm}/inspector"
DATA_DIR="$(mktemp -d)"
ERRORS="$(mktemp)"
HTTP_PID=""
trap '[[ -n "$HTTP_PID" ]] && kill "$HTTP_PID" 2>/dev/null; rm -rf "$DATA_DIR" "$ERRORS"' EXIT
failures=0
MISSING_CAPABILITY="did not declare the form elicitation capability"

inspector_package="$INSPECTOR_HOME/node_modules/@modelcontextprotocol/inspector"
source .ci/npm_once.sh
npm_once "$INSPECTOR_HOME" "$ERRORS" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" || exit 1
inspector_cli="$inspector_package/$(node -p "require('$inspector_package/package.json').bin['mcp-inspector']")"

# inspect ERA TARGET...: one Inspector CLI run in a protocol era, killed after INSPECTOR_TIMEOUT seconds.
inspect() {
  local era=$1
  shift
  timeout "$INSPECTOR_TIMEOUT" node "$inspector_cli" --cli \
    --connect-timeout "$INSPECTOR_CONNECT_MS" --protocol-era "$era" "$@" 2>"$ERRORS"
}

# verdict LABEL EXPECTED STATUS OUTPUT: pass if the run ended in time, as wanted, and printed the text.
# An EXPECTED starting with "isError:" wants a tool execution error, one starting with "error:" a protocol
# error (the Inspector prints its envelope on stderr); the Inspector exits 1 for both.
verdict() {
  local label=$1 expected=$2 status=$3 wanted=""
  local output="$4$(grep -av EBADENGINE "$ERRORS" | grep -av "^npm warn")"
  case "$expected" in
    isError:*) expected="${expected#isError:}" wanted='"isError": true' ;;
    error:*) expected="${expected#error:}" wanted='"error":' ;;
  esac
  if ((status == 124)); then
    echo "FAIL  ${label} (no answer within ${INSPECTOR_TIMEOUT} s: the Inspector was left waiting)"
    failures=$((failures + 1))
  elif [[ "$output" == *"$expected"* && ( ( -z "$wanted" && $status -eq 0 ) || "$output" == *"$wanted"* ) ]]; then
    echo "ok    ${label}"
  else
    echo "FAIL  ${label} (exit ${status}; expected to see: ${expected})"
    echo "$output" | head -n 30
    failures=$((failures + 1))
  fi
}

# check SERVER EXPECTED INSPECTOR_ARGS...: the server over stdio, in the era of the loop below.
check() {
  local server=$1 expected=$2 output status
  shift 2
  output=$(inspect "$era" -e "LABKIT_DATA_DIR=${DATA_DIR}" -e "PYTHONPATH=${PWD}" --cwd "$PWD" \
    "$PYTHON" -m "servers.${server}" "$@")
  status=$?
  verdict "${era} ${server}: $*" "$expected" "$status" "$output"
}

# check_http URL SERVER EXPECTED INSPECTOR_ARGS...: the same against a server already serving Streamable HTTP.
check_http() {
  local url=$1 server=$2 expected=$3 output status
  shift 3
  output=$(inspect "$era" "$url" "$@")
  status=$?
  verdict "${era} ${server} (HTTP): $*" "$expected" "$status" "$output"
}

port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LABKIT_DATA_DIR="$DATA_DIR" PYTHONPATH="$PWD" "$PYTHON" -m servers.charts --http --port "$port" >/dev/null 2>&1 &
HTTP_PID=$!
for _ in $(seq "$(python3 labkit/_time_limits.py 100)"); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

# What a client that cannot show a form gets from charts: each era's way of saying so.
declare -A CANNOT_ASK=([legacy]='isError:cannot answer the question' [modern]="error:$MISSING_CAPABILITY")
for era in legacy modern; do
  check logs   '"name": "query_errors"'            --method tools/list
  check logs   '"peak_hour": "2026-10-30T00:00"'   --method tools/call --tool-name query_errors \
                                                   --tool-arg service=order-service since=2026-10-29T20:00
  check charts '"name": "render_error_trend"'      --method tools/list
  check charts "${CANNOT_ASK[$era]}"               --method tools/call --tool-name render_error_trend \
                                                   --tool-arg service=order-service since=2026-10-29T20:00
  check_http "http://127.0.0.1:$port/mcp" charts "${CANNOT_ASK[$era]}" \
                                                   --method tools/call --tool-name render_error_trend \
                                                   --tool-arg service=order-service since=2026-10-29T20:00
  check orders '"name": "query_orders"'            --method tools/list
  check orders '"status": "pending"'               --method tools/call --tool-name query_orders \
                                                   --tool-arg status=pending limit=3
  check orders '# Order policy'                    --method resources/read --uri file://policy/order-policy.md
  check plans  '"name": "get_plan"'                --method tools/list
  check plans  '"max_accounts": 6'                 --method tools/call --tool-name get_plan --tool-arg plan=family
  check faulty '"name": "crash_now"'               --method tools/list
  check faulty '"text": "slept 0 s"'               --method tools/call --tool-name sleep_for --tool-arg seconds=0
done

if ((failures)); then
  echo "${failures} inspector check(s) failed"
  exit 1
fi
echo "all inspector checks passed"
