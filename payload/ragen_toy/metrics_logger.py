"""verl's console line (`step:N - key:value - ...`), its JSONL file backend and its wandb backend."""

from __future__ import annotations

import json
import numbers
import os
import pprint
import sys


def plain(value):
    """numpy scalars -> Python numbers, so lines read `0.5`, never `np.float64(0.5)`."""
    return value.item() if hasattr(value, "item") else value


def format_step_line(step: int, data: dict) -> str:
    # verl's concat_dict_to_str: only numbers are printed, each through pprint.pformat.
    parts = [f"step:{step}"]
    for key, value in data.items():
        value = plain(value)
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            parts.append(f"{key}:{pprint.pformat(value)}")
    return " - ".join(parts)


def start_wandb_run(project: str, experiment: str, config: dict, default_local_dir: str):
    """verl's `wandb.init(project=..., name=..., config=...)`. The orchestrator steers the run
    through the environment: WANDB_RUN_ID with WANDB_RESUME=allow (a campaign's attempts continue
    one run), WANDB_RUN_GROUP (a sweep), WANDB_MODE=offline (no network), WANDB_API_KEY; wandb reads
    those itself. Unlike verl, WANDB_PROJECT wins over trainer.project_name, and the run directory
    defaults to the checkpoint dir (not the job's cwd), so every attempt writes where the next can see.
    """
    import wandb  # imported only when asked for: the console and file backends do not need it

    return wandb.init(
        project=os.environ.get("WANDB_PROJECT") or project,
        name=experiment,
        config=config,
        dir=os.environ.get("WANDB_DIR") or default_local_dir,
    )


class MetricsLogger:
    def __init__(self, backends: tuple[str, ...], default_local_dir: str, wandb_run=None):
        self.console = "console" in backends
        self.wandb_run = wandb_run
        self.file_path = None
        if "file" in backends:
            self.file_path = os.environ.get("VERL_FILE_LOGGER_PATH") or os.path.join(default_local_dir, "metrics.jsonl")
            os.makedirs(os.path.dirname(os.path.abspath(self.file_path)), exist_ok=True)

    def log(self, step: int, data: dict) -> None:
        if self.console:
            print(format_step_line(step, data), flush=True)
        if self.file_path:
            numeric = {k: plain(v) for k, v in data.items() if isinstance(plain(v), numbers.Number)}
            # Append, not truncate: a resumed run keeps the earlier attempt's lines.
            with open(self.file_path, "a") as f:
                f.write(json.dumps({"step": step, "data": numeric}) + "\n")
                f.flush()
        if self.wandb_run is not None:
            self.wandb_run.log({k: plain(v) for k, v in data.items()}, step=step)

    def close(self, exit_code: int) -> None:
        """Ends the W&B run (its offline files complete, marked failed on a non-zero code)."""
        if self.wandb_run is not None:
            self.wandb_run.finish(exit_code=exit_code)
            self.wandb_run = None


def say(message: str) -> None:
    print(message, flush=True)


def warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
