#!/usr/bin/env bash
# Debian's Chromium and the fonts its pages need, for the real-browser test (.ci/browser.sh), installed if missing.
# One install at a time: .ci/run starts this in the background as CI begins, so the minute or two apt takes is spent
# while the suites run; .ci/browser.sh runs it again later, which waits for that install to end and then finds it done.
set -euo pipefail
exec 9>"${TMPDIR:-/tmp}/labkit-chromium-install.lock"
flock 9
[ -x /usr/bin/chromium ] && exit 0
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium fonts-dejavu-core fonts-noto-cjk
