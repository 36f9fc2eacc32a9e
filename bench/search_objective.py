"""The objective of bench/search-vs-random.ts: the payload's trainer (ragen_toy), in this process, no Ray.

Stdin: one JSON line {"root", "base": {key: value}, "runs": [{"method", "seed", "params"|null}], "tpe":
{"trials", "space"}}. For each run it trains the payload's Trainer (the same training code the
children run; its rollout actors replaced by in-process objects) once per trial and prints one JSON
line per trial: method, seed, index, params, validation success, seconds. A `tpe` run asks and tells
through ragen_search.study, the search worker's own activity code, on a SQLite study.
"""

from __future__ import annotations

import json
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "payload"), str(REPO / "search")]

from ragen_toy import trainer as trainer_module  # noqa: E402
from ragen_toy.agent.episodes import episode_rng, play_training_episode  # noqa: E402
from ragen_toy.config.overrides import parse_command_line  # noqa: E402
from ragen_toy.levels import Holdout, env_kwargs  # noqa: E402
from ragen_search.study import AskInput, TellInput, ask, tell  # noqa: E402


class InProcessWorker:
    """RolloutWorker.collect without an actor: `collect.remote(...)` answers the list itself."""

    def __init__(self, env_cfg: dict):
        def collect(tasks, weights, epsilon, seed_train, step):
            out = []
            for episode_index, level in tasks:
                batch, result = play_training_episode(level, weights, epsilon, episode_rng(seed_train, step, episode_index), env_cfg)
                out.append((episode_index, batch, result))
            return out

        self.collect = types.SimpleNamespace(remote=collect)


# The trainer gathers its actors' answers with ray.get; in-process they are the answers already.
trainer_module.ray = types.SimpleNamespace(get=lambda refs: refs)


def train(root: Path, overrides: dict) -> tuple[float, float]:
    argv = ["--config-name", "_2_sokoban", *(f"{k}={v}" for k, v in overrides.items()), f"trainer.default_local_dir={root}"]
    cfg = parse_command_line(argv)
    started = time.perf_counter()
    holdout = Holdout.build(cfg["seed.val"], max(cfg["seed.val_holdout"], 0), env_kwargs(cfg))
    env_cfg = {"max_steps": cfg["env.max_steps"], "max_actions_per_traj": cfg["env.max_actions_per_traj"]}
    t = trainer_module.Trainer(cfg, [InProcessWorker(env_cfg)], holdout)
    final = t.fit()
    t.logger.close(exit_code=0)
    return final["val-env/CoordSokoban/success"], time.perf_counter() - started


def main() -> None:
    job = json.loads(sys.stdin.readline())
    root = Path(job["root"])
    for run in job["runs"]:
        method, seed = run["method"], run["seed"]
        base = {**job["base"], "seed.train": 10000 + seed}
        trials = run["params"] if method != "tpe" else [None] * job["tpe"]["trials"]
        for index, params in enumerate(trials):
            ask_s = tell_s = None
            if params is None:
                storage = f"sqlite:///{root / f'tpe-{seed}.db'}"
                t0 = time.perf_counter()
                params = ask(storage, AskInput(study=f"tpe-{seed}", index=index, seed=seed, direction="max", space=job["tpe"]["space"], trials=job["tpe"]["trials"]))
                ask_s = time.perf_counter() - t0
            success, seconds = train(root / f"{method}-{seed}-{index}", {**base, **params})
            if method == "tpe":
                t0 = time.perf_counter()
                tell(storage, TellInput(study=f"tpe-{seed}", index=index, state="complete", value=success))
                tell_s = time.perf_counter() - t0
            line = {"method": method, "seed": seed, "index": index, "params": params, "success": success, "seconds": seconds}
            if ask_s is not None:
                line.update(askMs=round(ask_s * 1000, 1), tellMs=round(tell_s * 1000, 1))
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
