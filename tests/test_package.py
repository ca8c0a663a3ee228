"""Packaging: autoload through the torch.backends entry point, and the CLI."""

import importlib.metadata
import subprocess
import sys

import pytest

from conftest import ROOT, run_python


def _installed() -> bool:
    try:
        importlib.metadata.distribution("torch_accel")
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.skipif(
    not _installed(),
    reason="torch_accel is not installed in this environment "
    "(pip install --no-build-isolation -e .): no torch.backends entry point",
)
def test_import_torch_alone_loads_accel():
    proc = run_python(
        "import torch\nprint(torch.ones(2, device='accel').device, hasattr(torch, 'accel'))"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "accel:0 True"


def test_info_cli():
    proc = subprocess.run(
        [sys.executable, "-m", "torch_accel", "info"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "driver           host" in out
    assert "devices          2" in out
    assert "accel:1" in out and "capacity" in out
    assert "cuda plugin" in out


def test_host_driver_settings_from_environment():
    proc = run_python(
        "import torch, torch_accel\n"
        "print(torch.accel.device_count(), torch.accel.get_device_properties(0).total_memory)",
        env={"TORCH_ACCEL_HOST_DEVICES": "3", "TORCH_ACCEL_HOST_MEMORY": "256M"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["3", str(256 << 20)]
