"""renorm (csrc/aten/renorm_ops.cpp) against CPU: every floating dtype, p and dim, the three
forms, slices under maxnorm left alone, its gradient, and CPU's errors."""

import re

import pytest
import torch

import torch_accel


@pytest.fixture(autouse=True)
def no_fallback():
    torch_accel.reset_fallback_counts()
    yield
    assert torch_accel.fallback_counts() == {}


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
def test_renorm_matches_cpu(dtype, p):
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(4, 5, 3, generator=g) * torch.tensor([0.1, 1.0, 3.0])).to(dtype)
    tol = {} if dtype in (torch.float32, torch.float64) else dict(atol=1e-2, rtol=1e-2)
    for dim in [0, 1, -1]:
        expected = x.renorm(p, dim, 1.5)
        torch.testing.assert_close(x.to("accel").renorm(p, dim, 1.5).cpu(), expected, **tol)
        a = x.to("accel").transpose(0, 1).contiguous().transpose(0, 1)
        a.renorm_(p, dim, 1.5)
        torch.testing.assert_close(a.cpu(), expected, **tol)
        out = torch.empty(0, dtype=dtype, device="accel")
        torch.renorm(x.to("accel"), p, dim, 1.5, out=out)
        torch.testing.assert_close(out.cpu(), expected, **tol)


def test_slices_within_maxnorm_are_unchanged_and_the_others_reach_it():
    x = torch.tensor([[0.3, 0.4], [3.0, 4.0], [0.0, 0.0]], device="accel")
    y = x.renorm(2, 0, 1.0)
    assert torch.equal(y[0].cpu(), x[0].cpu())
    assert torch.equal(y[2].cpu(), x[2].cpu())
    torch.testing.assert_close(y[1].norm().cpu(), torch.tensor(1.0))
    torch.testing.assert_close(y.cpu(), x.cpu().renorm(2, 0, 1.0))


def test_renorm_gradient_matches_cpu():
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1)) * 2
    xc = x.clone().requires_grad_()
    xa = x.to("accel").requires_grad_()
    w = torch.randn(6, 4)
    (xc.renorm(2, 1, 1.0) * w).sum().backward()
    (xa.renorm(2, 1, 1.0) * w.to("accel")).sum().backward()
    torch.testing.assert_close(xa.grad.cpu(), xc.grad)


@pytest.mark.parametrize(
    "args",
    [(1 + 1j, 0, 1.0), (0, 0, 1.0), (2, 0, -1.0), (2, 5, 1.0), (2, 0, 1j)],
    ids=["complex p", "zero p", "negative maxnorm", "bad dim", "complex maxnorm"],
)
def test_bad_arguments_raise_cpus_error(args):
    x = torch.randn(4, 5)
    with pytest.raises((RuntimeError, IndexError)) as cpu:
        x.renorm(*args)
    with pytest.raises(cpu.type, match=re.escape(str(cpu.value)[:40])):
        x.to("accel").renorm(*args)
    with pytest.raises(RuntimeError, match="at least 2 dimensions, got 1"):
        torch.ones(3, device="accel").renorm(2, 0, 1.0)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float"):
        torch.renorm(
            x.to("accel"), 2, 0, 1.0, out=torch.empty(4, 5, dtype=torch.float64, device="accel")
        )
    torch.testing.assert_close(x.to("accel").renorm(2, 0, 1.0).cpu(), x.renorm(2, 0, 1.0))
