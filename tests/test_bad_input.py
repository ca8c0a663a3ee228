"""Bad input raises a clear PyTorch error and leaves the process, allocator and streams usable.
Each case runs in a fresh interpreter, so a crash counts as a failure."""
import pytest

from conftest import run_python

CASES = {
    "device index past device_count": (
        "torch.ones(2, device='accel:9')",
        "IndexError|RuntimeError", "Invalid device index accel:9"),
    "cpu tensor mixed with accel tensor": (
        "torch.ones(3, device='accel') + torch.ones(3)",
        "RuntimeError", "Expected all tensors to be on the same device"),
    "negative size": (
        "torch.empty(-2, 3, device='accel')",
        "RuntimeError", "negative dimension"),
    "allocation past capacity": (
        "torch.empty(torch.accel.get_device_properties(0).total_memory * 2, dtype=torch.uint8, device='accel')",
        "OutOfMemoryError", "Tried to allocate"),
}

TEMPLATE = """
import torch, torch_accel
keep = torch.arange(10.0, device='accel')
try:
    {stmt}
    print('NO ERROR')
except Exception as e:
    print('TYPE', type(e).__name__)
    print('MSG', str(e).replace(chr(10), ' '))
# everything still works afterwards
s = torch.accel.Stream()
with torch.accel.stream(s):
    y = torch.ones(1000, device='accel') * 2
s.synchronize()
print('OK', (keep.cpu() == torch.arange(10.0)).all().item(), y.cpu().sum().item())
"""


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name):
    stmt, types, message = CASES[name]
    proc = run_python(TEMPLATE.format(stmt=stmt))
    assert proc.returncode == 0, f"crashed: {proc.stderr[-2000:]}"
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert "NO" not in lines, f"{name}: no error raised"
    assert lines["TYPE"] in types.split("|"), lines
    assert message in lines["MSG"], lines["MSG"]
    assert lines["OK"] == "True 2000.0"
