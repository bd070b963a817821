#!/usr/bin/env bash
# Proves the shipped tree needs no TypeScript tooling: copies the built package, prunes the
# devDependencies (tsx, esbuild, typescript, vitest …) and runs `validate`, `test` and `serve` from it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/cli/main.js ] || npm run build --silent

tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
cp -a package.json package-lock.json bin dist schemas integrations node_modules "$tmp/"
cd "$tmp"
npm prune --omit=dev --no-audit --no-fund >/dev/null 2>&1
for dev in tsx esbuild typescript vitest; do
  if [ -e "node_modules/$dev" ]; then echo "check-production-tree: $dev is still installed after prune" >&2; exit 1; fi
done

node bin/hcm-runner.js validate integrations
node bin/hcm-runner.js test integrations >/dev/null

port=$((20000 + RANDOM % 20000))
# Started as the `hcm-runner` command is (its first line: `env -S node` with the runner's flags),
# with tracing on, so the OpenTelemetry SDK it loads then must be in the pruned tree too (nothing
# listens at the endpoint: spans that cannot be sent are only warned about).
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9" HCM_RUNNER_LOG_LEVEL=warn ./bin/hcm-runner.js serve --dir integrations --data "$tmp/data" --port "$port" >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
    echo "check-production-tree: validate, test and serve work without devDependencies"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.2
done
echo "check-production-tree: serve did not answer /healthz; its output:" >&2
cat "$tmp/serve.log" >&2
exit 1
