"""trainer.logger wandb, offline: a campaign's two attempts (the first fails after a checkpoint, the
second resumes from it) with the orchestrator's W&B environment write one W&B run: one run id, the
steps continuing, the API key nowhere in the run's files."""

import glob
import os
import struct
import subprocess
import sys

from wandb.proto import wandb_internal_pb2

KEY = "wandb-api-key-never-written-7f3a"
BLOCK = 32 * 1024  # the .wandb file is a leveldb-style log: 32 KiB blocks of framed records


def offline_records(path):
    """The protobuf Records of one offline run file (`run-<id>.wandb`), in order."""
    data = open(path, "rb").read()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    pos, pending = 7, b""
    while pos + 7 <= len(data):
        if BLOCK - pos % BLOCK < 7:  # a block's tail too short for a header is padding
            pos += BLOCK - pos % BLOCK
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind == 0:
            continue
        pending = chunk if kind in (1, 2) else pending + chunk  # 1 full, 2 first, 3 middle, 4 last
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            yield record
            pending = b""


def read_run(path):
    run, steps, exit_code = None, [], None
    for record in offline_records(path):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run = record.run
        elif kind == "history":
            items = {i.key or "/".join(i.nested_key): i.value_json for i in record.history.item}
            assert "critic/score/mean" in items or "val-env/CoordSokoban/success" in items, items
            steps.append(record.history.step.num)
        elif kind == "exit":
            exit_code = record.exit.exit_code
    return run, steps, exit_code


def test_two_attempts_of_a_campaign_write_one_offline_run(ray_cluster, tmp_path):
    root = str(tmp_path / "campaign-ckpt")  # a campaign's attempts share one checkpoint dir
    env = dict(
        os.environ,
        WANDB_MODE="offline",
        WANDB_RUN_ID="camp-7",
        WANDB_RESUME="allow",
        WANDB_RUN_GROUP="sweep-3",
        WANDB_PROJECT="sokoban-campaigns",
        WANDB_API_KEY=KEY,
        WANDB_SILENT="true",
    )
    args = [
        "--config-name", "_2_sokoban", f"+ray_kwargs.ray_init.address={ray_cluster}", "trainer.nnodes=2",
        f"trainer.default_local_dir={root}", "trainer.total_training_steps=6", "trainer.save_freq=2",
        "trainer.test_freq=3", "trainer.logger=['console','wandb']", "es_manager.val.env_groups=16",
    ]

    def attempt(*extra):
        return subprocess.run([sys.executable, "-m", "ragen_toy.train", *args, *extra], capture_output=True, text=True,
                              timeout=180, cwd=tmp_path, env=env)

    first = attempt("fault.exit_after_step=3")  # fails after step 3; its last checkpoint is step 2
    assert first.returncode == 1 and "fault injection" in first.stderr, first.stderr[-3000:]
    second = attempt("trainer.resume_mode=resume_path", f"trainer.resume_from_path={root}/global_step_2")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Resumed from checkpoint" in second.stdout

    files = sorted(glob.glob(os.path.join(root, "wandb", "offline-run-*", "run-*.wandb")))
    assert len(files) == 2, files  # one file per attempt (offline mode cannot append), one run id
    (run1, steps1, exit1), (run2, steps2, exit2) = map(read_run, files)
    for run in (run1, run2):
        assert (run.run_id, run.project, run.run_group) == ("camp-7", "sokoban-campaigns", "sweep-3")
    assert steps1 == [0, 1, 2, 3] and exit1 == 1  # val before train, three steps, then the fault
    # The resumed attempt starts at its checkpoint (its validation before training) and goes on.
    assert steps2 == [2, 3, 4, 5, 6] and exit2 == 0
    assert sorted(set(steps1) | set(steps2)) == list(range(7))

    for path in glob.glob(os.path.join(root, "wandb", "**", "*"), recursive=True):
        if os.path.isfile(path):
            assert KEY.encode() not in open(path, "rb").read(), f"the API key is in {path}"
    assert KEY not in first.stdout + first.stderr + second.stdout + second.stderr
