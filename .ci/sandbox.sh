#!/usr/bin/env bash
# Notebook 07 confines untrusted servers with bubblewrap where the OS allows it; install it if missing (idempotent).
set -euo pipefail
if command -v bwrap >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get install -y bubblewrap >/dev/null || { apt-get update >/dev/null && apt-get install -y bubblewrap >/dev/null; }
else
  echo "bubblewrap is not installed and cannot be installed here; notebook 07 will say 'confined: false'" >&2
fi
