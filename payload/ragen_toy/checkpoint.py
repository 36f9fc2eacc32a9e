"""verl's checkpoint layout (contract §3.1), written so that a reader never sees half a checkpoint.

<dir>/global_step_N/actor/{model,optim}_world_size_W_rank_0.npz, extra_state_world_size_W_rank_0.json,
fsdp_config.json; then <dir>/latest_checkpointed_iteration.txt, written last and atomically.
"""

from __future__ import annotations

import filecmp
import io
import json
import os
import re
import shutil
from dataclasses import dataclass

import numpy as np

TRACKER = "latest_checkpointed_iteration.txt"
_STEP_DIR = re.compile(r"^global_step_(\d+)$")


class CheckpointError(RuntimeError):
    pass


@dataclass
class TrainingState:
    step: int
    weights: np.ndarray
    adam_m: np.ndarray
    adam_v: np.ndarray
    adam_t: int
    extra: dict  # JSON-able: RNG states, seed counter, epsilon schedule, holdout digest


def file_names(world_size: int) -> dict[str, str]:
    suffix = f"world_size_{world_size}_rank_0"
    return {
        "model": f"model_{suffix}.npz",
        "optim": f"optim_{suffix}.npz",
        "extra": f"extra_state_{suffix}.json",
        "fsdp": "fsdp_config.json",
    }


def step_dir(root: str, step: int) -> str:
    return os.path.join(root, f"global_step_{step}")


def save(root: str, state: TrainingState, world_size: int) -> tuple[str, bool]:
    """Write global_step_N, then the tracker. Returns (folder, written); written is False when an
    identical checkpoint was already there. A different existing global_step_N is never replaced."""
    os.makedirs(root, exist_ok=True)
    final = step_dir(root, state.step)
    tmp = os.path.join(root, f".tmp_global_step_{state.step}_{os.getpid()}")
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    _write_actor(os.path.join(tmp, "actor"), state, world_size)
    written = True
    if os.path.exists(final):
        same = _same_tree(os.path.join(tmp, "actor"), os.path.join(final, "actor"))
        shutil.rmtree(tmp)
        if not same:
            raise CheckpointError(
                f"{final} already exists with different content; refusing to overwrite it "
                "(use a fresh trainer.default_local_dir, or resume from that checkpoint)"
            )
        written = False
    else:
        os.rename(tmp, final)  # atomic on one filesystem: the folder appears complete or not at all
    write_tracker(root, state.step)
    return final, written


def _write_actor(actor: str, state: TrainingState, world_size: int) -> None:
    os.makedirs(actor)
    names = file_names(world_size)
    _write_bytes(os.path.join(actor, names["model"]), _npz(weights=state.weights))
    _write_bytes(os.path.join(actor, names["optim"]), _npz(adam_m=state.adam_m, adam_v=state.adam_v, adam_t=np.int64(state.adam_t)))
    extra = dict(state.extra, global_step=state.step)
    _write_bytes(os.path.join(actor, names["extra"]), json.dumps(extra, sort_keys=True, indent=1).encode())
    _write_bytes(os.path.join(actor, names["fsdp"]), json.dumps({"world_size": world_size}).encode())


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _same_tree(a: str, b: str) -> bool:
    if not os.path.isdir(b) or sorted(os.listdir(a)) != sorted(os.listdir(b)):
        return False
    return all(_same_file(os.path.join(a, n), os.path.join(b, n)) for n in os.listdir(a))


def _same_file(a: str, b: str) -> bool:
    if not a.endswith(".npz"):
        return filecmp.cmp(a, b, shallow=False)
    # .npz zips carry write times, so compare the arrays (bit for bit), not the bytes.
    with np.load(a) as x, np.load(b) as y:
        return sorted(x.files) == sorted(y.files) and all(
            x[k].dtype == y[k].dtype and x[k].tobytes() == y[k].tobytes() for k in x.files
        )


def write_tracker(root: str, step: int) -> None:
    tmp = os.path.join(root, f".{TRACKER}.{os.getpid()}.tmp")
    _write_bytes(tmp, f"{step}\n".encode())
    os.replace(tmp, os.path.join(root, TRACKER))


def read_tracker(root: str) -> int | None:
    path = os.path.join(root, TRACKER)
    if not os.path.exists(path):
        return None
    text = open(path).read().strip()
    if not text.isdigit():
        raise CheckpointError(f"{path} does not hold an integer step (found {text!r})")
    return int(text)


def step_from_path(path: str) -> int:
    match = _STEP_DIR.match(os.path.basename(os.path.normpath(path)))
    if not match:
        raise CheckpointError(f"{path}: the folder name must be global_step_<N>")
    return int(match.group(1))


def load(path: str, world_size: int | None = None) -> tuple[TrainingState, int]:
    """Load global_step_N. world_size None = use whatever the checkpoint was written with."""
    actor = os.path.join(path, "actor")
    fsdp = os.path.join(actor, "fsdp_config.json")
    if not os.path.isfile(fsdp):
        raise CheckpointError(f"checkpoint {path} is missing or incomplete: no actor/fsdp_config.json")
    saved_world = int(json.load(open(fsdp))["world_size"])
    if world_size is not None and world_size != saved_world:
        raise CheckpointError(
            f"checkpoint {path} was written with world_size {saved_world}, this run has {world_size}; "
            "resume with the same trainer.nnodes x trainer.n_gpus_per_node"
        )
    names = file_names(saved_world)
    missing = [n for n in ("model", "optim", "extra") if not os.path.isfile(os.path.join(actor, names[n]))]
    if missing:
        raise CheckpointError(f"checkpoint {path} is incomplete: missing {', '.join(names[n] for n in missing)}")
    model = np.load(os.path.join(actor, names["model"]))
    optim = np.load(os.path.join(actor, names["optim"]))
    extra = json.load(open(os.path.join(actor, names["extra"])))
    step = int(extra["global_step"])
    state = TrainingState(step, model["weights"], optim["adam_m"], optim["adam_v"], int(optim["adam_t"]), extra)
    return state, saved_world


def existing_steps(root: str) -> list[int]:
    if not os.path.isdir(root):
        return []
    return sorted(int(m.group(1)) for m in map(_STEP_DIR.match, os.listdir(root)) if m)


def rotate(root: str, saved_by_this_run: list[int], keep: int | None) -> list[str]:
    """Delete the oldest checkpoints this run wrote beyond `keep` (never the one the tracker names).

    Like verl, only this run's saves are candidates: a checkpoint from an earlier attempt is never
    deleted by a later one. Returns the removed folders.
    """
    if keep is None:
        return []
    tracked = read_tracker(root)
    removed = []
    for step in sorted(saved_by_this_run)[:-keep] if len(saved_by_this_run) > keep else []:
        if step == tracked:
            continue
        folder = step_dir(root, step)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
            removed.append(folder)
        saved_by_this_run.remove(step)
    return removed
