"""Overrides: types, enums, unknown keys and '+' rules are refused before Ray is touched (exit 2)."""

import os
import subprocess
import sys

import pytest

from ragen_toy.config.overrides import ConfigError, parse_command_line


def test_defaults_and_derived_dir(tmp_path):
    cfg = parse_command_line(["--config-name", "_2_sokoban"], cwd=str(tmp_path))
    assert cfg["trainer.default_local_dir"] == os.path.join(str(tmp_path), "checkpoints", "ragen", "sokoban-main")
    assert cfg["seed.train"] == 10000 and cfg["seed.val"] == 123 and cfg["trainer.resume_mode"] == "auto"


def test_overrides_are_typed():
    cfg = parse_command_line([
        "trainer.nnodes=2", "trainer.logger=['console','file']", "algorithm.lr=0.1", "+ray_kwargs.ray_init.address=auto",
        "trainer.max_actor_ckpt_to_keep=null", "trainer.max_critic_ckpt_to_keep=null", "trainer.default_local_dir=/abs/x",
        "--config-name=_2_sokoban",
    ])
    assert cfg["trainer.nnodes"] == 2 and cfg["trainer.logger"] == ("console", "file") and cfg["algorithm.lr"] == 0.1
    assert cfg["ray_kwargs"] == {"ray_init": {"address": "auto"}} and cfg["trainer.max_actor_ckpt_to_keep"] is None
    assert cfg["trainer.default_local_dir"] == "/abs/x" and cfg["trainer.max_critic_ckpt_to_keep"] is None


@pytest.mark.parametrize(
    "args, words",
    [
        (["trainer.foo=1"], ["unknown override key 'trainer.foo'", "nnodes"]),
        (["trainer.resume_mode=sometimes"], ["trainer.resume_mode", "auto, disable, resume_path"]),
        (["trainer.resume_mode=resume_path", "trainer.resume_from_path=/ckpt/step_3"], ["global_step_"]),
        (["trainer.nnodes=two"], ["trainer.nnodes", "integer"]),
        (["trainer.logger=['console','tensorboard']"], ["tensorboard", "console, file, wandb"]),
        (["trainer.max_actor_ckpt_to_keep=1"], ["minimum 2"]),
        (["+trainer.nnodes=2"], ["already exists"]),
        (["+trainer.bar=2"], ["only keys under ray_kwargs"]),
        (["trainer.n_gpus_per_node=2"], ["CUDA_VISIBLE_DEVICES (0)", "n_gpus_per_node (2)", "'0,1'"]),
        (["trainer.n_gpus_per_node=1", "system.CUDA_VISIBLE_DEVICES='0,1'"], ["n_gpus_per_node (1)"]),
        (["--config-name", "base"], ["_2_sokoban"]),
        (["ray_kwargs.ray_init.address=auto"], ["'+' prefix"]),
    ],
)
def test_bad_overrides_are_refused(args, words):
    with pytest.raises(ConfigError) as err:
        parse_command_line(args)
    for word in words:
        assert word in str(err.value)


def test_the_orchestrators_multi_gpu_and_force_add_keys_are_accepted():
    """The argv of a 2-GPU node and of trainer validation: quoted devices, `++` on existing and new keys."""
    cfg = parse_command_line([
        "--config-name", "_2_sokoban", "trainer.n_gpus_per_node=2", "system.CUDA_VISIBLE_DEVICES='0,1'",
        "++ray_kwargs.ray_init.address=auto", "++trainer.val_only=True", "++trainer.val_before_train=True",
    ])
    assert cfg["system.CUDA_VISIBLE_DEVICES"] == "0,1" and cfg["ray_kwargs"] == {"ray_init": {"address": "auto"}}
    assert cfg["trainer.val_only"] is True and cfg["trainer.val_before_train"] is True


def test_cli_exits_2_without_starting_ray(tmp_path):
    env = dict(os.environ, RAY_ADDRESS="127.0.0.1:1")  # would fail loudly if Ray were contacted
    proc = subprocess.run([sys.executable, "-m", "ragen_toy.train", "--config-name", "_2_sokoban", "trainer.foo=1"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 2
    assert "unknown override key 'trainer.foo'" in proc.stderr and "ray init" not in proc.stdout
