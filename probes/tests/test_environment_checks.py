"""Each environment check on its own, in this process: what it finds when the contract is met, and the
failure {item, found, fix} when it is not."""

import json
import os
import shutil
import subprocess
import tempfile
import sys
import types

import pytest

from model_dir import write_model_dir
from ragen_probes import environment_checks as checks


def test_modules_found_with_versions_and_missing_ones_named():
    found, failures = checks.check_modules(["numpy", "ray", "no_such_module_xyz"])
    assert found["numpy"]["ok"] and found["numpy"]["version"] == __import__("numpy").__version__
    assert found["ray"]["version"] == __import__("ray").__version__
    assert [f["item"] for f in failures] == ["module:no_such_module_xyz"]
    assert "ModuleNotFoundError" in failures[0]["found"] and sys.executable in failures[0]["fix"]


def test_gpu_count_must_equal_gpus_per_node(monkeypatch):
    # A stand-in torch (this machine has neither torch nor GPUs): it reports 1 device where 2 are expected.
    torch = types.ModuleType("torch")
    torch.__version__ = "2.8.0+cu128"
    torch.version = types.SimpleNamespace(cuda="12.8")
    torch.cuda = types.SimpleNamespace(device_count=lambda: 1)
    monkeypatch.setitem(sys.modules, "torch", torch)
    info, failures = checks.check_gpus(2, ["0"])
    assert info["device_count"] == 1 and info["cuda_runtime"] == "12.8"
    assert [f["item"] for f in failures] == ["gpu:device_count"]
    assert "torch.cuda.device_count() = 1, expected trainer.nGpusPerNode = 2" in failures[0]["found"]
    torch.cuda = types.SimpleNamespace(device_count=lambda: 2)
    assert checks.check_gpus(2, ["0", "1"])[1] == []


def test_gpu_check_without_torch_names_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    info, failures = checks.check_gpus(1, ["0"])
    assert info["torch"] is None and failures[0]["item"] == "gpu:torch"


def test_model_directory_read_and_fingerprinted(tmp_path):
    path = write_model_dir(tmp_path)
    info, failures = checks.check_model(str(path))
    assert failures == [] and info["weight_files"] == 2 and info["model_type"] == "qwen2"
    assert info["revision"].startswith("sha256:") and len(info["revision"]) == 7 + 64
    # The fingerprint follows config.json and the index, nothing else.
    before = info["revision"]
    (path / "config.json").write_text('{"model_type": "qwen2", "hidden_size": 16}')
    assert checks.check_model(str(path))[0]["revision"] != before


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda p: (p / "config.json").unlink(), "config.json: FileNotFoundError"),
        (lambda p: [(p / n).unlink() for n in ("tokenizer.json", "tokenizer_config.json")], "no tokenizer file"),
        (lambda p: (p / "model-00002-of-00002.safetensors").unlink(), "names files that are missing: model-00002-of-00002.safetensors"),
    ],
)
def test_model_directory_problems_are_named(tmp_path, damage, expected):
    path = write_model_dir(tmp_path)
    damage(path)
    _, failures = checks.check_model(str(path))
    assert len(failures) == 1 and failures[0]["item"] == "model:readable" and expected in failures[0]["found"], failures


def test_model_path_that_is_not_a_directory(tmp_path):
    _, failures = checks.check_model(str(tmp_path / "absent"))
    assert failures[0]["item"] == "model:readable" and "is not a directory on this node" in failures[0]["found"]


def test_checkpoint_dir_written_fsynced_and_removed(tmp_path):
    info, failures = checks.check_checkpoint_dir(str(tmp_path / "run"), 0)
    assert failures == [] and info["writable"] and info["free_bytes"] > 0
    assert os.listdir(tmp_path / "run") == []  # the probe file is gone


def test_checkpoint_dir_free_space_floor(tmp_path):
    _, failures = checks.check_checkpoint_dir(str(tmp_path), 10**18)
    assert [f["item"] for f in failures] == ["checkpoint:free_space"]


SYSTEM_PYTHON = "/usr/bin/python3"  # the venv lies under /root, which uid 1000 cannot enter; the checks need only the stdlib


@pytest.mark.skipif(os.getuid() != 0 or not os.path.exists(SYSTEM_PYTHON), reason="needs root (to run the check as uid 1000) and /usr/bin/python3")
def test_checkpoint_dir_of_another_uid_is_eacces_with_owner():
    # As a uid-1000 image meets a run directory the (root) worker created 0755.
    root = tempfile.mkdtemp(prefix="env-probe-")
    try:
        os.chmod(root, 0o755)
        target = os.path.join(root, "run")
        os.mkdir(target, 0o755)
        code = (
            "import json; from ragen_probes import environment_checks as c; "
            f"print(json.dumps(c.check_checkpoint_dir({target!r}, 0)[1]))"
        )
        probes_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True, user=1000, group=1000, cwd=probes_dir, timeout=60)
        assert out.returncode == 0, out.stderr
        failures = json.loads(out.stdout)
        assert failures[0]["item"] == "checkpoint:writable"
        assert "uid 1000 gid 1000 cannot create, write and fsync a file" in failures[0]["found"]
        assert "owned by uid 0 gid 0, mode 0o755" in failures[0]["found"]
    finally:
        shutil.rmtree(root)


def test_entrypoint_file_in_working_directory(tmp_path):
    (tmp_path / "train.py").write_text("print('hi')\n")
    assert checks.check_entrypoint(["python", "train.py", "--config-name", "x"], str(tmp_path))[1] == []
    _, failures = checks.check_entrypoint(["python", "train.py"], str(tmp_path / "elsewhere"))
    assert failures[0]["item"] == "entrypoint" and "train.py does not exist in the working directory" in failures[0]["found"]


def test_entrypoint_module():
    assert checks.check_entrypoint(["python", "-m", "ragen_probes.environment"], "/")[1] == []
    _, failures = checks.check_entrypoint(["/usr/bin/python3", "-m", "no_such.trainer"], "/")
    assert failures[0]["found"].startswith("module no_such.trainer not found")
