"""`python -m ragen_toy.train --config-name _2_sokoban [key=value ...]`: RAGEN's train.py contract.

Exit codes: 0 all total_training_steps done; 2 bad command line/config (before Ray is touched);
3 resources (GPU shortfall, placement not possible in time); 4 checkpoint problem; 1 anything else.
"""

from __future__ import annotations

import json
import sys
import traceback

from .checkpoint import CheckpointError
from .config.overrides import ConfigError, parse_command_line

EXIT_CONFIG, EXIT_RESOURCES, EXIT_CHECKPOINT, EXIT_FAILED = 2, 3, 4, 1


def main(argv: list[str] | None = None) -> int:
    try:
        cfg = parse_command_line(sys.argv[1:] if argv is None else argv)
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr, flush=True)
        return EXIT_CONFIG
    print("config: " + json.dumps({k: v for k, v in cfg.items() if "." in k or k == "ray_kwargs"}, sort_keys=True), flush=True)

    import ray  # imported late: a bad command line never pays for (or touches) Ray

    from . import resource_pool
    from .levels import Holdout, env_kwargs
    from .rollout_worker import RolloutWorker
    from .trainer import Trainer

    groups = []
    try:
        holdout = Holdout.build(cfg["seed.val"], max(cfg["seed.val_holdout"], 0), env_kwargs(cfg))
        resource_pool.connect(dict(cfg["ray_kwargs"].get("ray_init", {})))
        nnodes, per_node = cfg["trainer.nnodes"], cfg["trainer.n_gpus_per_node"]
        cpus = cfg["trainer.cpus_per_gpu_slot"]
        resource_pool.wait_for_gpus(nnodes, per_node, cfg["trainer.gpu_wait_timeout_s"])
        groups = resource_pool.create_placement_groups(nnodes, per_node, cpus, cfg["trainer.placement_timeout_s"])
        env_cfg = {"max_steps": cfg["env.max_steps"], "max_actions_per_traj": cfg["env.max_actions_per_traj"]}
        workers = [
            RolloutWorker.options(**opts).remote(slot, env_cfg)
            for slot, opts in enumerate(resource_pool.slot_options(groups, per_node, cpus))
        ]
        placements = ray.get([w.placement.remote() for w in workers], timeout=cfg["trainer.placement_timeout_s"])
        print(f"rollout workers: {json.dumps(placements)}", flush=True)
        trainer = Trainer(cfg, workers, holdout)
        try:
            trainer.fit()
        except BaseException:
            trainer.logger.close(exit_code=1)
            raise
        trainer.logger.close(exit_code=0)
        return 0
    except resource_pool.ResourceError as err:
        print(f"resource error: {err}", file=sys.stderr, flush=True)
        return EXIT_RESOURCES
    except CheckpointError as err:
        print(f"checkpoint error: {err}", file=sys.stderr, flush=True)
        return EXIT_CHECKPOINT
    except Exception:
        traceback.print_exc()
        print("training failed before reaching trainer.total_training_steps", file=sys.stderr, flush=True)
        return EXIT_FAILED
    finally:
        if ray.is_initialized():
            resource_pool.release(groups)
            ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
