"""Native reductions, softmax, layer norm, the scans (cumsum, cumprod, cummax, cummin) and
nll_loss against CPU PyTorch."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel
from conftest import run_python

FLOATS = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.bfloat16: (2e-2, 2e-2),
    torch.float16: (2e-3, 2e-3),
}

MY_OPS = (
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "var",
    "std",
    "linalg_vector_norm",
    "_foreach_norm",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "aminmax",
    "softmax",
    "log_softmax",
    "layer_norm",
    "nll_loss",
)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def assert_native():
    """None of this file's ops went through the CPU fallback."""
    bad = {k: v for k, v in torch_accel.fallback_counts().items() if any(o in k for o in MY_OPS)}
    assert bad == {}


def close(got, expected, dtype=None):
    atol, rtol = TOL.get(dtype or expected.dtype, (0, 0))
    assert got.device.type == "accel"
    assert got.dtype == expected.dtype and got.shape == expected.shape
    torch.testing.assert_close(got.cpu(), expected, atol=atol, rtol=rtol, equal_nan=True)


def inputs(dtype, shape=(6, 5, 7)):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-5, 6, shape).to(dtype)


DIMS = [None, 0, -1, (0, 2), (1,), (-1, -3)]


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum(dtype, dim, keepdim):
    x = inputs(dtype)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    close(torch.sum(x.to("accel"), **kw), torch.sum(x, **kw), dtype)
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
@pytest.mark.parametrize("length", [1, 7, 32, 128, 256])
def test_short_dense_rows_match_cpu(dtype, length):
    """Rows along a dense last dim up to one block (256) take their own loop: every reducer over
    them, with NaNs and ties in the rows, a permuted batch, and an out= of another layout."""
    x = inputs(dtype, (3, 70, length))
    if dtype.is_floating_point:
        x[0, ::5, :: max(1, length // 3)] = float("nan")
        x[1, ::3] = 1  # rows of ties
    a = x.to("accel")
    ops = ["sum", "amax", "amin", "any", "all"]
    if dtype != torch.bool:
        ops += ["prod", "max", "argmin"]
    if dtype.is_floating_point:
        ops += ["mean", "nansum", "logsumexp"]
    for op in ops:
        for src, want_src in ((a, x), (a.transpose(0, 1), x.transpose(0, 1))):
            got, want = getattr(torch, op)(src, -1), getattr(torch, op)(want_src, -1)
            if op == "max":
                close(got.values, want.values, dtype)
                assert torch.equal(got.indices.cpu(), want.indices), op
            else:
                close(got, want, dtype)
    out = torch.empty(70, 3, dtype=x.dtype, device="accel").t()
    torch.amax(a, -1, out=out)
    close(out, torch.amax(x, -1), dtype)
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
@pytest.mark.parametrize("dim", [None, -1, (0, 2)])
def test_nansum(dtype, dim):
    x = inputs(dtype)
    if dtype.is_floating_point:
        x[x > 0.8] = float("nan")
    kw = {} if dim is None else {"dim": dim, "keepdim": True}
    close(torch.nansum(x.to("accel"), **kw), torch.nansum(x, **kw), dtype)
    close(
        torch.nansum(x.to("accel").transpose(0, 2), **kw),
        torch.nansum(x.transpose(0, 2), **kw),
        dtype,
    )
    out = torch.empty(0, dtype=torch.float64, device="accel")
    torch.nansum(x.to("accel"), dim=1, dtype=torch.float64, out=out)
    close(out, torch.nansum(x, dim=1, dtype=torch.float64))
    assert_native()


def test_complex32_sum_accumulates_in_float_as_on_cuda():
    # CPU has no complex32 sum (chalf's backward sums one); CUDA's adds in float and rounds
    # once: CPU's complex64 sum of the same values, rounded to complex32.
    g = torch.Generator().manual_seed(0)
    x = torch.complex(torch.randn(4, 300, generator=g), torch.randn(4, 300, generator=g))
    x = x.to(torch.complex32)
    with pytest.raises(NotImplementedError):
        x.sum()
    for dims in [(1,), (0, 1)]:
        expected = x.to(torch.complex64).sum(dims).to(torch.complex32)
        got = x.to("accel").sum(dims).cpu()
        assert got.dtype == torch.complex32
        torch.testing.assert_close(got, expected, rtol=1e-3, atol=1e-2)
    w = torch.randn(2, 3, 2, 3, generator=g).to("accel").requires_grad_()
    w.chalf(memory_format=torch.channels_last).sum().abs().backward()
    assert torch.equal(w.grad.cpu(), torch.ones(2, 3, 2, 3))
    assert_native()


def test_nansum_dtype_rules_match_cpu():
    # Without dtype=, CPU's nansum runs in the out= tensor's dtype, floating only; with an
    # integer dtype= it sums the input cast to it (NaN as 0).
    x = torch.tensor([[1.5, float("nan"), 2.5], [0.5, -1.0, 3.0]])
    cases = [
        lambda d, x: torch.nansum(x, out=torch.empty((), dtype=torch.long, device=d)),
        lambda d, x: torch.nansum(x[0, 0], out=torch.empty((), dtype=torch.long, device=d)),
        lambda d, x: torch.nansum(x, 1, out=torch.empty(2, dtype=torch.bool, device=d)),
        lambda d, x: torch.nansum(x[:, :0], out=torch.empty((), dtype=torch.long, device=d)),
        lambda d, x: torch.nansum(x, out=torch.empty((), dtype=torch.half, device=d)),
        lambda d, x: torch.nansum(x, dtype=torch.long),
        lambda d, x: torch.nansum(
            x, 1, dtype=torch.int32, out=torch.empty(0, dtype=torch.int32, device=d)
        ),
        lambda d, x: torch.nansum(x.long(), out=torch.empty((), dtype=torch.long, device=d)),
    ]
    for case in cases:
        try:
            expected, error = case("cpu", x), None
        except Exception as e:  # noqa: BLE001 - the error is what we compare
            expected, error = None, e
        if error is not None:
            with pytest.raises(type(error)) as got:
                case("accel", x.to("accel"))
            assert str(got.value) == str(error)
        else:
            torch.testing.assert_close(case("accel", x.to("accel")).cpu(), expected)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_var_std(dtype, dim, keepdim):
    x = inputs(dtype)
    a = x.to("accel")
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    close(torch.mean(a, **kw), torch.mean(x, **kw))
    for corr in (0, 1):
        close(torch.var(a, correction=corr, **kw), torch.var(x, correction=corr, **kw))
        close(torch.std(a, correction=corr, **kw), torch.std(x, correction=corr, **kw))
        for got, exp in zip(
            torch.var_mean(a, correction=corr, **kw), torch.var_mean(x, correction=corr, **kw)
        ):
            close(got, exp)
        for got, exp in zip(
            torch.std_mean(a, correction=corr, **kw), torch.std_mean(x, correction=corr, **kw)
        ):
            close(got, exp)
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.uint8, torch.bool])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_arg(dtype, keepdim):
    x = inputs(dtype)
    a = x.to("accel")
    for fn in (torch.max, torch.min):
        close(fn(a), fn(x))
        for dim in (0, 1, -1):
            gv, gi = fn(a, dim=dim, keepdim=keepdim)
            ev, ei = fn(x, dim=dim, keepdim=keepdim)
            close(gv, ev)
            close(gi, ei)
    for fn in (torch.amax, torch.amin):
        for dim in ((0, 2), -1, ()):
            close(fn(a, dim=dim, keepdim=keepdim), fn(x, dim=dim, keepdim=keepdim))
    for fn in (torch.argmax, torch.argmin):
        if dtype == torch.bool:
            with pytest.raises(RuntimeError, match="does not support bool input"):
                fn(a)
            continue
        close(fn(a), fn(x))
        close(fn(a, dim=1, keepdim=keepdim), fn(x, dim=1, keepdim=keepdim))
    assert_native()


