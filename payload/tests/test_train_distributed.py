"""The trainer on a real 2-node Ray cluster: verl output, checkpoints, resume equality, learning, bounded failures."""

import glob
import json
import os
import re
import time

import numpy as np
import pytest

from conftest import run_module, train
from wandb_offline import offline_runs

STEP_LINE = re.compile(r"^step:(\d+)( - [^ :]+:-?[0-9.e+-]+)+$")


def weights_at(root, step):
    actor = os.path.join(root, f"global_step_{step}", "actor")
    model = np.load(os.path.join(actor, "model_world_size_2_rank_0.npz"))["weights"]
    optim = dict(np.load(os.path.join(actor, "optim_world_size_2_rank_0.npz")))
    extra = json.load(open(os.path.join(actor, "extra_state_world_size_2_rank_0.json")))
    return model, optim, extra


@pytest.fixture(scope="module")
def straight_run(ray_cluster, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("straight") / "ckpt")
    proc = train(ray_cluster, root and os.path.dirname(root), "trainer.nnodes=2", f"trainer.default_local_dir={root}",
                 "trainer.total_training_steps=20", "trainer.save_freq=10", "trainer.logger=['console','file']")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root, proc


def test_console_contract_and_layout(straight_run):
    root, proc = straight_run
    out = proc.stdout
    assert "Total training steps: 20" in out and "Training from scratch" in out and "Final validation metrics: {" in out
    assert f"local_global_step_folder: {root}/global_step_10" in out and f"local_global_step_folder: {root}/global_step_20" in out
    lines = [l for l in out.splitlines() if l.startswith("step:")]
    assert [int(STEP_LINE.match(l).group(1)) for l in lines] == list(range(0, 21))  # step 0 = val_before_train
    step10 = dict(kv.split(":", 1) for kv in lines[10].split(" - "))
    for key in ("train/CoordSokoban/success", "critic/score/mean", "timing_s/step", "val-env/CoordSokoban/success"):
        float(step10[key])
    assert open(os.path.join(root, "latest_checkpointed_iteration.txt")).read().strip() == "20"
    assert sorted(os.listdir(os.path.join(root, "global_step_20", "actor"))) == [
        "extra_state_world_size_2_rank_0.json", "fsdp_config.json", "model_world_size_2_rank_0.npz", "optim_world_size_2_rank_0.npz",
    ]
    jsonl = [json.loads(l) for l in open(os.path.join(root, "metrics.jsonl"))]
    assert [r["step"] for r in jsonl] == list(range(0, 21)) and "critic/score/mean" in jsonl[5]["data"]
    placements = json.loads(out.split("rollout workers: ", 1)[1].splitlines()[0])
    assert len({p["node_id"] for p in placements}) == 2  # one slot actor per GPU node


def test_resume_auto_10_plus_10_equals_20_bit_for_bit(straight_run, ray_cluster, tmp_path, monkeypatch):
    root = str(tmp_path / "ckpt")
    # W&B offline with the environment the orchestrator gives a campaign's attempts (one run id).
    for name, value in {**WANDB_ENV, "WANDB_API_KEY": WANDB_KEY}.items():
        monkeypatch.setenv(name, value)
    common = ["trainer.nnodes=2", f"trainer.default_local_dir={root}", "trainer.save_freq=10",
              "trainer.logger=['console','file','wandb']"]
    first = train(ray_cluster, tmp_path, *common, "trainer.total_training_steps=10")
    assert first.returncode == 0, first.stderr[-3000:]
    second = train(ray_cluster, tmp_path, *common, "trainer.total_training_steps=20")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Resumed from checkpoint" in second.stdout and "Training from scratch" not in second.stdout
    a, b = weights_at(straight_run[0], 20), weights_at(root, 20)
    assert a[0].tobytes() == b[0].tobytes()
    assert all(a[1][k].tobytes() == b[1][k].tobytes() for k in a[1])
    assert a[2] == b[2]  # RNG state, seed counter, epsilon schedule
    steps = [json.loads(l)["step"] for l in open(os.path.join(root, "metrics.jsonl"))]
    assert steps[:11] == list(range(11)) and steps[-1] == 20  # appended across the resume
    assert_one_wandb_run(root)


