"""GPU health from nvidia-smi. No GPU here: a stand-in `nvidia-smi` script on PATH prints what a
real one prints for `--query-gpu=... --format=csv,noheader,nounits` (fields in gpu_health.FIELDS)."""

import stat

from ragen_probes import gpu_health

H100_ROWS = (
    "0, GPU-aaaa, NVIDIA H100 80GB HBM3, 41, 0, 1, 81559, 0, 5, 16, 0x0000000000000001\n"
    "1, GPU-bbbb, NVIDIA H100 80GB HBM3, 87, 100, 70000, 81559, 3, 4, 8, 0x0000000000000040\n"
)


def stand_in_nvidia_smi(tmp_path, body: str) -> str:
    exe = tmp_path / "nvidia-smi"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(tmp_path)


def test_no_nvidia_smi_records_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_health.nvidia_smi() is None


def test_rows_are_parsed_and_ecc_errors_and_throttling_are_findings(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", stand_in_nvidia_smi(tmp_path, f"printf '{H100_ROWS}'"))
    health = gpu_health.nvidia_smi()
    first, second = health["gpus"]
    assert first["name"] == "NVIDIA H100 80GB HBM3" and first["temperature.gpu"] == 41 and first["pcie.link.width.current"] == 16
    assert second["ecc.errors.uncorrected.volatile.total"] == 3
    assert health["findings"] == ["GPU 1 (GPU-bbbb): 3 uncorrected ECC errors",
                                  "GPU 1 (GPU-bbbb): clocks throttled (0x0000000000000040)"]


def test_a_driver_that_refuses_a_field_falls_back_to_the_core_fields(monkeypatch, tmp_path):
    # Like an old driver: any query naming the ECC field is refused; the core fields answer.
    script = ('case "$1" in *ecc*) echo \'Field "ecc.errors.uncorrected.volatile.total" is not a valid field to query.\'; exit 2;; esac\n'
              "printf '0, GPU-aaaa, Tesla T4, 50, [N/A], 100, 15360\\n'")
    monkeypatch.setenv("PATH", stand_in_nvidia_smi(tmp_path, script))
    health = gpu_health.nvidia_smi()
    assert health["gpus"] == [{"index": 0, "uuid": "GPU-aaaa", "name": "Tesla T4", "temperature.gpu": 50,
                               "utilization.gpu": None, "memory.used": 100, "memory.total": 15360}]
    assert health["findings"] == []


def test_a_failing_nvidia_smi_is_recorded_as_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", stand_in_nvidia_smi(tmp_path, "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'; exit 9"))
    assert gpu_health.nvidia_smi()["error"].startswith("nvidia-smi exited 9: NVIDIA-SMI has failed")