def test_argmax_ties_and_nan_match_cpu():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [float("nan"), 2.0, float("nan"), 5.0]])
    a = x.to("accel")
    close(torch.argmax(a, dim=1), torch.argmax(x, dim=1))
    close(torch.argmin(a, dim=1), torch.argmin(x, dim=1))
    close(torch.max(a, dim=1).values, torch.max(x, dim=1).values)
    close(torch.amax(a), torch.amax(x))
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS)
def test_extremes_of_long_rows_nan_ties_and_infinities(dtype):
    # Rows of 1000: vector lanes (64 bytes) and a tail; all-positive and all-negative rows
    # (no lane may contribute a stray 0), NaN in a lane and in the tail, infinities.
    x = torch.randn(8, 1000)
    x[0] = x[0].abs() + 1
    x[1] = -x[1].abs() - 1
    x[2, 17] = float("nan")
    x[3, 999] = float("nan")
    x[4, 500] = float("inf")
    x[5, 3] = float("-inf")
    x[6, :] = float("-inf")
    x = x.to(dtype)
    a = x.to("accel")
    for fn in (torch.amax, torch.amin):
        close(fn(a, -1), fn(x, -1))
        close(fn(a.t(), 0), fn(x.t(), 0))  # the same rows, strided
        close(fn(a[:, 1:], -1), fn(x[:, 1:], -1))  # unaligned
        close(fn(a), fn(x))
    # With indices: ties (rounded values) and NaNs go to the first position, as on CPU.
    y = (x.float() * 2).round().to(dtype)
    y[7, 900] = y[7, 100] = float("nan")
    b = y.to("accel")
    for fn in (torch.max, torch.min):
        for dim, t, tc in ((-1, b, y), (0, b.t(), y.t()), (-1, b[:, 3:], y[:, 3:])):
            got, want = fn(t, dim), fn(tc, dim)
            close(got.values, want.values)
            assert torch.equal(got.indices.cpu(), want.indices)
    for fn in (torch.argmax, torch.argmin):
        assert torch.equal(fn(b, -1).cpu(), fn(y, -1))
        assert torch.equal(fn(b).cpu(), fn(y))
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32])
def test_prod(dtype):
    x = (
        (torch.rand(4, 6) + 0.5).to(dtype)
        if dtype.is_floating_point
        else torch.randint(1, 3, (4, 6)).to(dtype)
    )
    a = x.to("accel")
    close(torch.prod(a), torch.prod(x), dtype)
    close(torch.prod(a, 1, keepdim=True), torch.prod(x, 1, keepdim=True), dtype)
    assert_native()


