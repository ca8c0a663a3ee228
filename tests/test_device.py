"""Devices: count, selection, properties, torch.accelerator routing, generated methods."""

import pytest
import torch

import torch_accel


def test_registered_as_accel():
    assert torch._C._get_privateuse1_backend_name() == "accel"
    assert torch.accel.is_available()
    assert torch.accel.device_count() == 2  # the host driver's default
    assert torch_accel.driver() == "host"


def test_set_device_and_context():
    torch.accel.set_device(1)
    assert torch.accel.current_device() == 1
    assert torch.empty(2, device="accel").device == torch.device("accel", 1)
    with torch.accel.device(0):
        assert torch.accel.current_device() == 0
        assert torch.zeros(1, device="accel").device.index == 0
    assert torch.accel.current_device() == 1


def test_properties():
    p = torch.accel.get_device_properties(0)
    free, total = torch.accel.mem_get_info(0)
    assert p.total_memory == total > 0
    assert 0 < free <= total
    assert "accel" in torch.accel.get_device_name(0)
    assert torch.accel.get_device_capability(0) == (p.major, p.minor)


def test_torch_accelerator_routes_here():
    assert torch.accelerator.current_accelerator() == torch.device("accel")
    assert torch.accelerator.device_count() == torch.accel.device_count()
    torch.accelerator.set_device_index(1)
    assert torch.accel.current_device() == 1
    x = torch.ones(1024, device="accel:1")
    assert torch.accelerator.memory_allocated(1) >= 4096
    torch.accelerator.synchronize()
    del x


def test_generated_methods():
    x = torch.arange(6.0).reshape(2, 3)
    a = x.accel()
    assert a.is_accel and not x.is_accel
    assert a.device.type == "accel"
    m = torch.nn.Linear(3, 2).accel()
    assert next(m.parameters()).is_accel
    s = torch.UntypedStorage(8).accel()
    assert s.is_accel
    torch.testing.assert_close(a.cpu(), x)


def test_bad_device_index_is_a_clear_error_and_state_survives():
    with pytest.raises(torch.AcceleratorError, match="Invalid device index accel:7"):
        torch.empty(3, device="accel:7")
    with pytest.raises(torch.AcceleratorError, match="Invalid device index accel:5"):
        torch.accel.set_device(5)
    assert torch.accel.current_device() == 0
    assert torch.ones(3, device="accel").sum().item() == 3


_POOL_THREADS = """
import glob, torch, torch_accel
x = torch.randn(1 << 22)
y = (x.to("accel") * 2 + 1).sum(0).cpu()
assert torch.allclose(y, (x * 2 + 1).sum(0), rtol=1e-4), (y, (x * 2 + 1).sum(0))
names = [open(p).read().strip() for p in glob.glob("/proc/self/task/*/comm")]
print(names.count("accel-pool"))
"""


@pytest.mark.parametrize(
    "env, helpers",
    [
        ({"OMP_NUM_THREADS": "1"}, 0),  # as torchrun sets it for several ranks on one machine
        ({"OMP_NUM_THREADS": "3"}, 2),
        ({"OMP_NUM_THREADS": "1", "TORCH_ACCEL_NUM_THREADS": "2"}, 1),
    ],
)
def test_host_thread_pool_follows_omp_num_threads(env, helpers):
    import os
    import subprocess
    import sys

    if torch_accel.driver() != "host":
        pytest.skip("the host driver's thread pool")
    full = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_NUM_THREADS", "TORCH_ACCEL_NUM_THREADS")
    }
    proc = subprocess.run(
        [sys.executable, "-c", _POOL_THREADS],
        env={**full, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) == helpers
