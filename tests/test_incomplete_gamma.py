"""igamma / igammac and _standard_gamma_grad (Gamma rsample's backward): native, against CPU
and, where CPU's own evaluation is an approximation, against mpmath's exact value."""

import mpmath
import pytest
import torch

import torch_accel

TOL = {
    torch.float64: dict(rtol=1e-10, atol=1e-12),
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.bfloat16: dict(rtol=2e-2, atol=1e-2),
    torch.float16: dict(rtol=2e-3, atol=1e-3),
}


@pytest.fixture(autouse=True)
def _clean():
    torch_accel.reset_fallback_counts()
    yield


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def exact_igamma(a, x, upper):
    mpmath.mp.dps = 30
    lo, hi = (x, mpmath.inf) if upper else (0, x)
    return float(mpmath.gammainc(a, lo, hi, regularized=True))


def shapes_and_values(dtype):
    g = torch.Generator().manual_seed(0)
    # Both regions of the evaluation (x below and above a + 1), small a (P near 1), large a.
    a = torch.cat(
        [
            torch.rand(400, generator=g) * 9,
            torch.rand(50, generator=g) * 0.05 + 1e-3,
            torch.rand(50, generator=g) * 90 + 10,
        ]
    )
    x = torch.cat(
        [
            torch.rand(400, generator=g) * 20,
            torch.rand(50, generator=g) * 1.5,
            a[450:] * (0.7 + 0.6 * torch.rand(50, generator=g)),
        ]
    )
    return a.to(dtype), x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("fn", [torch.igamma, torch.igammac], ids=["igamma", "igammac"])
def test_matches_cpu(fn, dtype):
    a, x = shapes_and_values(dtype)
    got = fn(a.to("accel"), x.to("accel"))
    assert got.dtype == dtype
    if dtype == torch.float64:
        # CPU's large-a expansion (a >= 10 here) is good to about 2e-9: the exact value is the
        # reference, CPU within that.
        exact = torch.tensor(
            [exact_igamma(ai, xi, fn is torch.igammac) for ai, xi in zip(a.tolist(), x.tolist())],
            dtype=dtype,
        )
        torch.testing.assert_close(got.cpu(), exact, rtol=1e-13, atol=1e-300)
        torch.testing.assert_close(got.cpu(), fn(a, x), rtol=5e-9, atol=1e-12)
    else:
        torch.testing.assert_close(got.cpu(), fn(a, x), **TOL[dtype])
    # Broadcast, a transposed operand, in place and out=.
    a2, x2 = a[:400].view(20, 20), x[:20]
    torch.testing.assert_close(
        fn(a2.to("accel").t(), x2.to("accel")).cpu(), fn(a2.t(), x2), **TOL[dtype]
    )
    inplace = a2.to("accel")
    getattr(inplace, fn.__name__ + "_")(x2.to("accel"))
    torch.testing.assert_close(inplace.cpu(), fn(a2, x2), **TOL[dtype])
    out = torch.empty(0, dtype=dtype, device="accel")
    fn(a2.to("accel"), x2.to("accel"), out=out)
    torch.testing.assert_close(out.cpu(), fn(a2, x2), **TOL[dtype])
    torch.testing.assert_close(
        torch.special.gammainc(a2.to("accel"), x2.to("accel")).cpu(),
        torch.special.gammainc(a2, x2),
        **TOL[dtype],
    )
    no_fallback()


def test_edges_match_cpu():
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([-1.0, 1, 0, 0, 0, 2, inf, inf, 2, nan, 1, inf, 5, 3], dtype=torch.float64)
    x = torch.tensor(
        [1.0, -1, 0, 1, inf, 0, 1, inf, inf, 1, nan, 0, 1e-320, 1e-300], dtype=torch.float64
    )
    for fn in (torch.igamma, torch.igammac):
        torch.testing.assert_close(fn(a.to("accel"), x.to("accel")).cpu(), fn(a, x), equal_nan=True)
    no_fallback()
    with pytest.raises(NotImplementedError, match="igamma"):  # as CPU: no integer kernel
        torch.igamma(torch.tensor([3, 4], device="accel"), torch.tensor([2, 5], device="accel"))


