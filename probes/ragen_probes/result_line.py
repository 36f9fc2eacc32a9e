"""A probe's result: one `<TAG>_RESULT {json}` line in the job's log (the worker reads it there),
and the same JSON in --out when given (the run's archive)."""
from __future__ import annotations

import json
import os


def report(tag: str, result: dict, out: str | None) -> None:
    line = json.dumps(result, sort_keys=True)
    print(f"{tag}_RESULT {line}", flush=True)
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            f.write(line + "\n")