WANDB_KEY = "wandb-api-key-never-written-7f3a"
WANDB_ENV = {"WANDB_MODE": "offline", "WANDB_RUN_ID": "camp-7", "WANDB_RESUME": "allow", "WANDB_RUN_GROUP": "sweep-3",
             "WANDB_PROJECT": "sokoban-campaigns", "WANDB_SILENT": "true"}


def assert_one_wandb_run(root):
    """The two attempts wrote one W&B run: offline, a run file per attempt (offline mode cannot
    append), each with the run id, project and group given; the steps continue from the resume;
    the API key is in none of the files."""
    runs = offline_runs(root)
    assert len(runs) == 2, runs
    for run in runs:
        assert (run["run_id"], run["project"], run["group"]) == ("camp-7", "sokoban-campaigns", "sweep-3")
        assert all("critic/score/mean" in k or "val-env/CoordSokoban/success" in k for k in run["keys"])
    first, second = runs
    assert first["steps"] == list(range(11)) and first["exit_code"] == 0
    # The resumed attempt starts at its checkpoint (its validation before training) and goes on.
    assert second["steps"] == list(range(10, 21)) and second["exit_code"] == 0
    for path in glob.glob(os.path.join(root, "wandb", "**", "*"), recursive=True):
        if os.path.isfile(path):
            assert WANDB_KEY.encode() not in open(path, "rb").read(), f"the API key is in {path}"


def test_resume_path_into_a_new_dir_matches(straight_run, ray_cluster, tmp_path):
    src = os.path.join(straight_run[0], "global_step_10")
    root = str(tmp_path / "other")
    proc = train(ray_cluster, tmp_path, "trainer.nnodes=2", f"trainer.default_local_dir={root}", "trainer.total_training_steps=20",
                 "trainer.resume_mode=resume_path", f"trainer.resume_from_path={src}", "trainer.val_before_train=false")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert weights_at(root, 20)[0].tobytes() == weights_at(straight_run[0], 20)[0].tobytes()


def test_a_different_run_never_overwrites_a_checkpoint(straight_run, ray_cluster, tmp_path):
    root = straight_run[0]
    before = open(os.path.join(root, "global_step_10", "actor", "model_world_size_2_rank_0.npz"), "rb").read()
    proc = train(ray_cluster, tmp_path, "trainer.nnodes=2", f"trainer.default_local_dir={root}", "trainer.resume_mode=disable",
                 "trainer.total_training_steps=10", "seed.train=777", "trainer.val_before_train=false")
    assert proc.returncode == 4 and "refusing to overwrite" in proc.stderr
    assert open(os.path.join(root, "global_step_10", "actor", "model_world_size_2_rank_0.npz"), "rb").read() == before


def test_learns_beyond_random_on_held_out_levels(straight_run, tmp_path):
    ckpt = os.path.join(straight_run[0], "global_step_20")
    greedy = run_module("ragen_toy.validate", ["--checkpoint", ckpt, "--episodes", "128", "--seed", "123", "--out", str(tmp_path / "g" / "r.json")], tmp_path)
    rand = run_module("ragen_toy.validate", ["--checkpoint", ckpt, "--episodes", "128", "--seed", "123", "--out", str(tmp_path / "rand.json"), "--random-policy"], tmp_path)
    assert greedy.returncode == 0 and rand.returncode == 0, greedy.stderr + rand.stderr
    g, r = json.load(open(tmp_path / "g" / "r.json")), json.load(open(tmp_path / "rand.json"))
    assert g["held_out_from_training"] and g["step"] == 20 and len(g["records"]) == 128
    assert set(g) >= {"checkpoint", "step", "episodes", "seed", "success_rate", "mean_reward", "mean_actions", "records"}
    assert g["success_rate"] >= 0.6 and g["success_rate"] - r["success_rate"] >= 0.4, (g["success_rate"], r["success_rate"])
    again = run_module("ragen_toy.validate", ["--checkpoint", ckpt, "--episodes", "4", "--seed", "123", "--out", str(tmp_path / "rand.json")], tmp_path)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr
    missing = run_module("ragen_toy.validate", ["--checkpoint", str(tmp_path / "global_step_9"), "--episodes", "4", "--seed", "1", "--out", str(tmp_path / "m.json")], tmp_path)
    assert missing.returncode == 4 and "missing or incomplete" in missing.stderr


