"""`python -m ragen_toy.validate --checkpoint <dir>/global_step_N --episodes N --seed S --out results.json`

Plays only validation levels (seed S + i, i < N) with the checkpoint's greedy policy (or a uniform
random policy with --random-policy) and writes a JSON report. Needs no Ray, so it runs as a plain
process or as a Ray job entrypoint alike. Exit codes: 0 ok, 2 bad arguments / existing --out,
4 missing or incomplete checkpoint.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import checkpoint
from .config.sokoban_main import ENV_TAG
from .evaluation import evaluate
from .levels import level_set_digest, validation_levels


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m ragen_toy.validate", description=__doc__.split("\n")[2])
    p.add_argument("--checkpoint", required=True, help="<default_local_dir>/global_step_N")
    p.add_argument("--episodes", type=int, default=128)
    p.add_argument("--seed", type=int, default=123, help="first validation seed (seed.val)")
    p.add_argument("--out", required=True, help="results JSON; never overwritten")
    p.add_argument("--random-policy", action="store_true", help="uniform random actions instead of the checkpoint's policy")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.episodes < 1:
        print("validate: --episodes must be >= 1", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        print(f"validate: {out} already exists; refusing to overwrite it (choose a new --out)", file=sys.stderr)
        return 2
    try:
        state, world_size = checkpoint.load(args.checkpoint)
    except checkpoint.CheckpointError as err:
        print(f"validate: {err}", file=sys.stderr)
        return 4
    env = state.extra["env"]
    gen_kwargs = {"dim_x": env["dim_x"], "dim_y": env["dim_y"], "num_boxes": env["num_boxes"], "max_actions": env["max_actions_per_traj"]}
    env_cfg = {"max_steps": env["max_steps"], "max_actions_per_traj": env["max_actions_per_traj"]}
    levels = validation_levels(args.seed, args.episodes, gen_kwargs)
    weights = None if args.random_policy else state.weights
    records = evaluate(levels, weights, env_cfg, random_seed=args.seed)
    holdout = state.extra.get("holdout", {})
    n = len(records)
    report = {
        "checkpoint": os.path.abspath(args.checkpoint),
        "step": state.step,
        "episodes": n,
        "seed": args.seed,
        "policy": "random" if args.random_policy else "greedy",
        "env_tag": ENV_TAG,
        "success_rate": sum(r["success"] for r in records) / n,
        "mean_reward": sum(r["reward"] for r in records) / n,
        "mean_actions": sum(r["actions"] for r in records) / n,
        "world_size": world_size,
        "env": env,
        "level_set_digest": level_set_digest(levels),
        # True when every level here was in the set the trainer refused to train on.
        "held_out_from_training": holdout.get("seed_val") == args.seed and args.episodes <= holdout.get("count", -1),
        "train_holdout": holdout,
        "records": records,
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1)
    if os.path.exists(out):  # lost a race with another writer: still never overwrite
        os.remove(tmp)
        print(f"validate: {out} appeared while running; refusing to overwrite it", file=sys.stderr)
        return 2
    os.replace(tmp, out)
    print(
        f"validation: step={state.step} policy={report['policy']} episodes={n} seed={args.seed} "
        f"success_rate={report['success_rate']:.4f} mean_reward={report['mean_reward']:.4f} "
        f"mean_actions={report['mean_actions']:.4f} held_out={str(report['held_out_from_training']).lower()} out={out}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
