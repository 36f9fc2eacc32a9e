"""The RAGEN conformance suite's inputs: the real config (found and checked by
conformance_location.py), and the product's argvs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conformance_location import REPO, RAGEN_CONFIG, VERL_CONFIG, ConformanceDataMissing, find_conformance_dir

__all__ = ["RAGEN_CONFIG", "VERL_CONFIG", "product_argvs", "require_conformance_dir"]


def require_conformance_dir() -> Path:
    """The folder, or a test failure (never a skip: the folder is an input of CI) saying what to set."""
    try:
        return find_conformance_dir()
    except ConformanceDataMissing as e:
        missing = str(e)
    pytest.fail(missing, pytrace=False)  # outside the except: the message alone, no chained traceback


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
