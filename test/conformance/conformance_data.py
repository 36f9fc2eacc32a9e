"""The RAGEN conformance suite's inputs: the real config's location, and the product's argvs.

The real configuration (RAGEN's `config/` and verl's `verl/trainer/config/`) is an input of CI, not
part of this repository: $RAGEN_CONFORMANCE_DIR, else `shared/conformance` in the repository's parent
or any directory above it, else the workplace's shared folder (/work/shared/conformance, where a clone
made outside /work still finds it). Without it every test here fails, naming the variable.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKPLACE_SHARED = Path("/work/shared/conformance")
RAGEN_CONFIG = "ragen-20daedc/config"
VERL_CONFIG = "verl-d62da49/verl/trainer/config"


def find_conformance_dir() -> Path | None:
    explicit = os.environ.get("RAGEN_CONFORMANCE_DIR")
    if explicit:
        return Path(explicit)
    for parent in [REPO.parent, *REPO.parent.parents]:
        candidate = parent / "shared" / "conformance"
        if candidate.is_dir():
            return candidate
    return WORKPLACE_SHARED if WORKPLACE_SHARED.is_dir() else None


def require_conformance_dir() -> Path:
    """The folder, or a test failure (never a skip: the folder is an input of CI) naming the variable."""
    found = find_conformance_dir()
    how = (
        f"RAGEN_CONFORMANCE_DIR={os.environ['RAGEN_CONFORMANCE_DIR']}"
        if os.environ.get("RAGEN_CONFORMANCE_DIR")
        else f"no shared/conformance in {REPO.parent} or above it, nor {WORKPLACE_SHARED}"
    )
    if found is None or not (found / RAGEN_CONFIG).is_dir() or not (found / VERL_CONFIG).is_dir():
        pytest.fail(
            f"RAGEN's real Hydra configuration is missing ({how}): set RAGEN_CONFORMANCE_DIR to a folder "
            f"holding {RAGEN_CONFIG}/ and {VERL_CONFIG}/ (see shared/conformance/README.md)",
            pytrace=False,
        )
    return found


def _print_argvs() -> dict:
    """The product's own argvs (test/conformance/print-argvs.ts), built once per session."""
    out = subprocess.run(
        ["node", "--import", "tsx", "test/conformance/print-argvs.ts"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"print-argvs.ts failed ({out.returncode}):\n{out.stderr[-4000:]}")
    return json.loads(out.stdout)


_ARGVS: dict | None = None


def product_argvs() -> dict:
    global _ARGVS
    if _ARGVS is None:
        _ARGVS = _print_argvs()
    return _ARGVS
