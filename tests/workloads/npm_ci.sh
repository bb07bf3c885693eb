# npm ci with a local (file:) dependency: no registry traffic (network denied).
. "$(dirname "$0")/lib.sh"
need node npm
mkdir -p "$WS/libs/wl-dep" "$WS/app"
cat >"$WS/libs/wl-dep/package.json" <<'J'
{"name": "wl-dep", "version": "1.0.0", "main": "index.js"}
J
echo 'module.exports = () => "dep works";' >"$WS/libs/wl-dep/index.js"
cat >"$WS/app/package.json" <<'J'
{"name": "wl-app", "version": "1.0.0", "private": true, "dependencies": {"wl-dep": "file:../libs/wl-dep"},
 "scripts": {"start": "node -e \"console.log(require('wl-dep')())\""}}
J
# The lock file is made inside too (npm install), then npm ci replays it.
run_in --timeout 120 -- sh -c 'cd app && npm install --no-audit --no-fund --offline >/dev/null && rm -rf node_modules && npm ci --no-audit --no-fund --offline >/dev/null && npm run -s start'
expect_eq "$RC" 0 "npm: $ERR"
expect_eq "$OUT" "dep works" "the app's output"
[ -f "$WS/app/package-lock.json" ] || fail "no package-lock.json"
[ -e "$WS/app/node_modules/wl-dep" ] || fail "the dependency is not installed"
