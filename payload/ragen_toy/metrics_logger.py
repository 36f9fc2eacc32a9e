"""verl's console line (`step:N - key:value - ...`) and its JSONL file backend."""

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


class MetricsLogger:
    def __init__(self, backends: tuple[str, ...], default_local_dir: str):
        self.console = "console" in backends
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


def say(message: str) -> None:
    print(message, flush=True)


def warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
