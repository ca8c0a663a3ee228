"""The losses composed of native ops against CPU: mse_loss, smooth_l1_loss and huber_loss
(csrc/aten/regression_loss_ops.cpp), binary_cross_entropy (csrc/aten/binary_cross_entropy_ops.cpp),
kl_div (over xlogy) and multi_margin_loss (csrc/aten/multi_margin_loss_ops.cpp): every
reduction, the loss and its gradient, bfloat16, non-contiguous inputs, out=, CPU's errors, and
no fallback."""

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


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_huber_loss_rounds_once_in_half_precision(dtype):
    # Computed in float and rounded once: rounding delta and each step to the dtype was off by
    # up to 2 ulps in float16 (OpInfo's delta=8.698 sample), where CPU computes in float.
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(8, 16, generator=g) * 20).to(dtype)
    b = (torch.randn(8, 16, generator=g) * 20).to(dtype)
    delta = 8.698115367693557
    torch_accel.reset_fallback_counts()
    got = F.huber_loss(a.to("accel"), b.to("accel"), reduction="none", delta=delta).cpu()
    exact = F.huber_loss(a.double(), b.double(), reduction="none", delta=delta)
    torch.testing.assert_close(got, exact.to(dtype), rtol=0, atol=0)
    if dtype == torch.float16:  # CPU's float16 kernel computes in float too
        torch.testing.assert_close(got, F.huber_loss(a, b, reduction="none", delta=delta))
    assert torch_accel.fallback_counts() == {}


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


def probabilities(dtype):
    # Non-contiguous, with the ends 0 and 1 (the clamped logs) among them.
    p = torch.rand(33, 6)
    p[0, 0], p[1, 1], p[2, 2] = 0.0, 1.0, 1e-30
    return p.to(dtype).t()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_and_gradient_match_cpu(weighted, reduction, dtype):
    x = probabilities(dtype).clamp(1e-3, 1 - 1e-3)  # a finite gradient
    t = probabilities(dtype).flip(0)
    w = torch.rand(6, 33).to(dtype) if weighted else None
    g = torch.randn(6, 33).to(dtype) if reduction == "none" else torch.tensor(1.7).to(dtype)
    xc = x.clone().requires_grad_()
    lc = F.binary_cross_entropy(xc, t, w, reduction=reduction)
    lc.backward(g)
    xa = x.to("accel").requires_grad_()
    wa = w.to("accel") if weighted else None
    torch_accel.reset_fallback_counts()
    la = F.binary_cross_entropy(xa, t.to("accel"), wa, reduction=reduction)
    la.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(la.detach().cpu(), lc.detach(), **TOL[dtype])
    torch.testing.assert_close(xa.grad.cpu(), xc.grad, **TOL[dtype])


