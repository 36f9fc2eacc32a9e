#!/usr/bin/env bash
# Orchestration overhead, end to end (issue 16): the product's main command
# (`ragen-orchestrator run --embedded examples/sokoban-local.yaml`) against bench/e2e-plain.sh, the
# same work by hand, alternately N times each (default 3). Each run goes through `/usr/bin/time -v`
# (Debian package `time`) around bench/reap-tree.py, a child subreaper, so the Ray processes that
# `ray start` daemonises count on both sides. Prints medians and ratios of wall, CPU (user+sys) and
# the largest process's peak RSS, then the orchestration gaps from each run's history.
# Setup first (scripts/setup.sh); Ray must not run otherwise meanwhile (the plain script's `ray stop`
# stops every Ray of this user): on shared machines `flock /tmp/ray-test.lock bash bench/e2e.sh 3`.
# ORCH_CMD replaces the orchestrator's command (e.g. "npx tsx src/cli/main.ts" for the development path).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
[ -x /usr/bin/time ] || { echo "bench/e2e.sh needs /usr/bin/time: apt-get install time" >&2; exit 2; }
orch=${ORCH_CMD:-node bin/ragen-orchestrator.js}
spec=examples/sokoban-local.yaml
out=$(mktemp -d /tmp/e2e-bench.XXXXXX)
port=${E2E_TEMPORAL_PORT:-17533}
export TEMPORAL_ADDRESS=127.0.0.1:$port RAGEN_RUN_ROOT=/tmp/ro-e2e
# Every checkpoint signalled (default: at most one per 10 min): e2e-gaps.ts times the last step by it.
export RAGEN_CHECKPOINT_SIGNAL_SECONDS=0
python=.venv/bin/python
[ "$orch" != "node bin/ragen-orchestrator.js" ] || nice -n 5 npm run build --silent
echo "e2e: $n runs each, orchestrator '$orch', results in $out; load: $(uptime)"

for i in $(seq 1 "$n"); do
  /usr/bin/time -v -o "$out/orch-$i.time" $python bench/reap-tree.py --json "$out/orch-$i.json" -- \
    $orch run --embedded "$spec" >"$out/orch-$i.out" 2>&1 || { cat "$out/orch-$i.out"; exit 1; }
  id=$(sed -n 's/^started \([^ ]*\) .*/\1/p' "$out/orch-$i.out")
  manifest=$(sed -n 's/^manifest: //p' "$out/orch-$i.out")
  if [ "$i" = 1 ]; then
    # The plain script must run the trainer the orchestrator ran: same argv but the checkpoint dir.
    diff <($python -c 'import json,sys; m=json.load(open(sys.argv[1])); print("\n".join(m["entrypoint"]).replace(m["checkpointDir"], "CKPT"))' "$manifest") \
      <(bash bench/e2e-plain.sh --argv | sed '1s|.*/python$|python|; s|default_local_dir=--argv|default_local_dir=CKPT|') ||
      { echo "e2e: bench/e2e-plain.sh no longer runs the orchestrator's trainer argv (above)" >&2; exit 1; }
  fi
  npx tsx bench/e2e-gaps.ts "$id" .run/temporal.db $((port + 1)) >"$out/orch-$i.gaps"
  ckpt=/tmp/ragen-orchestrator/e2e-plain/$i
  rm -rf "$ckpt"
  /usr/bin/time -v -o "$out/plain-$i.time" $python bench/reap-tree.py --json "$out/plain-$i.json" -- \
    bash bench/e2e-plain.sh "$ckpt" "$out/plain-$i.validation.json" >"$out/plain-$i.out" 2>&1 ||
    { cat "$out/plain-$i.out"; exit 1; }
  rm -rf "$ckpt"
  echo "e2e: run $i done ($(grep -h 'Elapsed' "$out/orch-$i.time" "$out/plain-$i.time" | awk '{print $NF}' | paste -sd/))"
done
$python bench/e2e-summary.py "$out" "$n"
