#!/usr/bin/env bash
# The README's test command: installs what it needs (scripts/setup.sh), then runs every suite:
# typecheck, lint, unit, activity and workflow tests (time-skipping server), the integration test
# (real Temporal dev server, real Ray, real payload), the payload's and the probes' pytest suites.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The kuberay tests' control plane: etcd and kube-apiserver built from the Go module proxy into a
# cache outside the clone (~/.cache/ragen-orchestrator/k8s), with the KubeRay operator; cold about 27 min, warm at once.
bash scripts/k8s/build.sh
# The production-topology test's Temporal server v1.32.2 and schema tool, same cache; cold 30 min measured on a busy 2-core machine (8.6 CPU-minutes), warm at once.
bash scripts/temporal/build.sh
export RAY_USAGE_STATS_ENABLED=0

echo "== typecheck"; npx tsc --noEmit
echo "== format"; npx prettier --check src test bench eslint.config.js
echo "== lint"; npx eslint src test bench
echo "== node tests"
# One file at a time: Ray clusters and Temporal servers share this machine's two cores.
tap_log="$(mktemp -t ragen-node-tests.XXXXXX)"
node --import tsx --test --test-concurrency=1 \
  test/unit/*.test.ts test/activities/*.test.ts test/workflows/*.test.ts test/integration/*.test.ts test/faults/*.test.ts \
  | tee "$tap_log" || {
  # The failures again at the end, where a truncated CI log still shows them.
  echo "== node tests failed:"
  grep -E -A14 '^ *not ok ' "$tap_log" | grep -vE '^ *(duration_ms|location|stack|async |process\.)'
  exit 1
}
echo "== payload tests"
.venv/bin/python -m pytest payload/tests -q
echo "== probe tests"
.venv/bin/python -m pytest probes/tests -q
