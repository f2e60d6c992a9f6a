#!/usr/bin/env bash
# The real-browser test (tests/browser): notebooks 00, 03, 04 and the zh-CN 03 run in JupyterLab and Debian's Chromium, each form
# answered by a click; the learner on a 1366x768 laptop (test_classroom.py): 00, 03, 04 opened in course order with
# their stored outputs, Run All, each form found in the window within 2 s, the classroom's mistakes while 03's form waits
# (run its cell again, interrupt, restart, close and reopen the tab), labels and tables measured, in both editions.
# CLASSROOM_LESSONS="03" plays one lesson only (how to iterate on a 2-core machine; "07" plays 07, not yet by default). Playwright comes from PyPI into a
# throwaway venv (never `playwright install`: it drives /usr/bin/chromium); JupyterLab and the kernel are the CI venv's (.venv). tests/conftest.py
# is for in-process tests (it imports labkit, which this venv does not have): --confcutdir leaves it out.
# The whole check is bounded: SIGINT after 30 minutes lets pytest stop JupyterLab and Chromium itself. `--foreground`
# keeps pytest in the caller's process group, so a Ctrl-C reaches it too (without it, a Ctrl-C ended this script
# and left pytest, JupyterLab and Chromium running until the test or the time limit ended).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1

bash .ci/chromium.sh
/usr/bin/chromium --version

make env  # a no-op when the venv is current; rebuilt when its recipe changed (it now brings uv)

WORK=$(mktemp -d -t browser-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
# the test's own tools, pinned (installed by the CI venv's uv); pytest and anyio as in requirements.txt
.venv/bin/uv pip install --quiet --python "$WORK/venv/bin/python" playwright==1.65.2 \
  $(grep -E '^(pytest|anyio)==' requirements.txt)

LAB_PYTHON="$PWD/.venv/bin/python" CHROMIUM=/usr/bin/chromium \
  timeout --foreground -s INT -k 30 "$(python3 labkit/_time_limits.py 1800)" "$WORK/venv/bin/python" -m pytest --confcutdir=tests/browser tests/browser -v -s "$@"
