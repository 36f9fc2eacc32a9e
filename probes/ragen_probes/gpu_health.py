"""A node's GPU health as `nvidia-smi` reports it, for the manifest: where a run's GPUs were hot,
throttled, on a narrowed PCIe link or counting uncorrected ECC errors. None where the image has no
nvidia-smi (CPU nodes; images without the driver's tools): nothing is guessed.
"""

from __future__ import annotations

import shutil
import subprocess

FIELDS = ("index", "uuid", "name", "temperature.gpu", "utilization.gpu", "memory.used", "memory.total",
          "ecc.errors.uncorrected.volatile.total", "pcie.link.gen.current", "pcie.link.width.current",
          "clocks_throttle_reasons.active")


def parse(csv: str, fields: tuple = FIELDS) -> list[dict]:
    """nvidia-smi's `--format=csv,noheader,nounits` rows as dicts; numbers as numbers, "[N/A]" as None."""
    gpus = []
    for line in csv.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields):
            continue
        gpu = {}
        for field, cell in zip(fields, cells):
            if cell.startswith("[") or cell in ("N/A", ""):
                gpu[field] = None
            elif field in ("uuid", "name", "clocks_throttle_reasons.active"):
                gpu[field] = cell
            else:
                try:
                    gpu[field] = float(cell) if "." in cell else int(cell)
                except ValueError:
                    gpu[field] = cell
        gpus.append(gpu)
    return gpus


def findings(gpus: list[dict]) -> list[str]:
    """What a person should look at: uncorrected ECC errors since boot and active throttling."""
    out = []
    for g in gpus:
        if (g.get("ecc.errors.uncorrected.volatile.total") or 0) > 0:
            out.append(f"GPU {g['index']} ({g['uuid']}): {g['ecc.errors.uncorrected.volatile.total']} uncorrected ECC errors")
        reasons = g.get("clocks_throttle_reasons.active")
        if isinstance(reasons, str) and reasons not in ("0x0000000000000000", "0x0000000000000001"):  # 0x1: idle
            out.append(f"GPU {g['index']} ({g['uuid']}): clocks throttled ({reasons})")
    return out


CORE_FIELDS = FIELDS[:7]  # every nvidia-smi knows these; the rest are newer or renamed on some drivers


def _query(exe: str, fields: tuple, timeout_s: float) -> subprocess.CompletedProcess:
    return subprocess.run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
                          capture_output=True, text=True, timeout=timeout_s)


def nvidia_smi(timeout_s: float = 15.0) -> dict | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        fields = FIELDS
        proc = _query(exe, fields, timeout_s)
        if proc.returncode != 0:  # e.g. a driver that does not know a field: the core ones still say much
            fields = CORE_FIELDS
            proc = _query(exe, fields, timeout_s)
    except (OSError, subprocess.TimeoutExpired) as err:
        return {"error": f"nvidia-smi: {type(err).__name__}: {err}"}
    if proc.returncode != 0:
        return {"error": f"nvidia-smi exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:300]}"}
    gpus = parse(proc.stdout, fields)
    return {"gpus": gpus, "findings": findings(gpus)}
