"""verl layout, tracker written last, never overwrite, rotation keeps >= 2 and the tracked one."""

import json
import os

import numpy as np
import pytest

from ragen_toy import checkpoint
from ragen_toy.checkpoint import CheckpointError, TrainingState


def state(step, w=1.0):
    return TrainingState(step, np.full(9, w), np.zeros(9), np.ones(9), 3, {"train_seed_counter": step * 8, "rng": {"learner": {"x": 2**100}}})


def test_layout(tmp_path):
    folder, written = checkpoint.save(str(tmp_path), state(5), world_size=2)
    assert written and folder == str(tmp_path / "global_step_5")
    assert sorted(os.listdir(tmp_path / "global_step_5" / "actor")) == [
        "extra_state_world_size_2_rank_0.json", "fsdp_config.json", "model_world_size_2_rank_0.npz", "optim_world_size_2_rank_0.npz",
    ]
    assert json.load(open(tmp_path / "global_step_5/actor/fsdp_config.json")) == {"world_size": 2}
    assert (tmp_path / "latest_checkpointed_iteration.txt").read_text().strip() == "5"
    loaded, w = checkpoint.load(folder)
    assert w == 2 and loaded.step == 5 and loaded.adam_t == 3 and loaded.extra["rng"]["learner"]["x"] == 2**100
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # no temp leftovers


def test_tracker_is_written_after_the_folder_is_complete(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        if dst.endswith(checkpoint.TRACKER):
            actor = tmp_path / "global_step_7" / "actor"
            seen.append(sorted(os.listdir(actor)) if actor.is_dir() else None)
        return real_replace(src, dst)

    monkeypatch.setattr(checkpoint.os, "replace", spy)
    checkpoint.save(str(tmp_path), state(7), world_size=1)
    assert seen and seen[0] is not None and len(seen[0]) == 4


def test_never_overwrite_a_different_checkpoint(tmp_path):
    checkpoint.save(str(tmp_path), state(10), 1)
    _, written = checkpoint.save(str(tmp_path), state(10), 1)  # identical: skipped, not an error
    assert not written
    with pytest.raises(CheckpointError, match="refusing to overwrite"):
        checkpoint.save(str(tmp_path), state(10, w=2.0), 1)
    assert checkpoint.load(str(tmp_path / "global_step_10"))[0].weights[0] == 1.0


def test_rotation_keeps_two_and_never_the_tracked(tmp_path):
    saved = []
    for step in (10, 20, 30, 40):
        checkpoint.save(str(tmp_path), state(step), 1)
        saved.append(step)
        checkpoint.rotate(str(tmp_path), saved, keep=2)
    assert checkpoint.existing_steps(str(tmp_path)) == [30, 40]
    checkpoint.write_tracker(str(tmp_path), 30)  # e.g. a tracker that names an older step
    saved.append(50)
    checkpoint.save(str(tmp_path), state(50), 1)
    checkpoint.write_tracker(str(tmp_path), 30)
    checkpoint.rotate(str(tmp_path), saved, keep=2)
    assert 30 in checkpoint.existing_steps(str(tmp_path))
    assert checkpoint.rotate(str(tmp_path), saved, keep=None) == []


def test_incomplete_checkpoint_is_refused(tmp_path):
    folder, _ = checkpoint.save(str(tmp_path), state(3), 1)
    os.remove(os.path.join(folder, "actor", "optim_world_size_1_rank_0.npz"))
    with pytest.raises(CheckpointError, match="incomplete"):
        checkpoint.load(folder)
    checkpoint.save(str(tmp_path), state(4), 1)
    with pytest.raises(CheckpointError, match="world_size 1"):
        checkpoint.load(str(tmp_path / "global_step_4"), world_size=2)