def test_binary_cross_entropy_clamps_out_and_errors():
    x, t = probabilities(torch.float32), probabilities(torch.float32).flip(1)
    a = x.to("accel")
    # log(0) clamps at -100: finite losses at inputs 0 and 1.
    torch.testing.assert_close(
        F.binary_cross_entropy(a, t.to("accel"), reduction="none").cpu(),
        F.binary_cross_entropy(x, t, reduction="none"),
    )
    out = torch.empty(0, device="accel")
    torch._C._nn.binary_cross_entropy(a, t.to("accel"), None, 2, out=out)
    torch.testing.assert_close(out.cpu(), F.binary_cross_entropy(x, t, reduction="sum"))
    grad = torch.empty(0, device="accel")
    g = torch.randn(6, 33)
    torch.ops.aten.binary_cross_entropy_backward.grad_input(
        g.to("accel"), a, t.to("accel"), None, 0, grad_input=grad
    )
    torch.testing.assert_close(
        grad.cpu(), torch.ops.aten.binary_cross_entropy_backward(g, x, t, None, 0)
    )
    assert torch_accel.fallback_counts() == {}
    bad = [(1.5, 0.5, "input"), (float("nan"), 0.5, "input"), (0.5, -0.1, "target")]
    for bad_x, bad_t, what in bad:
        with pytest.raises(RuntimeError, match=f"all elements of {what} should be between 0 and 1"):
            F.binary_cross_entropy(
                torch.tensor([0.2, bad_x], device="accel"),
                torch.tensor([0.3, bad_t], device="accel"),
            )
    torch.testing.assert_close(F.binary_cross_entropy(a, a).cpu(), F.binary_cross_entropy(x, x))


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["none", "batchmean", "sum", "mean"])
def test_kl_div_and_gradient_match_cpu(reduction, log_target, dtype):
    x = torch.randn(33, 6).log_softmax(0).to(dtype).t()
    t = torch.rand(6, 33)
    t[0, :3] = 0.0  # 0 * log(0) = 0
    t = (t.log() if log_target else t).to(dtype)
    g = torch.randn(6, 33).to(dtype) if reduction == "none" else torch.tensor(0.8).to(dtype)
    xc, tc = x.clone().requires_grad_(), t.clone().requires_grad_()
    lc = F.kl_div(xc, tc, reduction=reduction, log_target=log_target)
    lc.backward(g)
    xa, ta = x.to("accel").requires_grad_(), t.to("accel").requires_grad_()
    torch_accel.reset_fallback_counts()
    la = F.kl_div(xa, ta, reduction=reduction, log_target=log_target)
    la.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(la.detach().cpu(), lc.detach(), equal_nan=True, **TOL[dtype])
    torch.testing.assert_close(xa.grad.cpu(), xc.grad, **TOL[dtype])
    torch.testing.assert_close(ta.grad.cpu(), tc.grad, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("p, weighted", [(1, False), (2, True)])
def test_multi_margin_loss_and_gradient_match_cpu(p, weighted, reduction, dtype):
    # Multiples of 1/4, non-contiguous: no margin lands near 0, where bfloat16 could flip it.
    x = (torch.randint(-8, 9, (7, 9)) / 4).to(dtype).t()
    y = torch.tensor([0, 6, 3, 3, 1, 5, 2, 4, 0])
    w = torch.rand(7).to(dtype) if weighted else None
    g = torch.randn(9).to(dtype) if reduction == "none" else torch.tensor(1.3).to(dtype)
    # CPU has no bfloat16 kernel (CUDA has): its reference is float32 from the same values.
    xc = x.float().clone().requires_grad_()
    wc = w.float() if weighted else None
    lc = F.multi_margin_loss(xc, y, p=p, margin=0.8, weight=wc, reduction=reduction)
    lc.backward(g.float())
    xa = x.to("accel").requires_grad_()
    wa = w.to("accel") if weighted else None
    torch_accel.reset_fallback_counts()
    la = F.multi_margin_loss(xa, y.to("accel"), p=p, margin=0.8, weight=wa, reduction=reduction)
    la.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(la.detach().cpu(), lc.detach().to(dtype), **TOL[dtype])
    torch.testing.assert_close(xa.grad.cpu(), xc.grad.to(dtype), **TOL[dtype])


def test_multi_margin_loss_unbatched_out_and_errors():
    x, y = torch.randn(3, 5), torch.tensor([0, 4, 2])
    a, t = x.to("accel"), y.to("accel")
    for reduction in ["none", "sum"]:
        xc, xa = x[1].clone().requires_grad_(), a[1].clone().requires_grad_()
        lc = F.multi_margin_loss(xc, y[1], reduction=reduction)
        la = F.multi_margin_loss(xa, t[1], reduction=reduction)
        assert la.shape == lc.shape
        torch.testing.assert_close(la.cpu(), lc)
        lc.backward()
        la.backward()
        torch.testing.assert_close(xa.grad.cpu(), xc.grad)
    out = torch.empty(0, device="accel")
    torch._C._nn.multi_margin_loss(a, t, 2, 0.5, None, 0, out=out)
    torch.testing.assert_close(out.cpu(), F.multi_margin_loss(x, y, 2, 0.5, reduction="none"))
    assert torch_accel.fallback_counts() == {}
    for args in [(a, torch.tensor([0, 5, 1], device="accel")), (a, t[:2]), (a[None], t)]:
        with pytest.raises(RuntimeError) as cpu:
            F.multi_margin_loss(*(v.cpu() for v in args))
        with pytest.raises(RuntimeError) as acc:
            F.multi_margin_loss(*args)
        assert str(acc.value) == str(cpu.value)
    with pytest.raises(RuntimeError, match="inconsistent weight size, expected 5 but got"):
        F.multi_margin_loss(a, t, weight=torch.ones(4, device="accel"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_and_gradient_match_cpu(reduction, dtype):
    # Multiples of 1/4 (no hinge near 0); rows with a repeated target, all targets, none.
    x = (torch.randint(-8, 9, (5, 4)) / 4).to(dtype).t()  # [4, 5], non-contiguous
    y = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [0, 1, 2, 3, 4], [-1, 2, 3, 0, 0]])
    g = torch.randn(4).to(dtype) if reduction == "none" else torch.tensor(0.9).to(dtype)
    xc = x.float().clone().requires_grad_()  # CPU has no bfloat16 kernel (CUDA has)
    lc = F.multilabel_margin_loss(xc, y, reduction=reduction)
    lc.backward(g.float())
    xa = x.to("accel").requires_grad_()
    torch_accel.reset_fallback_counts()
    la = F.multilabel_margin_loss(xa, y.to("accel"), reduction=reduction)
    la.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(la.detach().cpu(), lc.detach().to(dtype), **TOL[dtype])
    torch.testing.assert_close(xa.grad.cpu(), xc.grad.to(dtype), **TOL[dtype])
    _, is_target = torch.ops.aten.multilabel_margin_loss_forward(xa, y.to("accel"), 0)
    torch.testing.assert_close(
        is_target.cpu(), torch.ops.aten.multilabel_margin_loss_forward(xc, y, 0)[1].to(dtype)
    )
    for t in (torch.tensor([[0, 5, -1, 1, 2]] * 4), y[:, :3]):  # out of range, sizes
        with pytest.raises(RuntimeError) as cpu:
            F.multilabel_margin_loss(x.float(), t)
        with pytest.raises(RuntimeError) as acc:
            F.multilabel_margin_loss(xa, t.to("accel"))
        assert str(acc.value) == str(cpu.value)
