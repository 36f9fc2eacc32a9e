#!/usr/bin/env bash
# The baseline of bench/e2e.sh: the work of `run --embedded examples/sokoban-local.yaml` done by hand.
# The same Ray cluster (a head with 1 CPU and 0 GPUs, two worker nodes with 1 CPU and 1 logical GPU
# each, on 127.0.0.2 with a temp dir of their own), the same trainer argv (the overrides trainArgv
# builds from the example; bench/e2e.sh compares them with the manifest's `entrypoint`), the same
# validation, then `ray stop`. No Temporal, no all-reduce check, no checkpoint hashing, no manifest.
# Usage: bench/e2e-plain.sh <checkpoint dir> <validation results file> | --argv
set -euo pipefail
cd "$(dirname "$0")/.."
ckpt=${1:?checkpoint dir (or --argv)}
out=${2:-}
venv=${RAGEN_VENV:-.venv}
ray="$venv/bin/ray"
python="$(cd "$venv/bin" && pwd)/python"
train=("$python" -m ragen_toy.train --config-name _2_sokoban trainer.nnodes=2 trainer.n_gpus_per_node=1
  "trainer.default_local_dir=$ckpt" trainer.total_training_steps=60 trainer.save_freq=20
  trainer.test_freq=0 trainer.resume_mode=disable "trainer.logger=['console']"
  trainer.experiment_name=sokoban-local seed.train=10000 seed.val=123 +ray_kwargs.ray_init.address=auto
  trainer.max_actor_ckpt_to_keep=null trainer.max_critic_ckpt_to_keep=null)
# `--argv`: print the trainer's argv (bench/e2e.sh compares it with the orchestrator's manifest).
if [ "$ckpt" = --argv ]; then printf '%s\n' "${train[@]}"; exit 0; fi
: "${out:?validation results file}"
ip=127.0.0.2
temp=/tmp/rp-$$
dash=http://127.0.0.1:18465
export RAY_USAGE_STATS_ENABLED=0 RAY_DEDUP_LOGS=0

# Every node gets its own ports, as the local backend gives them (nodes share one host).
node_ports() { # base
  echo "--node-manager-port=$1 --object-manager-port=$(($1 + 1)) --dashboard-agent-listen-port=$(($1 + 2))" \
    "--dashboard-agent-grpc-port=$(($1 + 3)) --metrics-export-port=$(($1 + 4)) --runtime-env-agent-port=$(($1 + 5))" \
    "--min-worker-port=0 --max-worker-port=0 --disable-usage-stats --node-ip-address=$ip --temp-dir=$temp"
}

trap '"$ray" stop --force >/dev/null 2>&1 || true; rm -rf "$temp"' EXIT
# shellcheck disable=SC2046
"$ray" start --head --port=16479 --dashboard-port=18465 --dashboard-host=127.0.0.1 --include-dashboard=true \
  --ray-client-server-port=16480 --num-cpus=1 --num-gpus=0 $(node_ports 16500) >/dev/null
for i in 0 1; do
  # shellcheck disable=SC2046
  "$ray" start --address=$ip:16479 --num-cpus=1 --num-gpus=1 $(node_ports $((16510 + 10 * i))) >/dev/null
done

"$ray" job submit --address "$dash" --submission-id "plain-train-$$" -- "${train[@]}" >/dev/null

"$ray" job submit --address "$dash" --submission-id "plain-validate-$$" -- \
  "$python" -m ragen_toy.validate --checkpoint "$ckpt/global_step_60" --episodes 128 --seed 123 \
  --out "$out" >/dev/null
"$python" -c 'import json,sys; print("plain: validation success", json.load(open(sys.argv[1]))["success_rate"])' "$out"
"$ray" stop >/dev/null
rm -rf "$temp"
trap - EXIT
