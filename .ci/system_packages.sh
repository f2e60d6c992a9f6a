#!/usr/bin/env bash
# The Debian packages the lab uses beyond Python, installed if missing (idempotent): bubblewrap confines
# untrusted servers (notebook 07); fonts-noto-cjk draws Chinese in PNG diagrams and charts (the zh-CN edition).
set -euo pipefail
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
fc-list 2>/dev/null | grep -q "Noto Sans CJK" || missing+=(fonts-noto-cjk fontconfig)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${missing[@]}" >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
  # matplotlib lists the fonts once and caches the list: a font installed now must be seen by the next run.
  rm -f "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json
else
  echo "cannot install ${missing[*]} here: notebook 07 will say 'confined: false', Chinese in PNGs may show as boxes" >&2
fi