def test_non_contiguous_and_dtype_argument():
    x = torch.randn(8, 9, 10)
    a = x.to("accel")
    xt, at_ = x.transpose(0, 2)[:, 1:7], a.transpose(0, 2)[:, 1:7]
    close(at_.sum(dim=(0, 1)), xt.sum(dim=(0, 1)))
    close(at_.amax(dim=1), xt.amax(dim=1))
    close(torch.argmax(at_), torch.argmax(xt))
    close(at_.var(dim=0), xt.var(dim=0))
    b = x.to(torch.bfloat16)
    close(b.to("accel").sum(dim=1, dtype=torch.float32), b.sum(dim=1, dtype=torch.float32))
    i = torch.randint(0, 9, (5, 4), dtype=torch.int32)
    close(i.to("accel").sum(dim=0, dtype=torch.float64), i.sum(dim=0, dtype=torch.float64))
    close(i.to("accel").mean(dtype=torch.float32), i.mean(dtype=torch.float32))
    out = torch.empty(0, device="accel")
    torch.sum(a, dim=[1], out=out)
    close(out, x.sum(dim=[1]))
    torch.mean(a, dim=(0,), keepdim=True, out=out)
    close(out, x.mean(dim=(0,), keepdim=True))
    assert_native()


def test_large_sums_stay_close_to_cpu():
    x = torch.randn(3_000_000) + 1
    torch.testing.assert_close(x.to("accel").sum().cpu(), x.sum(), rtol=1e-5, atol=1e-2)
    torch.testing.assert_close(x.to("accel").mean().cpu(), x.mean(), rtol=1e-5, atol=1e-6)
    y = torch.randn(4, 200_000)
    torch.testing.assert_close(y.to("accel").sum(1).cpu(), y.sum(1), rtol=1e-5, atol=1e-2)
    assert_native()


def test_long_float_sums_as_accurate_as_cpu():
    # Rows of 2^21 float32 values: added in sequence, the 8192 block partials of a row drift
    # by ~20 ulps of the row sum (about 50x CPU's cascade sum); merged pairwise (reduce.h)
    # they stay within a few times CPU's error against float64. The worst of 8 rows, so that
    # one lucky rounding on CPU cannot decide the comparison.
    x = torch.rand(8, 1 << 21)
    exact = x.double().sum(1)
    err_cpu = (x.sum(1).double() - exact).abs().max().item()
    err_accel = (x.to("accel").sum(1).cpu().double() - exact).abs().max().item()
    assert err_accel <= 10 * err_cpu, (err_accel, err_cpu)
    assert_native()


def test_strided_sums_as_accurate_as_contiguous_ones():
    # A strided run of the reduced dim is dealt over the dense run's lanes, in its order: the
    # sum of a non-contiguous tensor was up to 4x farther from float64 than its contiguous
    # copy's, which made test_ops' contiguous-vs-noncontiguous checks (conv_transpose2d's bias
    # gradient) fail. Now the host gives the same number, and CPU's accuracy.
    g = torch.Generator().manual_seed(0)
    err = {"cpu": 0.0, "accel": 0.0}
    for _ in range(20):
        base = torch.rand(4, 22, 44, generator=g) + 1
        x = base[..., ::2]
        exact = x.double().sum((1, 2))
        strided = base.to("accel")[..., ::2].sum((1, 2)).cpu()
        if torch_accel.driver() == "host":
            assert torch.equal(strided, x.contiguous().to("accel").sum((1, 2)).cpu())
        err["accel"] += (strided.double() - exact).abs().max().item()
        err["cpu"] += (x.sum((1, 2)).double() - exact).abs().max().item()
    assert err["accel"] <= 1.5 * err["cpu"], err
    assert_native()


def test_empty_reductions():
    x = torch.randn(3, 0, 4)
    a = x.to("accel")
    close(a.sum(1), x.sum(1))
    close(a.prod(1), x.prod(1))
    close(a.mean(1), x.mean(1))
    close(a.sum(), x.sum())
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        a.amax(1)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        a.max()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", [2, 1, float("inf"), float("-inf"), 0, 3.5])
def test_vector_norm(dtype, ord):
    x = inputs(dtype)
    a = x.to("accel")
    close(torch.linalg.vector_norm(a, ord), torch.linalg.vector_norm(x, ord))
    close(
        torch.linalg.vector_norm(a, ord, dim=(0, 2), keepdim=True),
        torch.linalg.vector_norm(x, ord, dim=(0, 2), keepdim=True),
    )
    close(torch.norm(a, p=ord if ord != 0 else 2), torch.norm(x, p=ord if ord != 0 else 2))
    # aten::norm itself (what C++ callers such as weight norm reach): p None is 2, [] every dim.
    aten_norm = torch.ops.aten.norm
    close(
        aten_norm.ScalarOpt_dim(a.mT, ord, [-1], True),
        aten_norm.ScalarOpt_dim(x.mT, ord, [-1], True),
    )
    close(aten_norm.ScalarOpt_dim(a, None, []), aten_norm.ScalarOpt_dim(x, None, []))
    close(aten_norm.Scalar(a, ord), aten_norm.Scalar(x, ord))
    f64 = dict(dtype=torch.float64)
    close(
        aten_norm.ScalarOpt_dim_dtype(a, ord, [1], False, **f64),
        aten_norm.ScalarOpt_dim_dtype(x, ord, [1], False, **f64),
        dtype,  # accumulated in the input's dtype, as linalg_vector_norm(dtype=) is on accel
    )
    out = torch.empty(0, device="accel", dtype=dtype)
    aten_norm.out(a, ord, [0, 2], out=out)
    close(out, aten_norm.ScalarOpt_dim(x, ord, [0, 2]))
    assert_native()
    for fn in (torch.norm, torch.linalg.norm):  # and their backward
        xc, xa = x.clone().requires_grad_(), a.clone().requires_grad_()
        fn(xc, 3, dim=1).sum().backward()
        fn(xa, 3, dim=1).sum().backward()
        close(xa.grad, xc.grad)
    close(torch.linalg.matrix_norm(a, "fro"), torch.linalg.matrix_norm(x, "fro"))
    close(torch.linalg.matrix_norm(a, -1), torch.linalg.matrix_norm(x, -1))
    assert_native()


