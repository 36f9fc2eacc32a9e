"""The `_2_sokoban` config: every key the trainer knows, its default, type and allowed values.

A Python table instead of Hydra YAML: one place that both documents and validates the keys.
Defaults follow RAGEN's base.yaml/_2_sokoban.yaml where a toy can (seeds, env, group sizes).
"""

from __future__ import annotations

from dataclasses import dataclass

CONFIG_NAME = "_2_sokoban"
ENV_TAG = "CoordSokoban"


@dataclass(frozen=True)
class Setting:
    default: object
    kind: str  # int | float | str | bool | enum | list_of_enum | list_of_int
    choices: tuple = ()
    nullable: bool = False
    minimum: float | None = None
    help: str = ""


SETTINGS: dict[str, Setting] = {
    "trainer.project_name": Setting("ragen", "str"),
    "trainer.experiment_name": Setting("sokoban-main", "str"),
    "trainer.nnodes": Setting(1, "int", minimum=1),
    "trainer.n_gpus_per_node": Setting(1, "int", minimum=1),
    "trainer.default_local_dir": Setting(
        None, "str", nullable=True, help="null = checkpoints/<project_name>/<experiment_name>, made absolute against cwd"
    ),
    "trainer.total_training_steps": Setting(30, "int", minimum=1),
    "trainer.save_freq": Setting(10, "int", help="<= 0: save only at the last step"),
    "trainer.test_freq": Setting(10, "int", help="<= 0: validate only at the last step"),
    "trainer.val_before_train": Setting(True, "bool"),
    "trainer.val_only": Setting(False, "bool"),
    "trainer.resume_mode": Setting("auto", "enum", choices=("auto", "disable", "resume_path")),
    "trainer.resume_from_path": Setting(None, "str", nullable=True),
    "trainer.logger": Setting(("console",), "list_of_enum", choices=("console", "file", "wandb")),
    "trainer.max_actor_ckpt_to_keep": Setting(2, "int", nullable=True, minimum=2, help="null = keep all"),
    # RAGEN keeps one critic checkpoint by default; the toy has no critic, so the key is only accepted.
    "trainer.max_critic_ckpt_to_keep": Setting(1, "int", nullable=True, minimum=1, help="accepted for compatibility; no critic here"),
    "trainer.gpu_wait_timeout_s": Setting(60.0, "float", minimum=0),
    "trainer.placement_timeout_s": Setting(60.0, "float", minimum=0),
    "trainer.cpus_per_gpu_slot": Setting(0.25, "float", minimum=0),
    "seed.train": Setting(10000, "int", minimum=0),
    "seed.val": Setting(123, "int", minimum=0),
    "seed.val_holdout": Setting(512, "int", minimum=0, help="training never uses the first N validation levels"),
    "env.dim_x": Setting(6, "int", minimum=4),
    "env.dim_y": Setting(6, "int", minimum=4),
    "env.num_boxes": Setting(1, "int", minimum=1),
    "env.max_steps": Setting(100, "int", minimum=1),
    "env.max_actions_per_traj": Setting(10, "int", minimum=1),
    "es_manager.train.env_groups": Setting(8, "int", minimum=1),
    "es_manager.train.group_size": Setting(16, "int", minimum=1),
    "es_manager.val.env_groups": Setting(128, "int", minimum=1),
    "es_manager.val.group_size": Setting(1, "int", minimum=1),
    # RAGEN's per-tag split of the validation groups; the toy has one tag. n_groups null = [env_groups].
    "es_manager.val.env_configs.tags": Setting((ENV_TAG,), "list_of_enum", choices=(ENV_TAG,)),
    "es_manager.val.env_configs.n_groups": Setting(
        None, "list_of_int", nullable=True, minimum=1, help="groups per tag; must add up to es_manager.val.env_groups"
    ),
    "algorithm.lr": Setting(0.05, "float", minimum=0),
    "algorithm.gamma": Setting(0.9, "float", minimum=0),
    "algorithm.epsilon_start": Setting(1.0, "float", minimum=0),
    "algorithm.epsilon_end": Setting(0.05, "float", minimum=0),
    "algorithm.epsilon_decay_steps": Setting(10, "int", minimum=1),
    "algorithm.epochs_per_step": Setting(2, "int", minimum=1),
    "algorithm.minibatch_size": Setting(256, "int", minimum=1),
    # RAGEN's `early_stopped/low_validation_success` rule (contract §1.6, §4.3): stop (exit 0, no
    # final save) once val success stayed below min_val_success on `patience` consecutive in-loop
    # validations. RAGEN hard-codes 0.01 and 5; the toy lets tests reach it.
    "early_stop.min_val_success": Setting(0.01, "float", minimum=0, help="RAGEN: 0.01"),
    "early_stop.patience": Setting(5, "int", minimum=1, help="RAGEN: 5 consecutive validations"),
    # Fault-injection hook for the orchestrator's tests (not in RAGEN): exit 1 right after step N
    # (after its save, if any), once per default_local_dir; a marker file there records that it fired.
    "fault.exit_after_step": Setting(None, "int", nullable=True, minimum=1, help="tests only: exit 1 once after this step"),
    # Accepted so RAGEN command lines also run against the toy; they change nothing here.
    "model_path": Setting("Qwen/Qwen2.5-3B-Instruct", "str", help="accepted for compatibility; unused"),
    # RAGEN asserts it lists n_gpus_per_node devices (checked here too); otherwise unused by the toy.
    "system.CUDA_VISIBLE_DEVICES": Setting("0", "str", help="one device per trainer.n_gpus_per_node, e.g. '0,1'"),
    # verl declares this one, so it needs no '+'; anything else under ray_kwargs is added with '+'.
    "ray_kwargs.ray_init.num_cpus": Setting(None, "int", nullable=True, minimum=1),
}

# Keys that may be added with '+key=value' (Hydra's append); everything else must already exist.
ADDABLE_PREFIX = "ray_kwargs."
