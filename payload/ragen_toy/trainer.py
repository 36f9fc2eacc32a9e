"""The training loop (verl's fit()): rollouts on slot actors, a Q-learning update, validation, saves.

Determinism: levels come from seeds, exploration from per-episode RNGs derived from
(seed.train, step, episode), results are put back in episode order, and the learner's own RNG is
checkpointed. So a resumed run reproduces an uninterrupted one bit for bit, whatever Ray's
scheduling order (and whatever the number of slots).
"""

from __future__ import annotations

import os
import time

import numpy as np
import ray

from . import checkpoint
from .agent.q_learning import AdamState, Batch, initial_weights, td_update
from .config.sokoban_main import ENV_TAG
from .evaluation import evaluate, summarise
from .levels import Holdout, env_kwargs, training_level, validation_levels
from .metrics_logger import MetricsLogger, say, start_wandb_run, warn


class InjectedFault(RuntimeError):
    """Raised by the test-only `fault.exit_after_step` hook; the CLI exits 1 like any training failure."""


def epsilon_at(cfg: dict, step: int) -> float:
    start, end, decay = cfg["algorithm.epsilon_start"], cfg["algorithm.epsilon_end"], cfg["algorithm.epsilon_decay_steps"]
    return end + (start - end) * max(0.0, 1.0 - (step - 1) / decay)


def learner_rng(seed_train: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed_train), 0x1EA2]))


