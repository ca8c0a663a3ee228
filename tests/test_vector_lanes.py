"""The host kernels' vector lanes (csrc/kernels/host/lanes.h): the dense loops are compiled for
the x86-64 baseline, AVX2 and AVX-512, and ATEN_CPU_CAPABILITY caps the width as it caps
ATen's. Every width must give the same bits, and those must match CPU PyTorch's values."""

import os
import subprocess
import sys

import pytest
import torch

import torch_accel  # noqa: F401

CHILD = r"""
import random
import sys
import torch
import torch.nn.functional as F
import torch_accel  # noqa: F401

# Inputs from Python's generator: CPU's randn itself differs between widths.
rng = random.Random(0)
def randn(*shape):
    n = 1
    for s in shape:
        n *= s
    return torch.tensor([rng.gauss(0.0, 1.0) for _ in range(n)]).reshape(shape)

x = randn(4099) * 6
special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-40, -1e-40,
                        88.7, 89.0, -104.0, -110.0, 3.92, -3.94, 0.625, 0.921875])
x = torch.cat([x, special]).to("accel")
y = randn(x.numel()).to("accel")
rows = randn(33, 515).to("accel")
outs = []
for t in [x, x.bfloat16(), x.half()]:
    u = y.to(t.dtype)
    outs += [t.exp(), t.sigmoid(), F.silu(t), F.gelu(t), F.gelu(t, approximate="tanh"), t.tanh(),
             t.erf(), t * u + 1, t / (u + 3), t.clone().addcmul_(u, u, value=0.3),
             t.clone().lerp_(u, 0.3), torch.where(t > 0, t, u), t.clamp(-1, 1)]
for r in [rows, rows.bfloat16()]:
    outs += [r.softmax(-1), r.log_softmax(-1), F.layer_norm(r, (515,))]
    g_out = torch.ones_like(r)
    outs += [torch.ops.aten._softmax_backward_data(g_out, r.softmax(-1), -1, r.dtype)]
torch.accel.manual_seed(3)
outs += [torch.randn(5000, device="accel"), torch.rand(5000, device="accel")]
torch.accel.synchronize()
for o in outs:
    sys.stdout.write(o.cpu().contiguous().view(torch.uint8).numpy().tobytes().hex())
    sys.stdout.write("\n")
"""


def _run(capability: str) -> list[str]:
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def _widths() -> list[str]:
    have = torch.backends.cpu.get_cpu_capability().lower()
    return {"default": ["default"], "avx2": ["default", "avx2"]}.get(
        have, ["default", "avx2", "avx512"]
    )


def test_every_vector_width_gives_the_same_bits():
    widths = _widths()
    if len(widths) < 2:
        pytest.skip("this CPU has one vector width")
    results = {w: _run(w) for w in widths}
    base = results["default"]
    for w, got in results.items():
        assert len(got) == len(base)
        differing = [i for i, (a, b) in enumerate(zip(got, base)) if a != b]
        assert not differing, f"{w} differs from the baseline in outputs {differing}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_widest_lanes_match_cpu(dtype):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(70001, generator=g) * 4).to(dtype)
    y = torch.randn(70001, generator=g).to(dtype)
    dx = x.to("accel")
    for fn in [
        torch.exp,
        torch.sigmoid,
        torch.nn.functional.silu,
        torch.nn.functional.gelu,
        lambda t: t.tanh(),
        lambda t: t.clone().addcmul_(y.to(t.device), y.to(t.device), value=0.5),
        lambda t: t.clone().lerp_(y.to(t.device), 0.25),
    ]:
        torch.testing.assert_close(fn(dx).cpu(), fn(x))