@pytest.mark.parametrize("foreach", [False, True])
def test_clip_grad_norm(foreach):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Linear(16, 4))
    dev_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Linear(16, 4))
    dev_model.load_state_dict(model.state_dict())
    dev_model.to("accel")
    for p, q in zip(model.parameters(), dev_model.parameters()):
        p.grad = torch.randn_like(p) * 3
        q.grad = p.grad.to("accel")
    expected = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=foreach)
    got = torch.nn.utils.clip_grad_norm_(dev_model.parameters(), 1.0, foreach=foreach)
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-5, atol=1e-5)
    for p, q in zip(model.parameters(), dev_model.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-5, atol=1e-6)
    norms = torch._foreach_norm([q.grad for q in dev_model.parameters()], 2)
    for n, p in zip(norms, model.parameters()):
        torch.testing.assert_close(n.cpu(), torch.linalg.vector_norm(p.grad), rtol=1e-5, atol=1e-6)
    assert_native()


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(op, dtype, dim):
    # A transposed input is scanned in place; for cumprod, floats near 1 keep 7 factors in range.
    x = inputs(dtype, (5, 7, 6)).transpose(1, 2)
    if op == "cumprod" and dtype.is_floating_point:
        x = (1 + x.float() / 4).to(dtype)
    a = x.to("accel")
    close(getattr(torch, op)(a, dim), getattr(torch, op)(x, dim), dtype)
    if dtype == torch.float32:
        b = a.clone()
        getattr(b, op + "_")(dim)
        close(b, getattr(x, op)(dim))
        out = torch.empty(0, dtype=torch.float64, device="accel")
        getattr(torch, op)(a, dim, out=out)
        close(out, getattr(torch, op)(x, dim, dtype=torch.float64))
    assert_native()


def test_cumprod_backward_with_and_without_zeros():
    for zero in (False, True):
        x = torch.randn(4, 6).double()
        if zero:
            x[1, 2] = 0
            x[2, 1] = x[2, 4] = 0
        xa = x.to("accel").requires_grad_()
        xc = x.clone().requires_grad_()
        g = torch.randn(4, 6).double()
        torch.cumprod(xa, 1).backward(g.to("accel"))
        torch.cumprod(xc, 1).backward(g)
        close(xa.grad, xc.grad)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cummax_cummin(op, dtype, dim):
    # Small integers make ties, which take the last position, as on CPU.
    x = inputs(dtype, (4, 9, 5)).transpose(0, 2)
    if dtype.is_floating_point:
        x = x.float().mul(2).round().to(dtype)
    got, want = op(x.to("accel"), dim), op(x, dim)
    close(got.values, want.values, dtype)
    close(got.indices, want.indices)
    values = torch.empty(0, dtype=dtype, device="accel")
    indices = torch.empty(0, dtype=torch.long, device="accel")
    op(x.to("accel"), dim, out=(values, indices))
    close(values, want.values, dtype)
    close(indices, want.indices)
    assert_native()


