"""all / any / isposinf / isneginf on accel vs CPU (native: no fallback)."""

import pytest
import torch

import torch_accel

INF = float("inf")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_all_any_every_form(dtype):
    x = torch.tensor([[1, 0, 3], [2, 5, 7]]).to(dtype)
    a = x.to("accel")
    forms = [
        lambda t: t.all(),
        lambda t: t.any(),
        lambda t: t.all(1),
        lambda t: t.any(0),
        lambda t: t.all(0, keepdim=True),
        lambda t: t.any(dim=(0, 1)),
        lambda t: torch.zeros_like(t).any(),
        lambda t: torch.ones_like(t).all(1),
    ]
    for form in forms:
        assert torch.equal(form(a).cpu(), form(x))
    out = torch.empty(0, dtype=torch.bool, device="accel")
    torch.all(a, 1, out=out)
    assert torch.equal(out.cpu(), x.all(1))
    assert torch_accel.fallback_counts() == {}


def test_signed_infinities():
    x = torch.tensor([1.0, -INF, INF, float("nan"), 0.0])
    for f in (torch.isneginf, torch.isposinf):
        assert torch.equal(f(x.to("accel")).cpu(), f(x))
        assert torch.equal(f(x.to("accel", torch.bfloat16)).cpu(), f(x.bfloat16()))
    i = torch.arange(4)
    assert torch.equal(torch.isneginf(i.to("accel")).cpu(), torch.isneginf(i))
    assert torch_accel.fallback_counts() == {}
