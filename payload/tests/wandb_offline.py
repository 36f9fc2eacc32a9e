"""Reads W&B offline run files (`<dir>/wandb/offline-run-*/run-<id>.wandb`) for the tests: the
payload's pytest (test_train_distributed.py) and the orchestrator's campaign test (`python payload/tests/wandb_offline.py DIR`
prints one JSON object per run file). The file is a leveldb-style log of protobuf Records."""

import glob
import json
import os
import struct
import sys

from wandb.proto import wandb_internal_pb2

BLOCK = 32 * 1024  # the log's blocks; a record never starts in a block's last 6 bytes


def offline_records(path):
    """The protobuf Records of one offline run file, in order."""
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


def read_run(path) -> dict:
    """Run id, project, group, the steps logged (each with its metric keys) and the exit code."""
    out = {"file": path, "run_id": None, "project": None, "group": None, "steps": [], "keys": [], "exit_code": None}
    for record in offline_records(path):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            out.update(run_id=record.run.run_id, project=record.run.project, group=record.run.run_group)
        elif kind == "history":
            out["steps"].append(record.history.step.num)
            out["keys"].append(sorted(i.key or "/".join(i.nested_key) for i in record.history.item))
        elif kind == "exit":
            out["exit_code"] = record.exit.exit_code
    return out


def offline_runs(root) -> list[dict]:
    """Every offline run file under root/wandb, oldest first (the directory names start with the time)."""
    return [read_run(p) for p in sorted(glob.glob(os.path.join(root, "wandb", "offline-run-*", "run-*.wandb")))]


if __name__ == "__main__":
    print(json.dumps(offline_runs(sys.argv[1])))