class Trainer:
    def __init__(self, cfg: dict, workers: list, holdout: Holdout):
        self.cfg = cfg
        self.workers = workers
        self.world_size = len(workers)
        self.root = cfg["trainer.default_local_dir"]
        self.gen_kwargs = env_kwargs(cfg)
        self.env_cfg = {"max_steps": cfg["env.max_steps"], "max_actions_per_traj": cfg["env.max_actions_per_traj"]}
        self.holdout = holdout
        val_groups = validation_levels(cfg["seed.val"], cfg["es_manager.val.env_groups"], self.gen_kwargs)
        self.val_levels = [lvl for lvl in val_groups for _ in range(cfg["es_manager.val.group_size"])]
        wandb_run = None
        if "wandb" in cfg["trainer.logger"]:
            wandb_run = start_wandb_run(cfg["trainer.project_name"], cfg["trainer.experiment_name"], dict(cfg), self.root)
        self.logger = MetricsLogger(cfg["trainer.logger"], self.root, wandb_run)
        self.saved_by_this_run: list[int] = []
        self._fresh_state()

    # --- state -----------------------------------------------------------------------------
    def _fresh_state(self) -> None:
        self.step = 0
        self.weights = initial_weights()
        self.adam = AdamState.zeros(len(self.weights))
        self.rng = learner_rng(self.cfg["seed.train"])
        self.seed_counter = 0

    def _state(self) -> checkpoint.TrainingState:
        cfg = self.cfg
        extra = {
            "world_size": self.world_size,
            "train_seed_counter": self.seed_counter,
            "rng": {
                "learner": self.rng.bit_generator.state,
                # Slot actors hold no RNG state: each episode's generator is derived, so nothing to restore.
                "rollout": "per episode: SeedSequence([seed.train, global_step, episode_index])",
            },
            "epsilon": {
                "start": cfg["algorithm.epsilon_start"],
                "end": cfg["algorithm.epsilon_end"],
                "decay_steps": cfg["algorithm.epsilon_decay_steps"],
                "current": epsilon_at(cfg, max(self.step, 1)),
            },
            "seed": {"train": cfg["seed.train"], "val": cfg["seed.val"]},
            "holdout": {"seed_val": self.holdout.seed_val, "count": self.holdout.count, "digest": self.holdout.digest},
            "env": {k.split(".", 1)[1]: cfg[k] for k in cfg if k.startswith("env.")},
        }
        return checkpoint.TrainingState(self.step, self.weights, self.adam.m, self.adam.v, self.adam.t, extra)

    def _restore(self, path: str) -> None:
        state, _ = checkpoint.load(path, self.world_size)
        self.step = state.step
        self.weights = state.weights
        self.adam = AdamState(m=state.adam_m, v=state.adam_v, t=state.adam_t)
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = state.extra["rng"]["learner"]
        self.seed_counter = int(state.extra["train_seed_counter"])
        if state.extra.get("holdout", {}).get("digest") != self.holdout.digest:
            warn(f"warning: {path} was trained with a different validation holdout (seed.val or env changed)")
        say(f"Resumed from checkpoint {path} at global step {self.step}")

    def load_checkpoint(self) -> None:
        """verl's _load_checkpoint: auto | disable | resume_path."""
        mode = self.cfg["trainer.resume_mode"]
        if mode == "disable":
            say("Training from scratch")
            return
        if mode == "resume_path":
            self._restore(self.cfg["trainer.resume_from_path"])
            return
        tracked = checkpoint.read_tracker(self.root)
        if tracked is None:
            say("Training from scratch")
            return
        self._restore(checkpoint.step_dir(self.root, tracked))

    # --- loop ------------------------------------------------------------------------------
    def fit(self) -> dict:
        cfg = self.cfg
        total = cfg["trainer.total_training_steps"]
        say(f"Total training steps: {total}")
        self.load_checkpoint()
        # As verl's fit(): val_only returns after the validation before training, so it acts only
        # together with val_before_train (val_only alone trains).
        if cfg["trainer.val_before_train"] or self.step >= total:
            metrics = self.validate()
            say(f"Initial validation metrics: {metrics}")
            self.logger.log(self.step, metrics)
            if cfg["trainer.val_only"] or self.step >= total:
                say(f"Final validation metrics: {metrics}")
                return metrics
        final = {}
        low_val_streak = 0
        while self.step < total:
            self.step += 1
            started = time.perf_counter()
            metrics = self.train_step()
            is_last = self.step >= total
            test_freq = cfg["trainer.test_freq"]
            if is_last or (test_freq > 0 and self.step % test_freq == 0):
                t0 = time.perf_counter()
                final = self.validate()
                metrics.update(final)
                metrics["timing_s/testing"] = time.perf_counter() - t0
                low = final[f"val-env/{ENV_TAG}/success"] < cfg["early_stop.min_val_success"]
                low_val_streak = low_val_streak + 1 if low else 0
                if low_val_streak >= cfg["early_stop.patience"]:
                    # RAGEN: log the reason as a metric, then break out of fit() (exit 0, no final save).
                    metrics["early_stopped/low_validation_success"] = 1.0
                    metrics["timing_s/step"] = time.perf_counter() - started
                    self.logger.log(self.step, metrics)
                    say(
                        f"[Early Stopping] val-env/{ENV_TAG}/success below {cfg['early_stop.min_val_success']} "
                        f"on {low_val_streak} consecutive validations; stopping at step {self.step}"
                    )
                    return final
            save_freq = cfg["trainer.save_freq"]
            if is_last or (save_freq > 0 and self.step % save_freq == 0):
                t0 = time.perf_counter()
                self.save()
                metrics["timing_s/save_checkpoint"] = time.perf_counter() - t0
            metrics["timing_s/step"] = time.perf_counter() - started
            self.logger.log(self.step, metrics)
            self._injected_fault()
        say(f"Final validation metrics: {final}")
        return final

    def _injected_fault(self) -> None:
        """The test-only hook `fault.exit_after_step`: fires once per checkpoint dir, so a resumed
        run that passes the same step again goes on (a campaign's next attempt)."""
        at = self.cfg["fault.exit_after_step"]
        if at is None or self.step != at:
            return
        marker = os.path.join(self.root, f".fault_exit_after_step_{at}")
        if os.path.exists(marker):
            return
        os.makedirs(self.root, exist_ok=True)
        open(marker, "w").close()
        raise InjectedFault(f"fault injection: fault.exit_after_step={at}; exiting 1 after step {self.step}")

    def train_step(self) -> dict:
        cfg = self.cfg
        t0 = time.perf_counter()
        groups, group_size = cfg["es_manager.train.env_groups"], cfg["es_manager.train.group_size"]
        levels, skipped = [], 0
        for g in range(groups):
            level, variant = training_level(cfg["seed.train"] + self.seed_counter + g, self.holdout, self.gen_kwargs)
            levels.append(level)
            skipped += variant > 0
        self.seed_counter += groups
        tasks = [(g * group_size + k, levels[g]) for g in range(groups) for k in range(group_size)]
        epsilon = epsilon_at(cfg, self.step)
        t_gen = time.perf_counter()

        shares = np.array_split(np.arange(len(tasks)), self.world_size)
        refs = [
            worker.collect.remote([tasks[i] for i in share], self.weights, epsilon, cfg["seed.train"], self.step)
            for worker, share in zip(self.workers, shares)
        ]
        results = sorted((item for part in ray.get(refs) for item in part), key=lambda item: item[0])
        t_roll = time.perf_counter()

        batch = Batch.concat([b for _, b, _ in results])
        self.weights, self.adam, td = td_update(
            self.weights,
            self.adam,
            batch,
            self.rng,
            lr=cfg["algorithm.lr"],
            gamma=cfg["algorithm.gamma"],
            epochs=cfg["algorithm.epochs_per_step"],
            minibatch_size=cfg["algorithm.minibatch_size"],
        )
        t_upd = time.perf_counter()
        episodes = [r for _, _, r in results]
        success = np.array([e.success for e in episodes], dtype=float)
        rewards = np.array([e.reward for e in episodes])
        tag = f"train/{ENV_TAG}"
        return {
            f"{tag}/success": float(success.mean()),
            f"{tag}/num_actions": float(np.mean([e.actions for e in episodes])),
            f"{tag}/pass@{group_size}": float(success.reshape(groups, group_size).max(axis=1).mean()),
            "critic/score/mean": float(rewards.mean()),
            "critic/score/max": float(rewards.max()),
            "critic/score/min": float(rewards.min()),
            "actor/epsilon": epsilon,
            "actor/td_error": td,
            "actor/lr": cfg["algorithm.lr"],
            "train/batch_size": len(episodes),
            "train/transitions": len(batch),
            "train/skipped_val_overlap": skipped,
            "timing_s/gen": t_gen - t0,
            "timing_s/rollout": t_roll - t_gen,
            "timing_s/update": t_upd - t_roll,
        }

    def validate(self) -> dict:
        return summarise(evaluate(self.val_levels, self.weights, self.env_cfg), group_size=self.cfg["es_manager.val.group_size"])

    def save(self) -> None:
        folder, written = checkpoint.save(self.root, self._state(), self.world_size)
        say(f"local_global_step_folder: {folder}")
        if not written:
            say(f"checkpoint {folder} already exists with identical content; kept it")
        if self.step not in self.saved_by_this_run:
            self.saved_by_this_run.append(self.step)
        for removed in checkpoint.rotate(self.root, self.saved_by_this_run, self.cfg["trainer.max_actor_ckpt_to_keep"]):
            say(f"Checkpoint manager remove previous save local path: {removed}")
