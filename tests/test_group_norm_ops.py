"""Native group norm (native_group_norm and its backward) against CPU: values, mean and rstd,
gradients of input, weight and bias, with and without affine parameters, bfloat16 with float
parameters, bad input."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def run(device, x, groups, affine, dtype, pdtype):
    g = torch.Generator().manual_seed(1)
    c = x.shape[1]
    params = [(torch.rand(c, generator=g) + 0.5), torch.randn(c, generator=g)] if affine else []
    params = [p.to(device, pdtype).requires_grad_() for p in params]
    xd = x.to(device, dtype).detach().requires_grad_()
    y = F.group_norm(xd, groups, *params, eps=1e-5)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(2)).to(device, dtype)
    (y * gy).sum().backward()
    return [t.detach().cpu() for t in [y, xd.grad] + [p.grad for p in params]]


@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 4), 3), ((3, 8, 7), 8), ((2, 4, 3, 3), 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_matches_cpu(shape, groups, affine):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 3 + 1
    got = run("accel", x, groups, affine, torch.float32, torch.float32)
    want = run("cpu", x, groups, affine, torch.float32, torch.float32)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    no_fallback()


def test_group_norm_statistics_match_cpu():
    x = torch.randn(2, 6, 5, generator=torch.Generator().manual_seed(0))
    w, b = torch.rand(6) + 0.5, torch.randn(6)
    want = torch.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5)
    got = torch.native_group_norm(x.to("accel"), w.to("accel"), b.to("accel"), 2, 6, 5, 3, 1e-5)
    for a, e in zip(got, want):
        assert a.shape == e.shape and a.dtype == e.dtype
        torch.testing.assert_close(a.cpu(), e, rtol=1e-5, atol=1e-5)
    no_fallback()


@pytest.mark.parametrize("pdtype", [torch.bfloat16, torch.float32])
def test_group_norm_bfloat16(pdtype):
    x = torch.randn(2, 6, 4, 4, generator=torch.Generator().manual_seed(0))
    got = run("accel", x, 3, True, torch.bfloat16, pdtype)
    want = run("cpu", x, 3, True, torch.bfloat16, pdtype)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=2e-2, atol=5e-2)
    no_fallback()


def test_group_norm_bad_groups_raise_like_cpu():
    x = torch.randn(2, 6, 3)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(x, 4)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(x.to("accel"), 4)
    for device in ("cpu", "accel"):  # F.group_norm itself divides by the group count first
        with pytest.raises(RuntimeError, match="greater than 0"):
            torch.native_group_norm(x.to(device), None, None, 2, 6, 3, 0, 1e-5)
    torch.testing.assert_close(F.group_norm(x.to("accel"), 3).cpu(), F.group_norm(x, 3))


@pytest.mark.parametrize("shape,groups", [((0, 2), 1), ((0, 6, 4), 3)])
def test_group_norm_empty_batch_is_native(shape, groups):
    # OpInfo's empty-batch sample: the group's size cannot be inferred from an empty input.
    x = torch.randn(shape)
    for got, want in zip(
        run("accel", x, groups, True, torch.float32, torch.float32),
        run("cpu", x, groups, True, torch.float32, torch.float32),
    ):
        assert got.shape == want.shape
        torch.testing.assert_close(got, want)
    no_fallback()
