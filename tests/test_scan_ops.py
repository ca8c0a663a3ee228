"""The scans (cumsum, cumprod, cummax, cummin, logcumsumexp) and the ordered compactions
(nonzero and what is built on it, index bounds) against CPU, at sizes that exercise every pass
of their launch plans (kernels/scan_plan.h): lines cut into several chunks (the host driver
splits a line from 2 * 32768 elements, CUDA from 512), a line just short of a split, exactly two
chunks, odd lengths, inner > 1, 1-element lines and empty tensors."""

import pytest
import torch

import torch_accel
from test_reduction_ops import FLOATS, TOL  # the scans' existing tests' dtypes and tolerances

SPLIT = 2 * 32768  # the host driver's shortest split line (twice its ScanGeometry::min_chunk)

# (shape, dim): one long line, a line one short of a split, exactly two chunks, inner > 1 with
# a long scanned dim (dim 0 and a middle dim), several long lines along dim -1, 1-element
# lines, one element, and empty tensors.
SHAPES = [
    ((100003,), 0),
    ((SPLIT - 1,), 0),
    ((SPLIT,), -1),
    ((70001, 3), 0),
    ((2, 40009, 2), 1),
    ((3, 70001), -1),
    ((50000, 1), -1),
    ((1,), 0),
    ((0,), 0),
    ((3, 0), -1),
]


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def assert_native():
    assert torch_accel.fallback_counts() == {}


def close(got, want):
    atol, rtol = TOL.get(want.dtype, (0, 0))
    assert got.device.type == "accel"
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, atol=atol, rtol=rtol, equal_nan=True)