def test_cummax_nan_and_backward():
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan"), 0.5], [2.0, 2.0, 1.0, 5.0, 5.0]])
    for op in (torch.cummax, torch.cummin):
        got, want = op(x.to("accel"), 1), op(x, 1)
        close(got.values, want.values)
        close(got.indices, want.indices)
    y = torch.randn(3, 8)
    ya = y.to("accel").requires_grad_()
    yc = y.clone().requires_grad_()
    g = torch.randn(3, 8)
    torch.cummax(ya, 1).values.backward(g.to("accel"))
    torch.cummax(yc, 1).values.backward(g)
    close(ya.grad, yc.grad)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_aminmax(dtype):
    x = inputs(dtype, (5, 6)).t()
    a = x.to("accel")
    for kw in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
        got, want = torch.aminmax(a, **kw), torch.aminmax(x, **kw)
        close(got.min, want.min, dtype)
        close(got.max, want.max, dtype)
    lo, hi = (
        torch.empty(0, dtype=dtype, device="accel"),
        torch.empty(0, dtype=dtype, device="accel"),
    )
    torch.aminmax(a, dim=1, out=(lo, hi))
    close(lo, x.amin(1), dtype)
    close(hi, x.amax(1), dtype)
    with pytest.raises(RuntimeError, match="empty"):
        torch.aminmax(torch.empty(0, device="accel"))
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_backward(dtype, dim, log):
    fn = F.log_softmax if log else F.softmax
    x = (torch.randn(4, 33, 9) * 3).to(dtype)
    xa = x.to("accel").requires_grad_()
    xc = x.clone().requires_grad_()
    ya, yc = fn(xa, dim=dim), fn(xc, dim=dim)
    close(ya.detach(), yc.detach())
    g = torch.randn_like(yc)
    ya.backward(g.to("accel"))
    yc.backward(g)
    close(xa.grad, xc.grad)
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_along_an_outer_dim_in_blocks_of_lines(dtype, log):
    # inner = 130: blocks of 64 adjacent lines and a last one of 2; NaN and -inf in some lines.
    fn = F.log_softmax if log else F.softmax
    x = torch.randn(3, 50, 130) * 3
    x[0, 7, 5] = float("nan")
    x[1, :, 70] = float("-inf")
    x[2, 49, 129] = float("-inf")
    x = x.to(dtype)
    for dim in (0, 1):
        xa = x.to("accel").requires_grad_()
        xc = x.clone().requires_grad_()
        ya, yc = fn(xa, dim=dim), fn(xc, dim=dim)
        close(ya.detach(), yc.detach())
        g = torch.randn(yc.shape).to(dtype)
        ya.backward(g.to("accel"))
        yc.backward(g)
        close(xa.grad, xc.grad)
    assert_native()


def test_softmax_transposed_and_long_rows():
    x = torch.randn(64, 5000)
    close(torch.softmax(x.to("accel").t(), 0), torch.softmax(x.t(), 0))
    close(torch.log_softmax(x.to("accel"), -1), torch.log_softmax(x, -1))
    # Rows of 2 chunks of 16 lanes and a tail: a NaN in a chunk and in the tail, the max in
    # the tail and in a chunk's last lane.
    y = torch.randn(5, 40)
    y[1, 7] = float("nan")
    y[2, :] = float("-inf")
    y[0, 3] = float("-inf")
    y[3, 37] = 9.0
    y[4, 15] = 9.0
    y[4, 38] = float("nan")
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        for fn in (torch.softmax, torch.log_softmax):
            close(fn(y.to(dtype).to("accel"), -1), fn(y.to(dtype), -1))
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [-1, 1, 0])
def test_safe_softmax_gives_zeros_for_fully_masked_lines(dtype, dim):
    # The attention math path's softmax: a line that is all -inf gives zeros, not NaN (one
    # kernel on accel, eq + all + where after the softmax on CPU); a NaN still gives NaN.
    x = (torch.randn(4, 33, 70) * 3).to(dtype)
    x.select(dim, 2).fill_(float("-inf"))  # lines with one -inf element
    line = [slice(None)] * 3
    line[dim] = slice(None)
    line[(dim + 1) % 3], line[(dim + 2) % 3] = 1, 3
    x[tuple(line)] = float("-inf")  # one fully masked line
    line[(dim + 1) % 3] = 0
    x[tuple(line)] = float("-inf")
    x[tuple(i if isinstance(i, int) else 3 for i in line)] = float("nan")  # -inf and a NaN
    xa = x.to("accel").requires_grad_()
    xc = x.clone().requires_grad_()
    ya = torch.ops.aten._safe_softmax(xa, dim)
    yc = torch.ops.aten._safe_softmax(xc, dim)
    close(ya.detach(), yc.detach())
    assert ya.detach().isnan().sum().item() == yc.isnan().sum().item() > 0
    g = torch.randn(yc.shape).to(dtype)
    ya.backward(g.to("accel"))
    yc.backward(g)
    close(xa.grad, xc.grad)
    # The dtype argument converts first, as softmax's does.
    got = torch.ops.aten._safe_softmax(x.to("accel"), dim, torch.float64)
    assert got.dtype == torch.float64
    close(got, torch.ops.aten._safe_softmax(x, dim, torch.float64))
    assert_native()


