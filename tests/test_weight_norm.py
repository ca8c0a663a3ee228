"""Native _weight_norm_interface and its backward (torch.nn.utils.weight_norm and
parametrizations.weight_norm over dim 0 and the last dim) against CPU: output,
norms, gradients of the weight's direction and magnitude, non-contiguous weights, no fallback."""

import pytest
import torch
from torch.nn.utils import parametrizations, weight_norm

import torch_accel

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def run(wrap, dim, device, dtype, x):
    torch.manual_seed(0)
    # wav2vec2's positional conv: a grouped Conv1d with its weight normalised over dim 2.
    # Wrapped on CPU: computing the initial magnitude (norm_except_dim) uses aten::norm.
    conv = torch.nn.Conv1d(4, 6, 3, groups=2, padding=1)
    m = wrap(conv, name="weight", dim=dim).to(device=device, dtype=dtype)
    y = m(x.to(device, dtype))
    y.square().sum().backward()
    grads = [p.grad.float().cpu() for p in m.parameters()]
    return [y.detach().float().cpu(), *grads]


# bfloat16 is compared op by op below: through a whole bfloat16 conv its rounding compounds.
@pytest.mark.parametrize("dtype", [torch.float32])
@pytest.mark.parametrize("dim", [0, 2])
@pytest.mark.parametrize("wrap", [weight_norm, parametrizations.weight_norm])
def test_weight_norm_conv_matches_cpu(wrap, dim, dtype, monkeypatch):
    monkeypatch.setenv("TORCH_ACCEL_FALLBACK", "error")
    x = torch.randn(2, 4, 7, generator=torch.Generator().manual_seed(2))
    torch_accel.reset_fallback_counts()
    for got, want in zip(run(wrap, dim, "accel", dtype, x), run(wrap, dim, "cpu", dtype, x)):
        torch.testing.assert_close(got, want, **TOL[dtype])
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("dim", [0, 1])
def test_weight_norm_interface_non_contiguous(dim, dtype):
    gen = torch.Generator().manual_seed(1)
    v = torch.randn(5, 3, generator=gen).to(dtype).t()  # [3, 5], not contiguous
    g = (
        torch.randn(v.shape[0], 1, generator=gen).to(dtype)
        if dim == 0
        else torch.randn(1, v.shape[1], generator=gen).to(dtype)
    )
    gw = torch.randn(v.shape, generator=gen).to(dtype)
    torch_accel.reset_fallback_counts()

    def both(device):
        # CPU's backward takes only a contiguous v; accel's takes any.
        vd = (v if device == "accel" else v.contiguous()).to(device).requires_grad_()
        gd = g.to(device).requires_grad_()
        w, norms = torch._weight_norm_interface(vd, gd, dim)
        w.backward(gw.to(device))
        return w, norms, vd.grad, gd.grad

    for got, want in zip(both("accel"), both("cpu")):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got.cpu(), want.detach(), **TOL[dtype])
    assert torch_accel.fallback_counts() == {}
