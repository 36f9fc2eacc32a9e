#!/usr/bin/env bash
# The README's test command: installs what it needs (scripts/setup.sh), then runs every suite:
# typecheck, lint, unit, activity and workflow tests (time-skipping server), the integration test
# (real Temporal dev server, real Ray, real payload), the payload's and the probes' pytest suites, and
# the RAGEN conformance suite (every argv the product builds, composed by RAGEN's real Hydra config
# from ../shared/conformance or $RAGEN_CONFORMANCE_DIR: an input of CI; the suite fails without it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export RAY_USAGE_STATS_ENABLED=0

# The Go builds (cached outside the clone, ~/.cache/ragen-orchestrator; warm they return at once)
# run in the background, all at once, while the suites that need none of the binaries run:
# - scripts/k8s/build.sh: etcd, kube-apiserver, the KubeRay operator and Kueue for the kuberay tests;
# - scripts/temporal/build.sh: the production topology's Temporal server v1.32.2 and schema tool;
# - scripts/seaweedfs/build.sh: SeaweedFS's `weed`, the S3 server of the object-store tests.
# Cold, the first two finished in 10.6 min on a 2-core machine, behind the first suites (14 min);
# SeaweedFS alone took 513 s there (niced, beside other work).
build_logs="$(mktemp -d -t ragen-go-builds.XXXXXX)"
bash scripts/k8s/build.sh >"$build_logs/k8s.log" 2>&1 & k8s_build=$!
bash scripts/temporal/build.sh >"$build_logs/temporal.log" 2>&1 & temporal_build=$!
bash scripts/seaweedfs/build.sh >"$build_logs/seaweedfs.log" 2>&1 & seaweedfs_build=$!
trap 'kill $k8s_build $temporal_build $seaweedfs_build 2>/dev/null || true' EXIT

tap_log="$(mktemp -t ragen-node-tests.XXXXXX)"
# Each suite's --test-timeout: node applies it to each test and to each whole file, so it fits the
# suite's longest file on a loaded 2-core machine (bench/suites-under-load.ts reads these values;
# test/workflows/sweep.test.ts, with its 1,000-child sweep, ran past 8 minutes at load 25-40).
# A workflow test that hangs prints its open workflows' stacks and pending activities before its
# file is stopped (test/helpers/hang-report.ts). The integration lanes keep 20 minutes: their
# longest test takes about 7 minutes on a busy 2-core machine.
unit_timeout_ms=240000
workflows_timeout_ms=900000
activities_timeout_ms=360000
integration_timeout_ms=1200000
test_timeout_ms=$integration_timeout_ms
# node_test_run <files at once> <files...>: the node test runner, every test under $test_timeout_ms.
node_test_run() {
  local concurrency=$1; shift
  node --import tsx --test --test-concurrency="$concurrency" --test-timeout="$test_timeout_ms" "$@"
}
failures() {
  grep -h -E -A14 '^ *not ok ' "$@" | grep -vE '^ *(duration_ms|location|stack|async |process\.)'
}
# node_tests [<files at once>, default 1] <files...>. Unit tests (pure code, spawned CLIs, no server)
# and workflow tests (each its own time-skipping server, fake activities, never Ray) run two at a
# time: most of their time is one core loading modules (measured on 2 cores: unit 69 s -> 35 s,
# workflows 150 s -> 99 s). Files that start Ray run one at a time (one per lane, below): each checks
# that no Ray process (of its lane) is on the machine before it starts and after it ends.
node_tests() {
  local concurrency=1
  if [[ $1 =~ ^[0-9]+$ ]]; then concurrency=$1; shift; fi
  node_test_run "$concurrency" "$@" | tee -a "$tap_log" || {
    # The failures again at the end, where a truncated CI log still shows them.
    echo "== node tests failed:"
    failures "$tap_log"
    exit 1
  }
}
wait_build() {
  local name=$1 pid=$2
  if ! wait "$pid"; then
    echo "== the $name build failed; the end of its log:"; tail -40 "$build_logs/$name.log"; exit 1
  fi
  cat "$build_logs/$name.log"
}

echo "== typecheck"; npx tsc --noEmit
echo "== format"; npx prettier --check src test bench eslint.config.js
echo "== lint"; npx eslint src test bench
echo "== node tests: unit, workflows (two files at a time: no Ray)"
test_timeout_ms=$unit_timeout_ms node_tests 2 test/unit/*.test.ts
test_timeout_ms=$workflows_timeout_ms node_tests 2 test/workflows/*.test.ts
echo "== node tests: activities (some start Ray: one file at a time)"
test_timeout_ms=$activities_timeout_ms node_tests 1 test/activities/*.test.ts
echo "== payload tests"
.venv/bin/python -m pytest payload/tests -q
echo "== probe tests"
.venv/bin/python -m pytest probes/tests -q
echo "== search worker tests"
.venv/bin/python -m pytest search/tests -q
echo "== RAGEN conformance"
.venv/bin/python -m pytest test/conformance -q
echo "== waiting for the Go builds"
wait_build k8s "$k8s_build"
wait_build temporal "$temporal_build"
wait_build seaweedfs "$seaweedfs_build"
# Integration and fault tests in two lanes at once, one file at a time in each: KubeRay's (a real
# kube-apiserver and operator, Ray in the stand-in kubelet's Pods) and the local backend's. Most of
# their time is waiting (Pods, Ray starting, training steps), not CPU. Each lane has its own
# RAGEN_TEST_LANE, which every process it starts inherits, so a lane's Ray leak check counts its own
# processes and never the other lane's (test/helpers/processes.ts).
kube_lane=(test/integration/bad-node-kuberay.test.ts test/integration/example-ragen-kuberay-operator.test.ts
  test/integration/experiment-kuberay.test.ts test/integration/kuberay-*.test.ts
  test/integration/kueue-kuberay.test.ts test/integration/temporal-postgres.test.ts)
local_lane=()
for f in test/integration/*.test.ts test/faults/*.test.ts; do
  [[ " ${kube_lane[*]} " == *" $f "* ]] || local_lane+=("$f")
done
echo "== node tests: integration, faults (two lanes at once: ${#kube_lane[@]} files with KubeRay, ${#local_lane[@]} without; the KubeRay lane's output follows the other's)"
kube_log="$(mktemp -t ragen-kube-lane.XXXXXX)"
local_log="$(mktemp -t ragen-local-lane.XXXXXX)"
RAGEN_TEST_LANE=kuberay node_test_run 1 "${kube_lane[@]}" >"$kube_log" 2>&1 & kube_pid=$!
trap 'kill $k8s_build $temporal_build $seaweedfs_build $kube_pid 2>/dev/null || true' EXIT
local_rc=0
RAGEN_TEST_LANE=local node_test_run 1 "${local_lane[@]}" 2>&1 | tee "$local_log" || local_rc=$?
kube_rc=0
wait "$kube_pid" || kube_rc=$?
echo "== the KubeRay lane"
cat "$kube_log"
if ((local_rc || kube_rc)); then
  echo "== node tests failed (local lane exit $local_rc, KubeRay lane exit $kube_rc):"
  failures "$local_log" "$kube_log"
  exit 1
fi
