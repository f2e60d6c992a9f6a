#!/usr/bin/env bash
# The real-browser test (tests/browser): notebooks 03 and 04 run in JupyterLab and Debian's Chromium,
# the form answered by a click. Playwright comes from PyPI into a throwaway venv (never `playwright
# install`: it drives /usr/bin/chromium); JupyterLab and the kernel are the CI venv's (.venv).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1

if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium fonts-dejavu-core
fi
/usr/bin/chromium --version

[ -x .venv/bin/python ] || make env

WORK=$(mktemp -d -t browser-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
# the test's own tools, pinned; pytest and anyio as in requirements.txt, psutil as in .venv (tests/conftest.py uses it)
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check playwright==1.65.2 \
  $(grep -E '^(pytest|anyio)==' requirements.txt) \
  "psutil==$(.venv/bin/python -c 'import psutil; print(psutil.__version__)')"

LAB_PYTHON="$PWD/.venv/bin/python" CHROMIUM=/usr/bin/chromium \
  "$WORK/venv/bin/python" -m pytest tests/browser -v -s