def test_attention_with_a_fully_masked_query_row_matches_cpu():
    # scaled_dot_product_attention's math path on accel ends in _safe_softmax: a query that
    # may attend to nothing gets a zero output and zero gradients, as on CPU.
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    mask = torch.rand(2, 1, 5, 5) > 0.3
    mask[0, 0, 1] = False
    leaves_c = [t.clone().requires_grad_() for t in (q, k, v)]
    leaves_a = [t.to("accel").requires_grad_() for t in (q, k, v)]
    yc = F.scaled_dot_product_attention(*leaves_c, attn_mask=mask)
    ya = F.scaled_dot_product_attention(*leaves_a, attn_mask=mask.to("accel"))
    close(ya.detach(), yc.detach())
    assert ya[0, :, 1].abs().max().item() == 0.0
    g = torch.randn_like(yc)
    yc.backward(g)
    ya.backward(g.to("accel"))
    for la, lc in zip(leaves_a, leaves_c):
        close(la.grad, lc.grad)
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
def test_layer_norm_forward_backward(dtype, affine):
    x = torch.randn(3, 5, 16).to(dtype)
    shape = (16,) if dtype != torch.float64 else (5, 16)
    w = torch.randn(shape).to(dtype) if affine[0] else None
    b = torch.randn(shape).to(dtype) if affine[1] else None
    leaves_c = [t.clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    leaves_a = [t.to("accel").requires_grad_() if t is not None else None for t in (x, w, b)]
    yc = F.layer_norm(leaves_c[0], shape, leaves_c[1], leaves_c[2], eps=1e-5)
    ya = F.layer_norm(leaves_a[0], shape, leaves_a[1], leaves_a[2], eps=1e-5)
    close(ya.detach(), yc.detach())
    g = torch.randn_like(yc)
    yc.backward(g)
    ya.backward(g.to("accel"))
    for la, lc in zip(leaves_a, leaves_c):
        if lc is not None:
            # weight/bias grads sum over rows in half precision inputs
            atol = {torch.bfloat16: 5e-2, torch.float16: 1e-2}.get(dtype)
            if atol:
                torch.testing.assert_close(la.grad.cpu(), lc.grad, atol=atol, rtol=5e-2)
            else:
                close(la.grad, lc.grad)
    # mean / rstd: CPU's shapes and values, kept in float for half/bfloat16 (as torch.cuda).
    stat_dtype = torch.float32 if dtype in (torch.bfloat16, torch.float16) else dtype
    for got, exp in zip(
        torch.native_layer_norm(x.to("accel"), shape, None, None, 1e-5)[1:],
        torch.native_layer_norm(x.to(stat_dtype), shape, None, None, 1e-5)[1:],
    ):
        close(got, exp)
    assert_native()


def test_layer_norm_bf16_statistics_in_float():
    # Rows whose mean bfloat16 cannot hold (8 significant bits: steps of 4 near 1000).
    x = (1000 + 40 * torch.linspace(-1, 1, 16) ** 3).to(torch.bfloat16).reshape(1, 16)
    x = torch.cat([x, x / 1000])
    y, mean, rstd = torch.native_layer_norm(x.to("accel"), (16,), None, None, 1e-5)
    assert mean.dtype == rstd.dtype == torch.float32
    xf = x.float()
    exp_mean = xf.mean(1, keepdim=True)
    exp_rstd = (xf.var(1, unbiased=False, keepdim=True) + 1e-5).rsqrt()
    torch.testing.assert_close(mean.cpu(), exp_mean, rtol=1e-6, atol=0)
    torch.testing.assert_close(rstd.cpu(), exp_rstd, rtol=1e-5, atol=0)
    assert mean[0, 0].item() == exp_mean[0, 0].item() != float(exp_mean[0, 0].bfloat16())
    # The output is CPU's bfloat16 layer norm (which also normalizes with float statistics).
    y_cpu = torch.native_layer_norm(x, (16,), None, None, 1e-5)[0]
    torch.testing.assert_close(y.cpu(), y_cpu, atol=1e-2, rtol=1e-2)
    # The backward takes the float statistics natively, as CPU's takes the rounded ones.
    xa = x.to("accel").requires_grad_()
    xc = x.clone().requires_grad_()
    g = torch.linspace(-1, 1, 32).reshape(2, 16).to(torch.bfloat16)
    F.layer_norm(xa, (16,)).backward(g.to("accel"))
    F.layer_norm(xc, (16,)).backward(g)
    torch.testing.assert_close(xa.grad.cpu(), xc.grad, atol=2e-2, rtol=2e-2)
    assert_native()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_and_cross_entropy(reduction, weighted):
    x = torch.randn(10, 7)
    t = torch.randint(0, 7, (10,))
    t[3] = -100
    t[6] = 2
    w = torch.rand(7) + 0.1 if weighted else None
    xa = x.to("accel").requires_grad_()
    xc = x.clone().requires_grad_()
    la = F.cross_entropy(
        xa, t.to("accel"), weight=None if w is None else w.to("accel"), reduction=reduction
    )
    lc = F.cross_entropy(xc, t, weight=w, reduction=reduction)
    close(la.detach(), lc.detach())
    g = torch.randn_like(lc)
    la.backward(g.to("accel"))
    lc.backward(g)
    close(xa.grad, xc.grad)
    # 1-D input, ignore_index of a real class
    x1 = torch.randn(7)
    close(
        F.nll_loss(
            x1.to("accel"), torch.tensor(3, device="accel"), ignore_index=1, reduction=reduction
        ),
        F.nll_loss(x1, torch.tensor(3), ignore_index=1, reduction=reduction),
    )
    assert_native()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_spatial_cross_entropy(reduction, weighted):
    # Segmentation's loss: [N, C, H, W] scores and [N, H, W] targets (nll_loss2d), with ignored
    # pixels; a channels-last input too.
    x = torch.randn(2, 5, 3, 4)
    t = torch.randint(0, 5, (2, 3, 4))
    t[0, 1, 2] = -100
    w = torch.rand(5) + 0.1 if weighted else None
    for layout in (torch.contiguous_format, torch.channels_last):
        xc = x.clone().to(memory_format=layout).requires_grad_()
        xa = x.to("accel").to(memory_format=layout).requires_grad_()
        lc = F.cross_entropy(xc, t, weight=w, reduction=reduction)
        la = F.cross_entropy(
            xa, t.to("accel"), weight=None if w is None else w.to("accel"), reduction=reduction
        )
        close(la.detach(), lc.detach())
        g = torch.randn_like(lc)
        lc.backward(g)
        la.backward(g.to("accel"))
        close(xa.grad, xc.grad)
    assert_native()


@pytest.mark.skipif(
    not hasattr(F, "linear_cross_entropy"), reason="torch without F.linear_cross_entropy"
)
@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_chunked_linear_cross_entropy_accumulates_in_float(dtype, reduction):
    # acc_policy="auto" takes CPU's picks on accel (float32 accumulation, "accurate"): by
    # PyTorch's own default for an unknown device the float16 loss accumulated in float16.
    from torch.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions

    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(16, 8, generator=g) * 2, torch.randn(50, 8, generator=g)
    b, t = torch.randn(50, generator=g), torch.randint(0, 50, (16,), generator=g)

    def loss(device):
        x_, w_, b_ = (v.to(device, dtype) for v in (x, w, b))
        options = LinearCrossEntropyOptions(batch_chunk_size=4)
        return F.linear_cross_entropy(
            x_, w_, t.to(device), linear_bias=b_, reduction=reduction, options=options
        )

    torch.testing.assert_close(loss("accel").cpu(), loss("cpu"))
    assert_native()


def test_nll_loss_target_out_of_bounds():
    # The failure is a sticky device error (as with CUDA's device-side assert), so it runs in a
    # fresh interpreter.
    r = run_python(
        "import torch, torch_accel\n"
        "import torch.nn.functional as F\n"
        "x = torch.randn(4, 5, device='accel')\n"
        "t = torch.tensor([0, 1, 7, 2], device='accel')\n"
        "try:\n"
        "    F.nll_loss(x, t).cpu()\n"
        "except RuntimeError as e:\n"
        "    print('raised:', e)\n"
    )
    assert "Target 7 is out of bounds." in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize(
    "shape,dim", [((200003,), None), ((3, 100003), 1), ((70001, 5), 0), ((2, 3, 40009), (0, 2))]
)
def test_split_reductions_match_cpu(shape, dim):
    # Few outputs over long ranges: planReduce splits each range into chunks whose partials a
    # second pass combines in order (non-power-of-two lengths, several chunks, strided input).
    x = torch.randn(shape)
    flat = x.view(-1)
    flat[17] = flat[-5] = 50.0  # a tie in the first and last chunks: argmax keeps the first
    xa = x.to("accel")
    kw = {} if dim is None else {"dim": dim}
    for name, fn in [
        ("sum", lambda t: t.sum(**kw)),
        ("mean", lambda t: t.mean(**kw)),
        ("var", lambda t: t.var(**kw)),
        ("std", lambda t: t.std(**kw)),
        ("norm", lambda t: torch.linalg.vector_norm(t, **kw)),
        ("amax", lambda t: t.amax(**kw)),
        ("amin", lambda t: t.amin(**kw)),
    ]:
        torch.testing.assert_close(fn(xa).cpu(), fn(x), rtol=2e-5, atol=2e-5, msg=name)
    if dim is None or isinstance(dim, int):
        assert torch.equal(xa.argmax(**kw).cpu(), x.argmax(**kw))
    assert xa.sum(**kw).double().cpu().sub(x.double().sum(**kw)).abs().max() < 1e-2
    assert_native()


@pytest.mark.parametrize(
    "shape,dim",
    [
        ((16, 70), 0),  # one chunk of rows: a single pass writes the outputs
        ((1000, 100), 0),  # 63 chunks, the last partial; 100 columns: two host lanes groups
        ((70000, 20), 0),  # thousands of chunks per output
        ((1000, 300), 0),  # 5 host lanes groups: each merges its 63 chunks in its own task
        ((20000, 256), 0),  # 1250 chunks: two merge levels inside each host task
        ((4, 300, 70), 1),  # kept rows above the reduced dim
        ((3, 50, 7, 40), (0, 1, 2)),  # several reduced dims, stepped and recomputed
        ((257, 16), 0),  # the shortest run the column path takes
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64])
def test_column_reductions_match_cpu(shape, dim, dtype):
    # Adjacent outputs over strided reduced elements (reduce.h's column path): partials per
    # chunk of rows, merged in order; ties keep the lowest index.
    x = inputs(dtype, shape)
    xa = x.to("accel")
    ops = [("sum", lambda t: t.sum(dim)), ("amax", lambda t: t.amax(dim))]
    if dtype.is_floating_point:
        ops += [
            ("mean", lambda t: t.mean(dim)),
            ("var", lambda t: t.var(dim)),
            ("norm", lambda t: torch.linalg.vector_norm(t, dim=dim)),
        ]
    for name, fn in ops:
        atol, rtol = TOL.get(dtype, (0, 0))
        torch.testing.assert_close(fn(xa).cpu(), fn(x), atol=4 * atol, rtol=4 * rtol, msg=name)
    if isinstance(dim, int):
        # Integer inputs in [-5, 5] have many ties per column: the first index wins, as on CPU.
        assert torch.equal(xa.argmax(dim).cpu(), x.argmax(dim))
        assert torch.equal(xa.argmin(dim).cpu(), x.argmin(dim))
    assert_native()


def test_long_column_sums_as_accurate_as_cpu():
    # 2^16 rows per column, in chunks merged pairwise: within a few times CPU's error
    # against float64, like the row path.
    x = torch.rand(1 << 16, 64)
    exact = x.double().sum(0)
    err_cpu = (x.sum(0).double() - exact).abs().max().item()
    err_accel = (x.to("accel").sum(0).cpu().double() - exact).abs().max().item()
    assert err_accel <= 10 * err_cpu, (err_accel, err_cpu)
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("rows,cols", [(1000, 100), (128, 64), (3, 2500), (0, 8)])
def test_layer_norm_weight_and_bias_grads_over_many_rows(dtype, rows, cols):
    # dweight/dbias as a two-pass column sum (norm.h): chunks of rows, columns not a
    # multiple of the host's 64 lanes; no rows gives zeros. Against float64 on the same
    # inputs: at least as close as CPU (whose bfloat16 sums drift by ~2.7 at 1000 rows, where
    # the float partials here stay within ~0.2).
    x = torch.randn(rows, cols).to(dtype)
    w = torch.randn(cols).to(dtype)
    b = torch.randn(cols).to(dtype)
    g = torch.randn(rows, cols).to(dtype)
    grads = {}
    for dev, cast in (("cpu", dtype), ("accel", dtype), ("cpu", torch.float64)):
        leaves = [t.detach().to(dev, cast).requires_grad_() for t in (x, w, b)]
        F.layer_norm(leaves[0], (cols,), leaves[1], leaves[2]).backward(g.to(dev, cast))
        grads[dev, cast] = [t.grad.cpu() for t in leaves]
    ulp = {torch.bfloat16: 2**-8, torch.float32: 2**-23, torch.float64: 2**-52}[dtype]
    acc_eps = 2**-52 if dtype == torch.float64 else 2**-23  # the accumulation's (OpMath)
    xd, gd = x.double(), g.double().abs()
    xhat = (xd - xd.mean(1, keepdim=True)) * (
        xd.var(1, unbiased=False, keepdim=True) + 1e-5
    ).rsqrt()
    # A sum's rounding grows with the sum of its terms' magnitudes; dx's rows are short.
    magnitude = [torch.zeros(()), (gd * xhat.abs()).sum(0), gd.sum(0)]
    for got, cpu, exact, mag in zip(
        grads["accel", dtype], grads["cpu", dtype], grads["cpu", torch.float64], magnitude
    ):
        assert got.dtype == dtype
        if exact.numel() == 0:
            continue
        err_accel = (got.double() - exact).abs().max().item()
        err_cpu = (cpu.double() - exact).abs().max().item()
        bound = 4 * ulp * max(1.0, exact.abs().max().item()) + 4 * acc_eps * mag.max().item()
        assert err_accel <= max(1.5 * err_cpu, bound), (err_accel, err_cpu, bound)
    if rows == 0:
        assert torch.equal(grads["accel", dtype][1], torch.zeros(cols, dtype=dtype))
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (0, 4)])
def test_trace(dtype, shape):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 5).to(dtype)
    for t in (x, x.t()):
        want = torch.trace(t)
        got = torch.trace(t.to("accel"))
        assert got.dtype == want.dtype
        torch.testing.assert_close(got.cpu(), want)
    assert torch_accel.fallback_counts() == {}
    with pytest.raises(RuntimeError, match="expected a matrix, but got tensor with dim 3"):
        torch.trace(torch.ones(2, 2, 2, device="accel"))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_var_std_and_their_means_match_cpu(dtype):
    # ATen's recipe: the parts' variances added (then the root for std), the parts' means as
    # one complex number; the result is real, the mean complex.
    x = torch.randn(4, 6, 5, dtype=dtype, generator=torch.Generator().manual_seed(0))
    cases = {
        "var": lambda t: t.var(),
        "var over a dim, kept": lambda t: t.var(1, keepdim=True),
        "std without correction": lambda t: t.std((0, 2), correction=0),
        "var_mean": lambda t: torch.var_mean(t, 1),
        "std_mean, correction 2": lambda t: torch.std_mean(t, (0, 1), correction=2),
        "std of a conjugate view": lambda t: t.conj().std(-1),
        "var into a float64 out=": lambda t: torch.var(
            t, 0, out=torch.empty(0, dtype=torch.float64, device=t.device)
        ),
    }
    torch_accel.reset_fallback_counts()
    for name, fn in cases.items():
        expected, got = fn(x), fn(x.to("accel"))
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = got if isinstance(got, tuple) else (got,)
        for e, g in zip(expected, got):
            assert g.device.type == "accel" and g.dtype == e.dtype and g.shape == e.shape, name
            torch.testing.assert_close(g.cpu(), e, msg=name)
    assert torch_accel.fallback_counts() == {}