def values(shape, dtype, op):
    """Inputs that keep each op meaningful over 10^5 elements: sums of small values, products
    of values near 1 (with zeros, and for integers of -1 and 1), and small integers for the
    extrema, so that ties cross chunk boundaries."""
    x = torch.randn(shape)
    if dtype == torch.bool:
        return x > 0.5
    if op == "cumprod":
        if dtype.is_floating_point:
            y = 1 + x / 300
            if y.numel():
                y.view(-1)[y.numel() * 3 // 4] = 0  # zeroes the rest of one line, chunks included
            return y.to(dtype)
        return torch.where(x > 0, 1, -1).to(dtype)
    if op in ("cummax", "cummin"):
        return x.mul(2).round().to(dtype)
    return x.to(dtype) if dtype.is_floating_point else x.mul(4).round().to(dtype)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_cumsum_cumprod_every_pass(op, dtype, shape, dim):
    x = values(shape, dtype, op)
    got, want = getattr(torch, op)(x.to("accel"), dim), getattr(torch, op)(x, dim)
    if dtype.is_floating_point:
        close(got, want)
    else:
        assert got.dtype == want.dtype and torch.equal(got.cpu(), want)  # exact
    assert_native()


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_complex_cumsum_every_pass(dtype, shape, dim):
    # A pair of real cumsums, the components a kept innermost dimension; CPU's complex
    # cumprod has no native kernel here and stays on the fallback.
    x = torch.randn(shape, dtype=dtype)
    tol = (1e-5, 1e-5) if dtype == torch.complex64 else (1e-10, 1e-10)
    a = x.to("accel")
    torch.testing.assert_close(
        torch.cumsum(a, dim).cpu(), torch.cumsum(x, dim), atol=tol[0], rtol=tol[1]
    )
    b = a.clone()
    b.cumsum_(dim)
    torch.testing.assert_close(b.cpu(), torch.cumsum(x, dim), atol=tol[0], rtol=tol[1])
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.cumsum(a.real, dim, dtype=dtype, out=out)  # a real input into a complex dtype
    torch.testing.assert_close(
        out.cpu(), torch.cumsum(x.real, dim, dtype=dtype), atol=tol[0], rtol=tol[1]
    )
    assert_native()


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_cummax_cummin_every_pass(op, dtype, shape, dim):
    x = values(shape, dtype, op.__name__)
    got, want = op(x.to("accel"), dim), op(x, dim)
    close(got.values, want.values)
    assert torch.equal(got.indices.cpu(), want.indices)  # ties: the last position
    assert_native()


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_cummax_cummin_nan_sticks_across_chunks(op, dtype):
    # Row 0: NaNs first at a chunk's first element and inside later chunks (the NaN's value
    # and its last position carry into every later chunk); row 1: none, only ties.
    n = 100003
    x = torch.randn(2, n).mul(2).round()
    x[0, n // 3] = x[0, 80000] = x[0, 80001] = float("nan")
    x = x.to(dtype)
    for dim, t in ((1, x), (0, x.t().contiguous())):
        got, want = op(t.to("accel"), dim), op(t, dim)
        close(got.values, want.values)
        assert torch.equal(got.indices.cpu(), want.indices)
    assert_native()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_logcumsumexp_every_pass(dtype, shape, dim):
    # Values of a wide range (the running max changes inside and across chunks).
    x = (torch.randn(shape) * 30).to(dtype)
    close(torch.logcumsumexp(x.to("accel"), dim), torch.logcumsumexp(x, dim))
    assert_native()


def test_logcumsumexp_infinities_nans_and_gradient():
    inf, nan = float("inf"), float("nan")
    x = torch.tensor(
        [[-inf, -inf, 0.0, inf, 1.0], [1.0, nan, 2.0, -inf, 3.0], [-inf, 2.0, -inf, inf, -inf]]
    )
    close(torch.logcumsumexp(x.to("accel"), 1), torch.logcumsumexp(x, 1))
    close(torch.logcumsumexp(x.to("accel"), 0), torch.logcumsumexp(x, 0))
    # Long lines: 1e4-scale values that overflow exp() unless shifted by the running max.
    big = torch.randn(3, SPLIT + 17, dtype=torch.float64) * 1e4
    close(torch.logcumsumexp(big.to("accel"), 1), torch.logcumsumexp(big, 1))
    w = torch.randn(6, 40, requires_grad=True)
    wa = w.detach().to("accel").requires_grad_()
    g = torch.randn(6, 40)
    torch.logcumsumexp(w, 1).backward(g)
    torch.logcumsumexp(wa, 1).backward(g.to("accel"))
    torch.testing.assert_close(wa.grad.cpu(), w.grad, atol=1e-5, rtol=1e-5)
    out = torch.empty(0, device="accel")
    torch.logcumsumexp(w.detach().to("accel"), 0, out=out)
    close(out, torch.logcumsumexp(w.detach(), 0))
    assert_native()


def test_long_float_cumsum_as_accurate_as_cpu():
    # CPU adds a float cumsum in double (at::acc_type<float, false>); so does accel, chunked,
    # so every prefix is the float nearest the exact one: as close to float64 as CPU's.
    # Added in float in sequence, 2^22 values drift by ~1e3 times CPU's error.
    x = torch.rand(1 << 22)
    exact = x.double().cumsum(0)
    err = {
        device: (x.to(device).cumsum(0).cpu().double() - exact).abs().max().item()
        for device in ("cpu", "accel")
    }
    assert err["accel"] <= 1.01 * err["cpu"], err
    assert_native()


def test_lines_of_more_chunks_than_the_carries_fan_in():
    # 70 host chunks: more than the 64 carries a task folds (ScanGeometry::fan_in), so the
    # carries are scanned in two levels; the same for nonzero's counts and index bounds.
    n = 70 * SPLIT // 2 + 123
    x = torch.randn(n)
    a = x.to("accel")
    close(a.cumsum(0), x.cumsum(0))
    i = x.mul(2).round().long()
    assert torch.equal(i.to("accel").cumsum(0).cpu(), i.cumsum(0))
    got, want = torch.cummax(i.to("accel"), 0), torch.cummax(i, 0)
    assert torch.equal(got.values.cpu(), want.values)
    assert torch.equal(got.indices.cpu(), want.indices)
    m = x > 0.3
    assert torch.equal(m.to("accel").nonzero().cpu(), m.nonzero())
    assert torch.count_nonzero(m.to("accel")).item() == torch.count_nonzero(m).item()
    idx = torch.randint(-1000, 1000, (n,))
    idx[n - 7] = 999
    idx[5] = -1000
    table = torch.randn(1000)
    assert torch.equal(table.to("accel")[idx.to("accel")].cpu(), table[idx])
    idx[n // 2] = 1000  # one bad entry, in a middle chunk
    with pytest.raises(IndexError):
        table.to("accel")[idx.to("accel")]
    assert_native()


def test_integer_cumsum_exact_near_the_int64_range():
    # Large int64 values and a bool / int32 input cast to int64 first, as CPU does.
    x = torch.randint(-(1 << 40), 1 << 40, (3, 70001))
    assert torch.equal(x.to("accel").cumsum(1).cpu(), x.cumsum(1))
    m = torch.rand(100003) > 0.5
    assert torch.equal(m.to("accel").cumsum(0).cpu(), m.cumsum(0))
    i = torch.randint(-5, 5, (100003,), dtype=torch.int32)
    assert torch.equal(i.to("accel").cumsum(0).cpu(), i.cumsum(0))
    assert torch.equal(
        i.to("accel").cumsum(0, dtype=torch.float64).cpu(), i.cumsum(0, dtype=torch.float64)
    )
    assert_native()


# ---- nonzero and what is built on it ----------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.float32, torch.int64, torch.uint8, torch.float16]
)
def test_nonzero_family_bigger_than_a_chunk(dtype):
    # 37 * 61 * 53 = 119621 elements: several chunks on either driver.
    x = torch.randn(37, 61, 53)
    x = (x > 0.4) if dtype == torch.bool else torch.where(x > 0.4, x * 3, 0).to(dtype)
    a = x.to("accel")
    assert torch.equal(a.nonzero().cpu(), x.nonzero())
    assert torch.equal(torch.argwhere(a).cpu(), torch.argwhere(x))
    for got, want in zip(torch.nonzero(a, as_tuple=True), torch.nonzero(x, as_tuple=True)):
        assert torch.equal(got.cpu(), want)
    assert torch.equal(torch.count_nonzero(a).cpu(), torch.count_nonzero(x))
    assert torch.equal(torch.count_nonzero(a, dim=1).cpu(), torch.count_nonzero(x, dim=1))
    # Non-contiguous: row-major order of the logical tensor, not of its memory.
    t = a.transpose(0, 2)
    assert torch.equal(t.nonzero().cpu(), x.transpose(0, 2).nonzero())
    assert_native()


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.complex64])
def test_nonzero_static_pads_or_cuts_without_a_sync(dtype):
    # 119621 elements (several chunks); sizes that cut inside a chunk, match, and pad.
    x = torch.randn(37, 61, 53)
    x = (x > 0.4) if dtype == torch.bool else torch.where(x > 0.4, x * 3, 0).to(dtype)
    a = x.to("accel")
    count = int(torch.count_nonzero(x))
    torch.accel.set_sync_debug_mode("error")  # the shape is known: no read-back
    try:
        got = {
            (size, fill): torch.nonzero_static(a, size=size, fill_value=fill)
            for size, fill in ((0, -1), (1, -1), (count // 3, -1), (count, 0), (count + 5, 7))
        }
        t = torch.nonzero_static(a.transpose(0, 2), size=count + 1)
    finally:
        torch.accel.set_sync_debug_mode(0)
    for (size, fill), g in got.items():
        assert torch.equal(g.cpu(), torch.nonzero_static(x, size=size, fill_value=fill))
    assert torch.equal(t.cpu(), torch.nonzero_static(x.transpose(0, 2), size=count + 1))
    out = torch.empty(0, 3, dtype=torch.long, device="accel")
    torch.nonzero_static(a, size=10, out=out)
    assert torch.equal(out.cpu(), torch.nonzero_static(x, size=10))
    # A 0-d and an empty input: fill_value rows, as CPU.
    for v in (torch.tensor(3.0), torch.zeros(0, 4)):
        want = torch.nonzero_static(v, size=2, fill_value=5)
        assert torch.equal(torch.nonzero_static(v.to("accel"), size=2, fill_value=5).cpu(), want)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.nonzero_static(a, size=-1)
    assert_native()


def test_masked_select_and_boolean_indexing_bigger_than_a_chunk():
    x = torch.randn(300, 401)
    mask = torch.rand(300, 401) > 0.7
    a, m = x.to("accel"), mask.to("accel")
    assert torch.equal(a.masked_select(m).cpu(), x.masked_select(mask))
    row = mask[0]  # broadcast along dim 0
    assert torch.equal(a.masked_select(row.to("accel")).cpu(), x.masked_select(row))
    assert torch.equal(a[m].cpu(), x[mask])
    assert torch.equal(torch.where(m)[1].cpu(), torch.where(mask)[1])
    # All set and none set: the counts' edge values.
    ones = torch.ones(SPLIT + 5, dtype=torch.bool)
    assert torch.equal(ones.to("accel").nonzero().cpu(), ones.nonzero())
    assert ones.logical_not().to("accel").nonzero().shape == (0, 1)
    assert_native()


def test_index_bounds_of_a_long_index():
    # Advanced indexing checks its index's range with the chunked bounds: the extremes sit in
    # different chunks, negative indices wrap, and one bad entry is found wherever it is.
    x = torch.randn(1000)
    idx = torch.randint(-1000, 1000, (200003,))
    idx[5] = -1000
    idx[150000] = 999
    a = x.to("accel")
    assert torch.equal(a[idx.to("accel")].cpu(), x[idx])
    assert torch.equal(
        a.index_select(0, idx.remainder(1000).to("accel")).cpu(),
        x.index_select(0, idx.remainder(1000)),
    )
    bad = idx.clone()
    bad[123456] = 1000
    with pytest.raises(
        IndexError, match="index 1000 is out of bounds for dimension 0 with size 1000"
    ):
        a[bad.to("accel")]
    torch.accel.synchronize()
    assert torch.equal(a[idx.to("accel")].cpu(), x[idx])  # the device still works
    assert_native()


def test_unique_bigger_than_a_chunk():
    # unique finds its groups' starts with nonzero (aten/set_ops.cpp).
    x = torch.randint(0, 5000, (100003,))
    got = torch.unique(x.to("accel"), return_inverse=True, return_counts=True)
    want = torch.unique(x, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w)
    got = torch.unique_consecutive(x.sort().values.to("accel"), return_counts=True)
    want = torch.unique_consecutive(x.sort().values, return_counts=True)
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w)
    assert_native()
