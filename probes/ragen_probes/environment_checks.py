"""What the environment probe checks on one node. Plain functions: each returns what it found and,
when the image or the cluster misses the contract, a failure {item, found, fix}.

They run inside a Ray task pinned to the node (environment.py), so they see the node's Python, its
packages, its GPUs (the task holds all of them) and its mounts, as the trainer's workers will.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
import uuid

# Where a module's distribution is named differently from the module (importlib.metadata reads dists).
DIST_OF = {"hydra": "hydra-core", "flash_attn": "flash-attn", "sklearn": "scikit-learn", "yaml": "pyyaml"}

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")
WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
SINGLE_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def failure(item: str, found: str, fix: str) -> dict:
    return {"item": item, "found": found, "fix": fix}


def python_info() -> dict:
    return {"version": ".".join(str(v) for v in sys.version_info[:3]), "executable": sys.executable}


def module_version(name: str, module) -> str | None:
    for dist in (DIST_OF.get(name), name, name.replace("_", "-")):
        if not dist:
            continue
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    version = getattr(module, "__version__", None)
    return str(version) if version is not None else None


def check_modules(names: list[str]) -> tuple[dict, list[dict]]:
    found, failures = {}, []
    for name in names:
        try:
            module = importlib.import_module(name)
        except BaseException as err:  # an import can raise anything (a CUDA library, a SystemExit)
            reason = f"{type(err).__name__}: {err}".strip()
            found[name] = {"ok": False, "error": reason[:500]}
            failures.append(failure(f"module:{name}", reason[:500], f"install {name} in the image's python ({sys.executable}), or remove it from imageContract.requires"))
            continue
        found[name] = {"ok": True, "version": module_version(name, module)}
    return found, failures


def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [l.strip() for l in out.stdout.splitlines() if l.strip()]
    return lines[0] if out.returncode == 0 and lines else None


def check_gpus(expected: int, ray_gpu_ids: list[str]) -> tuple[dict, list[dict]]:
    """On a node that has GPUs: torch sees exactly `expected` of them (the task holds all of the node's)."""
    info = {"expected": expected, "ray_gpu_ids": ray_gpu_ids, "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    try:
        import torch
    except BaseException as err:
        info["torch"] = None
        fix = "install torch with CUDA in the image (RAGEN's setup installs it with verl's install script)"
        return info, [failure("gpu:torch", f"torch cannot be imported: {type(err).__name__}: {err}"[:500], fix)]
    info["torch"] = torch.__version__
    info["cuda_runtime"] = getattr(torch.version, "cuda", None)
    info["driver"] = _driver_version()
    try:
        count = int(torch.cuda.device_count())
    except BaseException as err:
        count, info["error"] = 0, f"{type(err).__name__}: {err}"[:500]
    info["device_count"] = count
    if count != expected:
        why = info.get("error") or (f"torch {torch.__version__} built without CUDA" if not info["cuda_runtime"] else f"CUDA runtime {info['cuda_runtime']}, driver {info['driver']}")
        return info, [failure("gpu:device_count", f"torch.cuda.device_count() = {count}, expected trainer.nGpusPerNode = {expected} ({why})",
                              "give each worker Pod nGpusPerNode GPUs (resources.limits nvidia.com/gpu) and a torch build whose CUDA runtime the node's driver supports")]
    return info, []


def model_fingerprint(path: str) -> tuple[str | None, list[str]]:
    """sha256 over `<name> <sha256 of file>` lines of config.json and the weight index (or the weight file names and sizes)."""
    parts, files = [], []
    for name in ("config.json", *WEIGHT_INDEXES):
        full = os.path.join(path, name)
        if os.path.isfile(full):
            with open(full, "rb") as f:
                parts.append(f"{name} {hashlib.sha256(f.read()).hexdigest()}")
            files.append(name)
    if not any(n in files for n in WEIGHT_INDEXES):
        for name in SINGLE_WEIGHTS:
            full = os.path.join(path, name)
            if os.path.isfile(full):
                parts.append(f"{name} size={os.path.getsize(full)}")
                files.append(name)
    if not parts:
        return None, files
    return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest(), files


def check_model(path: str) -> tuple[dict, list[dict]]:
    """The model directory: config.json parses, a tokenizer file exists, every weight file is readable."""
    info: dict = {"path": path}
    fix_dir = "stage the model (a Hugging Face directory: config.json, tokenizer files, weights) on storage every node mounts, readable by the Pods' uid, and set model.path to it"
    if not os.path.isdir(path):
        return info, [failure("model:readable", f"{path} is not a directory on this node", fix_dir)]
    problems = []
    try:
        with open(os.path.join(path, "config.json")) as f:
            info["model_type"] = json.load(f).get("model_type")
    except (OSError, ValueError) as err:
        problems.append(f"config.json: {type(err).__name__}: {err}")
    if not any(os.path.isfile(os.path.join(path, n)) for n in TOKENIZER_FILES):
        problems.append(f"no tokenizer file (one of {', '.join(TOKENIZER_FILES)})")
    weights = _weight_files(path, problems)
    unreadable = [w for w in weights if not os.access(os.path.join(path, w), os.R_OK)]
    if unreadable:
        problems.append(f"weight files not readable by uid {os.getuid()}: {', '.join(unreadable[:5])}")
    info["weight_files"] = len(weights)
    info["revision"], _ = model_fingerprint(path)
    if problems:
        return info, [failure("model:readable", f"{path}: " + "; ".join(problems), fix_dir)]
    return info, []


def _weight_files(path: str, problems: list[str]) -> list[str]:
    for index in WEIGHT_INDEXES:
        full = os.path.join(path, index)
        if os.path.isfile(full):
            try:
                with open(full) as f:
                    names = sorted(set(json.load(f)["weight_map"].values()))
            except (OSError, ValueError, KeyError, AttributeError) as err:
                problems.append(f"{index}: {type(err).__name__}: {err}")
                return []
            missing = [n for n in names if not os.path.isfile(os.path.join(path, n))]
            if missing:
                problems.append(f"{index} names files that are missing: {', '.join(missing[:5])}")
            return [n for n in names if n not in missing]
    single = [n for n in SINGLE_WEIGHTS if os.path.isfile(os.path.join(path, n))]
    if not single:
        problems.append(f"no weights (one of {', '.join(WEIGHT_INDEXES + SINGLE_WEIGHTS)})")
    return single


def check_checkpoint_dir(path: str, min_free_bytes: int) -> tuple[dict, list[dict]]:
    """This uid creates, writes and fsyncs a file where verl will save, then removes it; free space there."""
    info: dict = {"path": path, "uid": os.getuid(), "gid": os.getgid()}
    failures = []
    probe = os.path.join(path, f".env-probe-{uuid.uuid4().hex}")
    try:
        os.makedirs(path, exist_ok=True)
        started = time.perf_counter()
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        try:
            os.write(fd, b"ragen environment probe\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.unlink(probe)
        info["write_fsync_ms"] = round((time.perf_counter() - started) * 1000, 3)
        info["writable"] = True
    except OSError as err:
        info["writable"] = False
        owner = _owner(path)
        failures.append(failure("checkpoint:writable", f"uid {os.getuid()} gid {os.getgid()} cannot create, write and fsync a file in {path}: {err.strerror or err} ({owner})",
                                "make the run's directory writable by the Pods' uid/gid (kuberay.securityContext runAsUser/fsGroup, or a group-writable directory)"))
    try:
        usage = shutil.disk_usage(path if os.path.isdir(path) else os.path.dirname(path) or "/")
        info["free_bytes"] = usage.free
        if usage.free < min_free_bytes:
            failures.append(failure("checkpoint:free_space", f"{usage.free / 1e9:.2f} GB free under {path}, need {min_free_bytes / 1e9:.2f} GB (storage.checkpointSizeGb)",
                                    "free space on the checkpoint volume or use a larger one"))
    except OSError as err:
        info["free_bytes"] = None
        failures.append(failure("checkpoint:free_space", f"cannot read free space of {path}: {err}", "mount the checkpoint volume on every node"))
    return info, failures


def _owner(path: str) -> str:
    probe = path
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    try:
        st = os.stat(probe)
        return f"{probe} is owned by uid {st.st_uid} gid {st.st_gid}, mode {oct(st.st_mode & 0o7777)}"
    except OSError:
        return "owner unknown"


def check_entrypoint(argv: list[str], cwd: str) -> tuple[dict, list[dict]]:
    """`python file.py …` needs file.py in the job's working directory; `python -m pkg.mod` needs the module to be found."""
    info: dict = {"cwd": cwd}
    args = argv[1:] if argv and os.path.basename(argv[0]).startswith("python") else argv
    if len(args) >= 2 and args[0] == "-m":
        import importlib.util

        info["module"] = args[1]
        try:
            found = importlib.util.find_spec(args[1]) is not None
        except (ImportError, ValueError):
            found = False
        info["found"] = found
        if not found:
            return info, [failure("entrypoint", f"module {args[1]} not found by {sys.executable}", "install the trainer in the image, or fix trainer.entrypoint")]
        return info, []
    script = next((a for a in args if not a.startswith("-")), None)
    if script is None:
        return info, []
    info["file"] = script
    info["found"] = os.path.isfile(os.path.join(cwd, script))
    if not info["found"]:
        return info, [failure("entrypoint", f"{script} does not exist in the working directory {cwd}",
                              f"set the image's WORKDIR to the directory holding {script} (RAGEN's checkout), or give trainer.entrypoint an absolute path")]
    return info, []
