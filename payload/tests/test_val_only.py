"""`trainer.val_only=True` from a checkpoint (the orchestrator's trainer validation runner, as on a
RAGEN image): one console line at the checkpoint's step with RAGEN's val-env keys, nothing written
where the checkpoints are, the same numbers as the payload's own validation runner."""

import hashlib
import json
import os
import re

import pytest

from conftest import run_module, train
from ragen_toy.config.overrides import ConfigError, parse_command_line

STEP_LINE = re.compile(r"^step:(\d+)((?: - [^ :]+:-?[0-9.e+-]+)+)$")


def tree_digest(root):
    digest = hashlib.sha256()
    for dirpath, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            digest.update(path.encode() + open(path, "rb").read())
    return digest.hexdigest()


def val_only_args(checkpoint, scratch, seed, episodes):
    return [
        "trainer.nnodes=2", "trainer.val_only=True", "trainer.val_before_train=True",
        "trainer.resume_mode=resume_path", f"trainer.resume_from_path={checkpoint}", f"trainer.default_local_dir={scratch}",
        "trainer.logger=['console']", f"seed.val={seed}", f"es_manager.val.env_groups={episodes}", "es_manager.val.group_size=1",
        "es_manager.val.env_configs.tags=[CoordSokoban]", f"es_manager.val.env_configs.n_groups=[{episodes}]",
    ]


@pytest.fixture(scope="module")
def trained(ray_cluster, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("valonly") / "ckpt")
    proc = train(ray_cluster, os.path.dirname(root), "trainer.nnodes=2", f"trainer.default_local_dir={root}",
                 "trainer.total_training_steps=4", "trainer.save_freq=2", "es_manager.val.env_groups=8", "trainer.val_before_train=false")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root


def test_val_only_validates_the_checkpoint_step_and_writes_nothing(trained, ray_cluster, tmp_path):
    before = tree_digest(trained)
    scratch = str(tmp_path / "scratch")
    proc = train(ray_cluster, tmp_path, *val_only_args(f"{trained}/global_step_4", scratch, 5000, 24))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"Resumed from checkpoint {trained}/global_step_4 at global step 4" in proc.stdout
    lines = [l for l in proc.stdout.splitlines() if l.startswith("step:")]
    assert len(lines) == 1, lines  # the validation, and no training step
    match = STEP_LINE.match(lines[0])
    assert match and match.group(1) == "4", lines[0]
    metrics = dict(kv.split(":", 1) for kv in match.group(2).split(" - ")[1:])
    assert set(metrics) == {f"val-env/CoordSokoban/{k}" for k in ("success", "num_actions", "episode_reward", "pass@1")}, metrics
    assert float(metrics["val-env/CoordSokoban/pass@1"]) == float(metrics["val-env/CoordSokoban/success"])  # one episode per group
    assert tree_digest(trained) == before, "validation changed the training checkpoints"
    assert not os.path.exists(os.path.join(scratch, "latest_checkpointed_iteration.txt"))

    # The payload's own runner on the same checkpoint, seeds and count plays the same levels greedily.
    out = tmp_path / "payload-validation.json"
    own = run_module("ragen_toy.validate", ["--checkpoint", f"{trained}/global_step_4", "--episodes", "24", "--seed", "5000", "--out", str(out)], tmp_path)
    assert own.returncode == 0, own.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["env_tag"] == "CoordSokoban"
    assert report["success_rate"] == pytest.approx(float(metrics["val-env/CoordSokoban/success"]))
    assert report["mean_actions"] == pytest.approx(float(metrics["val-env/CoordSokoban/num_actions"]))


def test_pass_at_k_over_groups(trained, ray_cluster, tmp_path):
    args = val_only_args(f"{trained}/global_step_2", str(tmp_path / "s"), 5000, 6)
    args = [a for a in args if not a.startswith("es_manager.val.group_size")] + ["es_manager.val.group_size=3"]
    proc = train(ray_cluster, tmp_path, *args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("step:"))
    assert line.startswith("step:2 - ") and "val-env/CoordSokoban/pass@3:" in line, line


def test_val_groups_must_add_up_like_ragen():
    with pytest.raises(ConfigError, match=r"n_groups=\[30\] adds up to 30, but es_manager.val.env_groups=32"):
        parse_command_line(["es_manager.val.env_groups=32", "es_manager.val.env_configs.n_groups=[30]"])
    with pytest.raises(ConfigError, match="allowed values: CoordSokoban"):
        parse_command_line(["es_manager.val.env_configs.tags=[SimpleSokoban]"])
    cfg = parse_command_line(["es_manager.val.env_groups=32"])
    assert cfg["es_manager.val.env_configs.n_groups"] == (32,)
