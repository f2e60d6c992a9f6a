#!/usr/bin/env bash
# The real-browser test (tests/browser): notebooks 03, 04 and the zh-CN 03 run in JupyterLab and Debian's
# Chromium, each form answered by a click; the learner on a 1366x768 laptop (test_classroom.py): 00, 03, 04, 07 opened in
# course order with their stored outputs (in Chinese 07, whose approval no other test answers in Chinese), Run All, each
# form brought into the window by itself (the seconds it took measured into screenshots/classroom_<edition>.json, never
# asserted), the classroom's mistakes while 03's form waits (run its cell again, interrupt, restart, close and reopen
# the tab; each once, the editions in turn); every lesson's labels and tables measured as stored in both editions,
# nbval proving a fresh run prints the same (test_readable.py); the
# "a form is waiting" banner in a page of its own, no JupyterLab (test_waiting_banner.py: one per notebook, seconds).
# Each wait for the lab (a kernel ready, a lesson opened, a form drawn or gone) is labkit's deadline over JupyterLab's
# processes (tests/browser/conftest.py `until`); each suite keeps its server's log as screenshots/jupyterlab_<suite>.log.
# CLASSROOM_LESSONS="03" plays one lesson only (how to iterate on a 2-core machine).
# Playwright comes from PyPI into a throwaway venv (never `playwright install`: it drives /usr/bin/chromium);
# JupyterLab and the kernel are the CI venv's (.venv). tests/conftest.py
# is for in-process tests (it imports labkit, which this venv does not have): --confcutdir leaves it out.
# The check is bounded by its silence, not by its length: on a busy machine the suite takes as long as it takes while it
# makes progress (each test, each form answered and each cell run prints a line), and it is stopped only after
# SILENT_S (15 minutes times LABKIT_TIME_SCALE) with no line at all: SIGALRM to `timeout` is its own time limit, which
# sends SIGINT so that pytest stops JupyterLab and Chromium itself (exit 124, as a time limit). `--foreground` keeps
# pytest in the caller's process group, so a Ctrl-C reaches it too (without it, a Ctrl-C ended this script and left
# pytest, JupyterLab and Chromium running until the test or the time limit ended).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1

bash .ci/chromium.sh
/usr/bin/chromium --version

make env  # a no-op when the venv is current; rebuilt when its recipe changed (it now brings uv)

WORK=$(mktemp -d -t browser-test.XXXXXX)
WATCHDOG=
trap '[ -z "$WATCHDOG" ] || kill "$WATCHDOG" 2>/dev/null; rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
# the test's own tools, pinned (installed by the CI venv's uv); pytest and anyio as in requirements.txt
.venv/bin/uv pip install --quiet --python "$WORK/venv/bin/python" playwright==1.65.2 \
  $(grep -E '^(pytest|anyio)==' requirements.txt)

# Known failures, each an open item of issue 37 (not a flake): deselected here so CI says what else broke, named on
# every run so they are not forgotten; naming tests (`bash .ci/browser.sh -k interrupt`) runs them as asked.
KNOWN_FAILURES=()
# What to run: the test files or ids given first (all of tests/browser when none; `tools/run_tests.py` runs it as two suites,
# test_classroom.py and the rest, side by side), then pytest's own options. A run that names tests (`-k`, or a test's
# id with `::`) runs them as asked; any other leaves the known failures out.
FILES=()
while [ "$#" -gt 0 ] && [[ "$1" == tests/browser/* ]]; do FILES+=("$1"); shift; done
[ "${#FILES[@]}" -gt 0 ] || FILES=(tests/browser)
KNOWN=()
if ! printf '%s\n' "${FILES[@]}" "$@" | grep -qE '^-k|::'; then
  for test in "${KNOWN_FAILURES[@]}"; do
    echo "known failure, not run here (issue 37): $test"
    KNOWN+=(--deselect "$test")
  done
fi

SILENT_S=$(python3 labkit/_time_limits.py 900)
OUT="$WORK/pytest.out"
: >"$OUT"
(
  while sleep 10; do
    silent=$(($(date +%s) - $(stat -c %Y "$OUT")))
    if [ "$silent" -ge "$SILENT_S" ]; then
      echo "browser suite: no line for ${silent} s (limit ${SILENT_S} s, LABKIT_TIME_SCALE scales it): stopping it" >&2
      kill -ALRM "$(cat "$WORK/timeout.pid")"
      exit 0
    fi
  done
) &
WATCHDOG=$!
# `timeout` writes its pid for the watchdog (bash -c execs it: the same process)
LAB_PYTHON="$PWD/.venv/bin/python" CHROMIUM=/usr/bin/chromium PYTHONUNBUFFERED=1 bash -c 'echo $$ >"$0"; exec "$@"' \
  "$WORK/timeout.pid" timeout --foreground -s INT -k 30 0 \
  "$WORK/venv/bin/python" -m pytest --confcutdir=tests/browser "${FILES[@]}" -v -s "${KNOWN[@]}" "$@" 2>&1 | tee "$OUT"