def test_gpu_shortfall_fails_fast_with_both_numbers(ray_cluster, tmp_path):
    started = time.monotonic()
    proc = train(ray_cluster, tmp_path, "trainer.nnodes=3", "trainer.gpu_wait_timeout_s=2", f"trainer.default_local_dir={tmp_path}/c")
    assert proc.returncode == 3
    assert "Total available GPUs 2 is less than total desired GPUs 3 (trainer.nnodes=3 x trainer.n_gpus_per_node=1" in proc.stderr
    assert time.monotonic() - started < 60


def test_impossible_per_node_shape_is_bounded(ray_cluster, tmp_path):
    # 2 GPUs in total, but no node has 2: verl would hang in pg.ready(); here it fails.
    proc = train(ray_cluster, tmp_path, "trainer.n_gpus_per_node=2", "system.CUDA_VISIBLE_DEVICES='0,1'",
                 "trainer.placement_timeout_s=3", f"trainer.default_local_dir={tmp_path}/c")
    assert proc.returncode == 3 and "placement groups not ready within 3 s" in proc.stderr


def test_fault_hook_exits_1_once_then_resume_path_finishes(ray_cluster, tmp_path):
    root = str(tmp_path / "ckpt")
    common = ["trainer.nnodes=2", f"trainer.default_local_dir={root}", "trainer.save_freq=2", "trainer.total_training_steps=5",
              "fault.exit_after_step=3", "es_manager.val.env_groups=8", "trainer.val_before_train=false"]
    failed = train(ray_cluster, tmp_path, *common, "trainer.resume_mode=disable")
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    assert "fault injection: fault.exit_after_step=3" in failed.stderr
    assert open(os.path.join(root, "latest_checkpointed_iteration.txt")).read().strip() == "2"
    resumed = train(ray_cluster, tmp_path, *common, "trainer.resume_mode=resume_path", f"trainer.resume_from_path={root}/global_step_2")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert "Resumed from checkpoint" in resumed.stdout
    assert open(os.path.join(root, "latest_checkpointed_iteration.txt")).read().strip() == "5"


def test_early_stop_like_ragen_exits_0_with_the_metric_and_no_final_save(ray_cluster, tmp_path):
    # Validation success can never reach 1.01: RAGEN's low_validation_success rule fires after 2 validations.
    root = str(tmp_path / "ckpt")
    proc = train(ray_cluster, tmp_path, "trainer.nnodes=2", f"trainer.default_local_dir={root}", "trainer.total_training_steps=10",
                 "trainer.save_freq=5", "trainer.test_freq=1", "es_manager.val.env_groups=8", "trainer.val_before_train=false",
                 "early_stop.min_val_success=1.01", "early_stop.patience=2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [l for l in proc.stdout.splitlines() if l.startswith("step:")]
    assert [int(STEP_LINE.match(l).group(1)) for l in lines] == [1, 2]
    assert "early_stopped/low_validation_success:1.0" in lines[-1]
    assert "[Early Stopping]" in proc.stdout and "Final validation metrics" not in proc.stdout
    assert not os.path.exists(os.path.join(root, "latest_checkpointed_iteration.txt"))
