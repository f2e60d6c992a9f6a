#!/usr/bin/env bash
# Smoke-test every lab server with the official MCP Inspector CLI over stdio: list the tools, then call one.
#
# The Inspector CLI (npm @modelcontextprotocol/inspector, 0.15 and 2.12 alike) speaks the 2025-11-25
# handshake era: it sends `initialize`, never `server/discover`, and declares no elicitation capability,
# so the charts server answers its call with a clear isError instead of asking a question.
# Usage: .ci/inspector_check.sh            (PYTHON and INSPECTOR_VERSION may be overridden)
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-.venv/bin/python}"
INSPECTOR_VERSION="${INSPECTOR_VERSION:-2.12.0}"
DATA_DIR="$(mktemp -d)"
ERRORS="$(mktemp)"
trap 'rm -rf "$DATA_DIR" "$ERRORS"' EXIT
failures=0

# check SERVER EXPECTED_TEXT INSPECTOR_ARGS...: run the Inspector once; pass if it succeeded and printed the
# text. An EXPECTED_TEXT starting with "isError:" wants a tool execution error (the Inspector then exits 1).
check() {
  local server=$1 expected=$2
  shift 2
  local output status wanted_error=""
  output=$(npx -y "@modelcontextprotocol/inspector@${INSPECTOR_VERSION}" --cli \
    -e "LABKIT_DATA_DIR=${DATA_DIR}" -e "PYTHONPATH=${PWD}" \
    "$PYTHON" -m "servers.${server}" "$@" 2>"$ERRORS")
  status=$?
  if [[ "$expected" == isError:* ]]; then
    expected="${expected#isError:}"
    wanted_error='"isError": true'
  fi
  if [[ "$output" == *"$expected"* && ( ( -z "$wanted_error" && $status -eq 0 ) || "$output" == *"$wanted_error"* ) ]]; then
    echo "ok    ${server}: $*"
  else
    echo "FAIL  ${server}: $* (expected to see: ${expected})"
    echo "$output" | head -n 20
    grep -v EBADENGINE "$ERRORS" | grep -v "^npm warn" | head -n 20
    failures=$((failures + 1))
  fi
}

check logs   '"name": "query_errors"'            --method tools/list
check logs   '"peak_hour": "2026-10-30T00:00"'   --method tools/call --tool-name query_errors \
                                                 --tool-arg service=order-service since=2026-10-29T20:00
check charts '"name": "render_error_trend"'      --method tools/list
check charts 'isError:cannot answer the question' --method tools/call --tool-name render_error_trend \
                                                   --tool-arg service=order-service since=2026-10-29T20:00
check orders '"name": "query_orders"'            --method tools/list
check orders '"status": "pending"'               --method tools/call --tool-name query_orders \
                                                 --tool-arg status=pending limit=3
check orders '# Order policy'                    --method resources/read --uri file://policy/order-policy.md
check plans  '"name": "get_plan"'                --method tools/list
check plans  '"max_accounts": 6'                 --method tools/call --tool-name get_plan --tool-arg plan=family
check faulty '"name": "crash_now"'               --method tools/list
check faulty '"text": "slept 0 s"'               --method tools/call --tool-name sleep_for --tool-arg seconds=0

if ((failures)); then
  echo "${failures} inspector check(s) failed"
  exit 1
fi
echo "all inspector checks passed"