def test_each_tail_is_exact_where_cpu_is_not():
    # CPU's large-a expansion is 1.6e-9 (relative) off at the first two points, and its
    # small-a Q 8e-4 at the third;
    # here each tail is computed directly, to about 1e-14.
    points = [
        (94.0894775390625, 66.21115112304688),
        (205.00552368164062, 268.68023681640625),
        (1e-300, 1e-300),
        (2e-3, 1.7),
    ]
    a = torch.tensor([p[0] for p in points], dtype=torch.float64)
    x = torch.tensor([p[1] for p in points], dtype=torch.float64)
    p = torch.igamma(a.to("accel"), x.to("accel")).cpu()
    q = torch.igammac(a.to("accel"), x.to("accel")).cpu()
    for i, (ai, xi) in enumerate(points):
        exact_p, exact_q = exact_igamma(ai, xi, False), exact_igamma(ai, xi, True)
        assert abs(p[i].item() - exact_p) <= 1e-13 * exact_p
        assert abs(q[i].item() - exact_q) <= 1e-13 * exact_q
        if i < 3:
            cpu_error = abs(torch.igammac(a[i], x[i]).item() - exact_q)
            assert abs(q[i].item() - exact_q) < cpu_error


def exact_gamma_grad(a, x):
    """d x / d a at fixed P(a, x): -dP/da over the density, in 30 digits."""
    mpmath.mp.dps = 30
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    dp = mpmath.diff(lambda t: mpmath.gammainc(t, 0, x, regularized=True), a)
    density = mpmath.exp((a - 1) * mpmath.log(x) - x - mpmath.loggamma(a))
    return float(-dp / density)


def test_standard_gamma_grad_is_exact_and_near_cpu():
    g = torch.Generator().manual_seed(1)
    a = torch.cat(
        [
            torch.rand(20, generator=g) * 0.5 + 1e-3,
            torch.rand(20, generator=g) * 10,
            torch.rand(10, generator=g) * 300,
            torch.tensor([1e4]),
        ]
    ).double()
    torch.manual_seed(0)
    x = torch._standard_gamma(a).clamp_min(1e-300)
    got = torch._standard_gamma_grad(a.to("accel"), x.to("accel")).cpu()
    cpu = torch._standard_gamma_grad(a, x)
    exact = torch.tensor(
        [exact_gamma_grad(ai, xi) for ai, xi in zip(a.tolist(), x.tolist())], dtype=torch.float64
    )
    # CPU's kernel is a fitted approximation (up to 8e-4 off); this one is exact to 1e-12.
    torch.testing.assert_close(got, exact, rtol=1e-12, atol=0)
    torch.testing.assert_close(got, cpu, rtol=1e-3, atol=0)
    got32 = torch._standard_gamma_grad(a.float().to("accel"), x.float().to("accel")).cpu()
    live = x.float() > 1e-30  # below, the float sample itself underflowed
    torch.testing.assert_close(got32[live].double(), exact[live], rtol=1e-6, atol=0)
    no_fallback()


def test_standard_gamma_grad_edges_match_cpu():
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([1.0, 1, 0, -1, nan, 1, 0.5], dtype=torch.float64)
    x = torch.tensor([0.0, inf, 1, 1, 1, nan, 2])
    x = x.double()
    torch.testing.assert_close(
        torch._standard_gamma_grad(a.to("accel"), x.to("accel")).cpu(),
        torch._standard_gamma_grad(a, x),
        equal_nan=True,
        rtol=1e-3,
        atol=0,
    )
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gamma_and_chi2_rsample_gradients_on_device(dtype):
    # A VAE's Gamma latent: rsample on accel and backward with no fallback. Each sample's
    # gradient is d x / d a at its own value, so CPU's kernel on the same values is the check.
    conc = torch.tensor([0.3, 1.0, 2.5, 7.0], dtype=dtype, device="accel", requires_grad=True)
    rate = 2.0
    x = torch.distributions.Gamma(conc, rate).rsample((64,))
    x.sum().backward()
    xs = x.detach().cpu()
    expected = torch._standard_gamma_grad(conc.detach().cpu().expand_as(xs), xs * rate) / rate
    torch.testing.assert_close(conc.grad.cpu(), expected.sum(0), rtol=1e-3, atol=1e-6)

    df = torch.tensor([1.0, 4.0, 9.0], dtype=dtype, device="accel", requires_grad=True)
    y = torch.distributions.Chi2(df).rsample((64,))  # Gamma(df / 2, 1 / 2)
    y.sum().backward()
    ys = y.detach().cpu()
    expected = torch._standard_gamma_grad((df.detach().cpu() / 2).expand_as(ys), ys / 2)
    torch.testing.assert_close(df.grad.cpu(), expected.sum(0), rtol=1e-3, atol=1e-6)
    no_fallback()
