#!/usr/bin/env bash
# What makes an environment with the lab's packages the lab's, given its Python: run by `make env`, by
# `make learners-env` (a hub's learners) and by Binder's postBuild, so that the three are the same lab.
set -euo pipefail
python="$1"
prefix=$("$python" -c 'import sys; print(sys.prefix)')
# the python3 kernel spec naming the lab's provisioner: each kernel after the first is forked by a warm Python
"$python" -m labkit._warm_kernels
# /labkit/open/<lesson> (the badges' urlpath): JupyterLab in the edition's language, at that lesson
"$python" -m labkit._lab_edition
# no "get notified about Jupyter news?" or update pop-ups in the classroom; the kernel busy while a form waits (see Makefile)
mkdir -p "$prefix/share/jupyter/lab/settings"
cp "$(dirname "$0")/overrides.json" "$prefix/share/jupyter/lab/settings/overrides.json"
