#!/usr/bin/env bash
# Binder check without Docker: repo2docker renders the build from binder/, then the same install
# steps run in a plain fresh venv on a copy of the repo, which must give CI's pins and import the lab.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PYTHON=${PYTHON:-python3.11}
WORK=$(mktemp -d -t binder-check.XXXXXX)
trap 'kill "${LAB_PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
fail() { echo "binder check FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }
scaled() { python3 "$REPO/labkit/_time_limits.py" "$1"; }  # a limit times LABKIT_TIME_SCALE, as the lab's own

step "repo2docker --no-build (in a throwaway venv, not in requirements.txt)"
make -s env  # a no-op when current: its uv installs the throwaway venvs below
"$PYTHON" -m venv "$WORK/r2d"
"$REPO/.venv/bin/uv" pip install --quiet --python "$WORK/r2d/bin/python" jupyter-repo2docker==2026.4.0
"$WORK/r2d/bin/repo2docker" --version
# user id 1000 as on mybinder.org (a local run would otherwise render the build for root)
"$WORK/r2d/bin/repo2docker" --no-build --debug --user-id 1000 --user-name jovyan . >"$WORK/r2d.log" 2>&1 \
  || { cat "$WORK/r2d.log"; fail "repo2docker could not render the build"; }
grep -q "Building conda environment for python=3.11" "$WORK/r2d.log" || fail "runtime.txt did not select Python 3.11"
pip_line=$(grep -n 'pip install --no-cache-dir -r "binder/requirements.txt"' "$WORK/r2d.log" | cut -d: -f1)
copy_line=$(grep -n 'COPY --chown=1000:1000 src/ \${REPO_DIR}/' "$WORK/r2d.log" | cut -d: -f1)
post_line=$(grep -n 'RUN ./binder/postBuild' "$WORK/r2d.log" | cut -d: -f1)
[ -n "$pip_line" ] && [ -n "$copy_line" ] && [ -n "$post_line" ] || fail "binder/requirements.txt or postBuild not used"
# `-r ../requirements.txt` needs the whole repo in place when pip runs
[ "$copy_line" -lt "$pip_line" ] && [ "$pip_line" -lt "$post_line" ] || fail "pip runs before the repo is copied"
echo "rendered: python=3.11; repo copied (line $copy_line), pip -r binder/requirements.txt ($pip_line), postBuild ($post_line)"

step "the Binder install steps in a plain fresh venv, on a copy of the repo"
mkdir "$WORK/repo"
git ls-files -z --cached --others --exclude-standard | tar -C "$REPO" --null -T - -cf - | tar -C "$WORK/repo" -xf -
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" freeze --all >"$WORK/own.txt"  # what the venv brings itself (pip, setuptools)
# Binder's own pip command chooses every package (--dry-run --report: what it would install); uv then installs
# exactly that list, without resolving (pip unpacking ~140 packages was most of this check's time).
(cd "$WORK/repo" && "$WORK/venv/bin/pip" install --quiet --disable-pip-version-check --dry-run --ignore-installed \
  --report "$WORK/pip-report.json" -r binder/requirements.txt)
"$WORK/venv/bin/python" -c "
import json, sys
for package in json.load(open(sys.argv[1]))['install']:
    print(f\"{package['metadata']['name']}=={package['metadata']['version']}\")" "$WORK/pip-report.json" >"$WORK/chosen.txt"
"$REPO/.venv/bin/uv" pip install --quiet --python "$WORK/venv/bin/python" --no-deps -r "$WORK/chosen.txt"
(cd "$WORK/repo" && NB_PYTHON_PREFIX="$WORK/venv" PATH="$WORK/venv/bin:$PATH" ./binder/postBuild >/dev/null)

step "same pins as CI"
"$WORK/venv/bin/pip" freeze --all --exclude-editable >"$WORK/freeze.txt"
"$WORK/venv/bin/python" - "$WORK/chosen.txt" "$WORK/own.txt" "$WORK/freeze.txt" <<'EOF' || fail "the venv is not what Binder's pip chose"
import re, sys
def pins(path):
    return {re.sub(r"[-_.]+", "-", n).lower(): v for n, v in (line.strip().split("==") for line in open(path) if "==" in line)}
chosen, own, installed = map(pins, sys.argv[1:])
expected = {**{n: v for n, v in own.items() if n not in chosen}, **chosen}
for name in sorted(expected.keys() | installed.keys()):
    if expected.get(name) != installed.get(name):
        print(f"  {name}: Binder's pip chose {chosen.get(name, 'nothing')}, the venv has {installed.get(name, 'nothing')}")
sys.exit(expected != installed)
EOF
missing=0
while read -r pin; do
  name=${pin%%==*}; version=${pin#*==}
  got=$(grep -i -E "^${name//[-_.]/[-_.]}==" "$WORK/chosen.txt" | head -1 | cut -d= -f3)
  [ "$got" = "$version" ] || { echo "  $name: want $version, got ${got:-nothing}"; missing=1; }
done < <(grep -E '^[A-Za-z0-9_.-]+==' requirements.txt)
[ "$missing" = 0 ] || fail "the Binder environment differs from requirements.txt"
echo "Binder's pip chose $(wc -l <"$WORK/chosen.txt") packages, all $(grep -c -E '^[A-Za-z0-9_.-]+==' requirements.txt) pins of requirements.txt exactly, and the venv holds just those"

step "labkit and servers importable from anywhere"
(cd / && "$WORK/venv/bin/python" -c "
import labkit, servers, labkit.trace, labkit.host, labkit.lessons, servers.logs, servers.charts
print('imported', labkit.__file__.rsplit('/', 2)[-2], servers.__file__.rsplit('/', 2)[-2], 'from', labkit.__file__.rsplit('/', 3)[-3])")

step "JupyterLab reads overrides.json: no news or update pop-ups"
[ -f "$WORK/venv/share/jupyter/lab/settings/overrides.json" ] || fail "overrides.json not installed"
port=$("$WORK/venv/bin/python" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
export JUPYTER_CONFIG_DIR="$WORK/jupyter/config" JUPYTER_DATA_DIR="$WORK/jupyter/data" JUPYTER_RUNTIME_DIR="$WORK/jupyter/runtime"
export JUPYTERLAB_SETTINGS_DIR="$WORK/jupyter/settings" JUPYTERLAB_WORKSPACES_DIR="$WORK/jupyter/workspaces"
# A throwaway server on 127.0.0.1 with no token and no XSRF check: the kernel step below starts kernels by plain POSTs.
"$WORK/venv/bin/jupyter" lab --no-browser --allow-root --ip 127.0.0.1 --port "$port" --ServerApp.token= \
  --ServerApp.root_dir="$WORK/repo" --ServerApp.disable_check_xsrf=True >"$WORK/lab.log" 2>&1 &
LAB_PID=$!
settings=""
for _ in $(seq "$(scaled 60)"); do
  settings=$(curl -sf "http://127.0.0.1:$port/lab/api/settings/@jupyterlab/apputils-extension:notification" || true)
  [ -n "$settings" ] && break
  sleep 1
done
[ -n "$settings" ] || { cat "$WORK/lab.log"; fail "JupyterLab did not answer"; }
echo "$settings" | "$WORK/venv/bin/python" -c "
import json, sys
props = json.load(sys.stdin)['schema']['properties']
news, updates = props['fetchNews']['default'], props['checkForUpdates']['default']
print(f'fetchNews default: {news!r}, checkForUpdates default: {updates!r}')
sys.exit(0 if news == 'false' and updates is False else 1)" || fail "the pop-ups are still on"
step "JupyterLab's python3 kernels are forked by the lab's warm Python (each kernel after the first few seconds)"
curl -sf "http://127.0.0.1:$port/api/kernelspecs" | "$WORK/venv/bin/python" -c "
import json, sys
spec = json.load(sys.stdin)['kernelspecs']['python3']['spec']
name = spec['metadata'].get('kernel_provisioner', {}).get('provisioner_name')
print(f'the python3 kernel spec names the provisioner {name!r}')
sys.exit(0 if name == 'labkit-warm-kernel' else 1)" || fail "the python3 kernel spec names no provisioner of the lab's"
forked=""
for _ in $(seq "$(scaled 30)"); do  # the first launch starts the warm Pythons beside its kernel: a later one is forked
  id=$(curl -sf -X POST "http://127.0.0.1:$port/api/kernels" -d '{"name": "python3"}' \
       | "$WORK/venv/bin/python" -c "import json, sys; print(json.load(sys.stdin)['id'])")
  kernel=""
  for _ in $(seq 50); do kernel=$(pgrep -f "kernel-$id.json" | head -1); [ -n "$kernel" ] && break; sleep 0.1; done
  parent=$(ps -o args= -p "$(ps -o ppid= -p "$kernel" | tr -d ' ')")
  curl -sf -X DELETE "http://127.0.0.1:$port/api/kernels/$id"
  case "$parent" in *_warm_python.py*) forked=$kernel; break ;; esac
  sleep 1
done
[ -n "$forked" ] || fail "no python3 kernel was forked by the lab's warm Python within $(scaled 30) launches"
echo "kernel $forked was forked by: $parent"

step "each Binder badge of README.md opens a notebook that exists"
# A badge opens JupyterLab at urlpath: the lab's own /labkit/open/<notebook> (lesson 00 in the edition's language).
badges=$(grep -o 'urlpath=[^)]*' README.md | cut -d= -f2- || true)
[ -n "$badges" ] || fail "no Binder badge with a urlpath in README.md"
for urlpath in $badges; do
  notebook=${urlpath#labkit/open/}
  notebook=${notebook#lab/tree/}
  curl -sfL -o /dev/null "http://127.0.0.1:$port/$urlpath" || fail "/$urlpath did not open"
  curl -sf -o /dev/null "http://127.0.0.1:$port/api/contents/$notebook?content=0" || fail "$notebook is not in the repo"
  echo "opens: /$urlpath ($notebook)"
done
echo "binder check passed"
