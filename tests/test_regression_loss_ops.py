"""mse_loss, smooth_l1_loss and huber_loss (csrc/aten/regression_loss_ops.cpp) against CPU:
every reduction, the loss and its gradient, bfloat16, broadcast-free shapes, out=, and no
fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

LOSSES = {
    "mse": lambda a, b, r: F.mse_loss(a, b, reduction=r),
    "smooth_l1": lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.7),
    "smooth_l1_beta0": lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.0),
    "huber": lambda a, b, r: F.huber_loss(a, b, reduction=r, delta=0.6),
}
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
}


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_and_gradient_match_cpu(name, reduction, dtype):
    a = (torch.randn(6, 33) * 1.5).to(dtype)
    b = torch.randn(6, 33).to(dtype)
    fn = LOSSES[name]
    ac = a.clone().requires_grad_()
    lc = fn(ac, b, reduction)
    g = torch.randn(lc.shape).to(dtype)
    lc.backward(g)
    aa = a.to("accel").requires_grad_()
    torch_accel.reset_fallback_counts()
    la = fn(aa, b.to("accel"), reduction)
    la.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(la.detach().cpu(), lc.detach(), **TOL[dtype])
    torch.testing.assert_close(aa.grad.cpu(), ac.grad, **TOL[dtype])


def test_out_and_bad_arguments():
    a, b = torch.randn(5, 4), torch.randn(5, 4)
    out = torch.empty(0, device="accel")
    torch._C._nn.mse_loss(a.to("accel"), b.to("accel"), 0, out=out)
    torch.testing.assert_close(out.cpu(), F.mse_loss(a, b, reduction="none"))
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(a.to("accel"), b.to("accel"), beta=-1.0)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(a.to("accel"), b.to("accel"), delta=0.0)
    assert torch_accel.fallback_counts() == {}
