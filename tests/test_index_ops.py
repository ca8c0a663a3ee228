"""Native indexing, shape and sort ops against CPU: index_select, gather, scatter(_add),
scatter_reduce, index_add, index_reduce, advanced indexing read and write, embedding
(+ backward, renorm), nonzero, cat/stack, triu/tril, arange, linspace, logspace, linalg_cross,
sort/topk, searchsorted/bucketize, and bad indices (a clear error, then the device still
works)."""

import re

import pytest
import torch

import torch_accel
from conftest import REAL_DTYPES as DTYPES


def sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 10
    if dtype == torch.bool:
        return x > 0
    if dtype == torch.uint8:
        return x.abs().to(dtype)
    return x.to(dtype)


def dev(t):
    return t.to("accel")


def assert_native():
    assert torch_accel.fallback_counts() == {}


def noncontig(t):
    """The same values as t, laid out transposed in device memory."""
    return dev(t.transpose(0, -1).contiguous()).transpose(0, -1)


# ---- index_select / gather / scatter / index_add ------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_index_select(dtype, index_dtype):
    x = sample((5, 6, 7), dtype)
    for dim in [0, 1, -1]:
        idx = torch.tensor([3, 0, 3, 1, 4], dtype=index_dtype) % x.shape[dim]
        expected = x.index_select(dim, idx)
        torch.testing.assert_close(dev(x).index_select(dim, dev(idx)).cpu(), expected)
        torch.testing.assert_close(noncontig(x).index_select(dim, dev(idx)).cpu(), expected)
        out = torch.empty(0, dtype=dtype, device="accel")
        torch.index_select(dev(x), dim, dev(idx), out=out)
        torch.testing.assert_close(out.cpu(), expected)
    assert_native()


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather(dtype):
    x = sample((4, 5, 6), dtype)
    for dim in [0, 1, 2, -2]:
        idx = torch.randint(0, x.shape[dim], (3, 4, 5))
        expected = torch.gather(x, dim, idx)
        torch.testing.assert_close(torch.gather(dev(x), dim, dev(idx)).cpu(), expected)
        torch.testing.assert_close(torch.gather(noncontig(x), dim, noncontig(idx)).cpu(), expected)
    idx32 = torch.randint(0, 5, (4, 2, 6), dtype=torch.int32)
    torch.testing.assert_close(torch.gather(dev(x), 1, dev(idx32)).cpu(), torch.gather(x, 1, idx32))
    assert_native()


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_src_value_and_add(dtype):
    x = sample((5, 6), dtype)
    src = sample((5, 6), dtype, seed=1)
    # a permutation per column: no duplicate targets, so plain scatter is deterministic
    for dim, index in [
        (0, torch.argsort(torch.rand(5, 6), dim=0)[:3]),
        (1, torch.argsort(torch.rand(5, 6), dim=1)[:, :4]),
    ]:
        torch.testing.assert_close(
            dev(x).scatter(dim, dev(index), dev(src)).cpu(), x.scatter(dim, index, src)
        )
        a = dev(x)
        a.scatter_(dim, dev(index), dev(src))
        torch.testing.assert_close(a.cpu(), x.scatter(dim, index, src))
        value = 3 if dtype != torch.bool else True
        torch.testing.assert_close(
            dev(x).scatter(dim, dev(index), value).cpu(), x.scatter(dim, index, value)
        )
    if dtype != torch.bool:
        dup = torch.randint(0, 5, (7, 6))  # duplicates accumulate
        big = sample((7, 6), dtype, seed=2)
        expected = x.scatter_add(0, dup, big)
        tol = dict(atol=0.1, rtol=0.02) if dtype in (torch.bfloat16, torch.float16) else {}
        torch.testing.assert_close(dev(x).scatter_add(0, dev(dup), dev(big)).cpu(), expected, **tol)
        a = noncontig(x)
        a.scatter_add_(0, dev(dup), dev(big))
        torch.testing.assert_close(a.cpu(), expected, **tol)
    assert_native()


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != torch.bool])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_value_with_reduce(dtype, reduce):
    # Duplicate targets combine: a scalar added or multiplied in once per index entry.
    x = sample((4, 5), dtype)
    index = torch.randint(0, 4, (6, 5))
    value = 3 if not dtype.is_floating_point else 1.25
    expected = x.scatter(0, index, value, reduce=reduce)
    torch.testing.assert_close(dev(x).scatter(0, dev(index), value, reduce=reduce).cpu(), expected)
    a = noncontig(x)
    a.scatter_(0, dev(index), value, reduce=reduce)
    torch.testing.assert_close(a.cpu(), expected)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.scatter(dev(x), 1, dev(index[:4, :3] % 5), value, reduce=reduce, out=out)
    torch.testing.assert_close(out.cpu(), x.scatter(1, index[:4, :3] % 5, value, reduce=reduce))
    assert_native()
    with pytest.raises(RuntimeError, match="index 9 is out of bounds"):
        dev(x).scatter(0, dev(torch.tensor([[9]])), value, reduce=reduce)
    torch.testing.assert_close(dev(x).scatter(0, dev(index), value, reduce=reduce).cpu(), expected)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.int32]
)
def test_index_add_with_duplicates_and_alpha(dtype):
    x = sample((6, 5, 4), dtype)
    for dim in [0, 1, -1]:
        n = 9
        idx = torch.randint(0, x.shape[dim], (n,))
        shape = list(x.shape)
        shape[dim] = n
        src = sample(shape, dtype, seed=3)
        alpha = 2 if not dtype.is_floating_point else 0.5
        expected = x.index_add(dim, idx, src, alpha=alpha)
        tol = dict(atol=0.2, rtol=0.02) if dtype == torch.bfloat16 else {}
        torch.testing.assert_close(
            dev(x).index_add(dim, dev(idx), dev(src), alpha=alpha).cpu(), expected, **tol
        )
        a = noncontig(x)
        a.index_add_(dim, dev(idx.int()), noncontig(src), alpha=alpha)
        torch.testing.assert_close(a.cpu(), expected, **tol)
    assert_native()


# Rows no index varies along run as runs of the row (kernels/index.h IndexRowsOp): widths
# around the minimum (8) and past the host's run length (4096), contiguous and strided rows.
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("width", [7, 8, 33, 4096 + 5])
def test_indexed_rows(dtype, width):
    x = sample((6, width), dtype)
    idx = torch.tensor([5, 0, 5, 2, 1, 5, 3])
    strided = dev(x.t().contiguous()).t()  # rows with a stride of 6 elements
    for a in (dev(x), strided):
        assert torch.equal(a.index_select(0, dev(idx)).cpu(), x.index_select(0, idx))
        assert torch.equal(a[dev(idx)].cpu(), x[idx])
        assert torch.equal(a[dev(idx), 1:].cpu(), x[idx, 1:])
    src = sample((7, width), dtype, seed=2)
    uniq = torch.tensor([4, 0, 2])
    # A write with duplicates is undefined (PyTorch's rule), so unique indices; sums with
    # duplicates add in index order, as CPU's, floats compared bit for bit.
    puts = [(uniq, src[:3], False)] + ([(idx, src, True)] if dtype != torch.bool else [])
    for where, values, accumulate in puts:
        expected = x.clone().index_put_((where,), values, accumulate=accumulate)
        a = strided.clone()
        a.index_put_((dev(where),), dev(values), accumulate=accumulate)
        assert torch.equal(a.cpu(), expected)
    if dtype != torch.bool:
        alpha = 3 if dtype == torch.int64 else 0.5
        assert torch.equal(
            dev(x).index_add(0, dev(idx), dev(src), alpha=alpha).cpu(),
            x.index_add(0, idx, src, alpha=alpha),
        )
    assert torch.equal(
        dev(x).index_copy(0, dev(uniq), dev(src[:3])).cpu(), x.index_copy(0, uniq, src[:3])
    )
    assert torch.equal(dev(x).index_fill(0, dev(idx), 1).cpu(), x.index_fill(0, idx, 1))
    assert_native()


def test_embedding_backward_rows_add_in_index_order():
    ids = torch.randint(0, 10, (4, 50), generator=torch.Generator().manual_seed(0))
    grad = torch.randn(4, 50, 300)
    expected = torch.ops.aten.embedding_dense_backward(grad, ids, 10, -1, False)
    got = torch.ops.aten.embedding_dense_backward(dev(grad), dev(ids), 10, -1, False)
    assert torch.equal(got.cpu(), expected)
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_index_copy_index_fill_and_reductions(dtype):
    x = sample((5, 4, 3), dtype)
    src = sample((5, 2, 3), dtype, seed=8)
    idx = torch.tensor([3, 0])
    torch.testing.assert_close(
        dev(x).index_copy(1, dev(idx), dev(src)).cpu(), x.index_copy(1, idx, src)
    )
    value = True if dtype == torch.bool else 4
    a = noncontig(x)
    a.index_fill_(-1, dev(torch.tensor([2, -3])), value)
    torch.testing.assert_close(a.cpu(), x.index_fill(-1, torch.tensor([2, -3]), value))
    if dtype != torch.bool:
        dup = torch.randint(0, 5, (3, 4, 3))
        s = sample((3, 4, 3), dtype, seed=9)
        tol = dict(atol=0.05, rtol=0.01) if dtype == torch.float16 else {}
        torch.testing.assert_close(
            dev(x).scatter(0, dev(dup), dev(s), reduce="add").cpu(),
            x.scatter(0, dup, s, reduce="add"),
            **tol,
        )
        torch.testing.assert_close(
            dev(x).scatter_reduce(0, dev(dup), dev(s), "sum").cpu(),
            x.scatter_reduce(0, dup, s, "sum"),
            **tol,
        )
    mask = sample((4, 1), torch.bool, seed=10)
    torch.testing.assert_close(dev(x).masked_select(dev(mask)).cpu(), x.masked_select(mask))
    # masked_scatter (cumprod's backward uses it): a broadcast mask, a longer source.
    src = sample((70,), dtype, seed=11)
    torch.testing.assert_close(
        dev(x).masked_scatter(dev(mask), dev(src)).cpu(), x.masked_scatter(mask, src)
    )
    assert_native()


REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def with_nans(t):
    if t.is_floating_point():
        t = t.clone()
        t.view(-1)[3::7] = float("nan")
    return t


def assert_same(actual, expected):
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_and_index_reduce(dtype, include_self):
    # Duplicate targets, NaNs (they win amax/amin and spread through the rest, as on CPU),
    # integer mean's floor division: the results equal CPU's exactly.
    x = with_nans(sample((5, 4), dtype))
    src = with_nans(sample((6, 4), dtype, seed=2))
    index = torch.randint(0, 5, (6, 4), generator=torch.Generator().manual_seed(3))
    rows = torch.tensor([3, 0, 3, 1, 4, 0])
    for reduce in REDUCES if dtype != torch.bool else ["sum", "prod", "amax", "amin"]:
        kw = dict(include_self=include_self)
        expected = x.scatter_reduce(0, index, src, reduce, **kw)
        assert_same(dev(x).scatter_reduce(0, dev(index), dev(src), reduce, **kw), expected)
        a = noncontig(x)
        a.scatter_reduce_(1, dev(index[:5, :3] % 4), noncontig(src), reduce, **kw)
        assert_same(a, x.scatter_reduce(1, index[:5, :3] % 4, src, reduce, **kw))
        out = torch.empty(0, dtype=dtype, device="accel")
        torch.scatter_reduce(dev(x), 0, dev(index), dev(src), reduce, **kw, out=out)
        assert_same(out, expected)
        if reduce == "sum" or (dtype == torch.bool and not include_self):
            continue  # CPU has neither
        expected = x.index_reduce(0, rows, src, reduce, **kw)
        assert_same(dev(x).index_reduce(0, dev(rows), dev(src), reduce, **kw), expected)
        a = noncontig(x)
        a.index_reduce_(1, dev(rows[:4] % 4).int(), noncontig(src[:5]), reduce, **kw)
        assert_same(a, x.index_reduce(1, (rows[:4] % 4).int(), src[:5], reduce, **kw))
        out = torch.empty(0, dtype=dtype, device="accel")
        torch.index_reduce(dev(x), 0, dev(rows), dev(src), reduce, **kw, out=out)
        assert_same(out, expected)
    if dtype != torch.bool:
        assert_same(
            dev(x).scatter(0, dev(index), dev(src), reduce="multiply"),
            x.scatter(0, index, src, reduce="multiply"),
        )
    assert_native()


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_and_index_reduce_backward(include_self):
    x = sample((5, 4), torch.float32)
    src = sample((6, 4), torch.float32, seed=2)
    src[2, 1] = 0.0  # prod's gradient around a zero
    index = torch.randint(0, 5, (6, 4), generator=torch.Generator().manual_seed(3))
    rows = torch.tensor([3, 0, 3, 1, 4, 0])
    weight = sample((5, 4), torch.float32, seed=4)
    calls = [lambda s, i, v, r: s.scatter_reduce(0, i, v, r, include_self=include_self)] + [
        lambda s, i, v, r: s.index_reduce(0, i, v, r, include_self=include_self)
    ]
    for k, call in enumerate(calls):
        for reduce in REDUCES[k:]:
            grads = []
            for d in (torch.clone, dev):
                xs = d(x).requires_grad_()
                ss = d(src).requires_grad_()
                (call(xs, d(index if k == 0 else rows), ss, reduce) * d(weight)).sum().backward()
                grads.append((xs.grad.cpu(), ss.grad.cpu()))
            torch.testing.assert_close(grads[1], grads[0], msg=reduce)
    assert_native()


def test_scatter_reduce_bad_arguments():
    x = torch.zeros(3, device="accel")
    i = torch.tensor([0], device="accel")
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean"):
        x.scatter_reduce(0, i, x, "max")
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax"):
        x.index_reduce(0, i, x[:1], "sum")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, i, x.double(), "amax")
    with pytest.raises(RuntimeError, match="must have the same scalar type"):
        x.index_reduce(0, i, x[:1].double(), "amax")
    with pytest.raises(RuntimeError, match="source tensor shape must match self tensor shape"):
        x[0].index_reduce(0, i, x[:1], "amax")  # a 0-dim self takes a 0-dim source only


# ---- advanced indexing ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_advanced_indexing_read(dtype):
    x = sample((5, 6, 7), dtype)
    a = dev(x)
    i = torch.tensor([4, 0, -1, 2])
    j = torch.tensor([[1, 4], [0, -5]])
    cases = [
        lambda t, ii, jj: t[ii],
        lambda t, ii, jj: t[:, ii],
        lambda t, ii, jj: t[..., ii],
        lambda t, ii, jj: t[ii, :, ii],  # non-adjacent: transposed to the front
        lambda t, ii, jj: t[jj, jj],  # broadcast 2-D indices
        lambda t, ii, jj: t[1:, jj],
        lambda t, ii, jj: t[ii.int()],
    ]
    for case in cases:
        torch.testing.assert_close(case(a, dev(i), dev(j)).cpu(), case(x, i, j))
    torch.testing.assert_close(a.transpose(0, 2)[dev(i)].cpu(), x.transpose(0, 2)[i])
    mask = sample((5, 6), torch.bool, seed=4)
    torch.testing.assert_close(a[dev(mask)].cpu(), x[mask])
    torch.testing.assert_close(a[:, dev(mask[0])].cpu(), x[:, mask[0]])
    torch.testing.assert_close(
        a[dev(torch.zeros(5, dtype=torch.bool))].cpu(), x[torch.zeros(5, dtype=torch.bool)]
    )
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.uint8])
def test_advanced_indexing_write(dtype):
    x = sample((6, 5), dtype)
    v = sample((3, 5), dtype, seed=5)
    i = torch.tensor([4, 0, 2])
    a, e = dev(x), x.clone()
    a[dev(i)] = dev(v)
    e[i] = v
    torch.testing.assert_close(a.cpu(), e)
    a[:, dev(torch.tensor([1, -1]))] = dev(v[0, 0])  # 0-dim value broadcast
    e[:, torch.tensor([1, -1])] = v[0, 0]
    torch.testing.assert_close(a.cpu(), e)
    mask = sample((6, 5), torch.bool, seed=6)
    a[dev(mask)] = 7
    e[mask] = 7
    torch.testing.assert_close(a.cpu(), e)
    # a CPU mask on an accel tensor; values of another dtype are rejected like on CPU
    with pytest.raises(
        IndexError, match="Index put requires the source and destination dtypes match"
    ):
        a[dev(i)] = dev(torch.ones(5, dtype=torch.float64))
    a[mask] = 2
    e[mask] = 2
    torch.testing.assert_close(a.cpu(), e)
    # accumulate with duplicate indices
    dup = torch.tensor([1, 3, 1, 1, 5])
    w = sample((5, 5), dtype, seed=7)
    expected = x.clone().index_put_((dup,), w, accumulate=True)
    got = dev(x).index_put_((dev(dup),), dev(w), accumulate=True)
    tol = dict(atol=0.2, rtol=0.02) if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(got.cpu(), expected, **tol)
    # x[idx] += v (read, add, write)
    b, f = noncontig(x), x.clone()
    b[dev(i)] += dev(v)
    f[i] += v
    torch.testing.assert_close(b.cpu(), f, **tol)
    assert_native()


# ---- embedding --------------------------------------------------------------------------------


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_forward_backward(padding_idx):
    weight = torch.randn(10, 4, dtype=torch.float64)
    ids = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
    wc = weight.clone().requires_grad_()
    wa = dev(weight).requires_grad_()
    out_c = torch.nn.functional.embedding(ids, wc, padding_idx=padding_idx)
    out_a = torch.nn.functional.embedding(dev(ids), wa, padding_idx=padding_idx)
    torch.testing.assert_close(out_a.detach().cpu(), out_c.detach())
    grad = torch.randn(out_c.shape, dtype=torch.float64)
    out_c.backward(grad)
    out_a.backward(dev(grad))
    torch.testing.assert_close(wa.grad.cpu(), wc.grad)
    assert_native()


BACKWARD = {
    "index": lambda t, i: t[i],
    "index_select": lambda t, i: t.index_select(0, i),
    "gather": lambda t, i: torch.gather(t, 0, i[:, None].expand(4, 4)),
    "cat": lambda t, i: torch.cat([t, t[:1]])[1:],
    "topk": lambda t, i: t.topk(2, dim=0)[0],
    "sort": lambda t, i: t.sort(1)[0],
}


@pytest.mark.parametrize("name", list(BACKWARD))
def test_backward_is_native(name):
    """The backward of each op (index_put accumulate, index_add, scatter_add, ...) is native."""
    f = BACKWARD[name]
    x = torch.randn(5, 4, dtype=torch.float64)
    idx = torch.tensor([1, 3, 1, 0])  # a duplicate: its gradient accumulates
    xc, xa = x.clone().requires_grad_(), dev(x).requires_grad_()
    out_c, out_a = f(xc, idx), f(xa, dev(idx))
    grad = torch.randn(out_c.shape, dtype=torch.float64)
    out_c.backward(grad)
    out_a.backward(dev(grad))
    torch.testing.assert_close(xa.grad.cpu(), xc.grad)
    assert_native()


# ---- nonzero, cat, stack, triu/tril, arange ----------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.float32, torch.int64, torch.uint8, torch.float16]
)
def test_nonzero(dtype):
    for shape in [(0,), (7,), (3, 4), (2, 3, 5), ()]:
        x = (
            sample(shape, dtype)
            if dtype == torch.bool
            else (sample(shape, torch.float32) > 3).to(dtype)
        )
        got, want = dev(x).nonzero(), x.nonzero()
        torch.testing.assert_close(got.cpu(), want)
        # CPU's column-major layout, which torch.compile's fake kernel predicts and asserts
        assert got.stride() == want.stride(), (shape, got.stride(), want.stride())
    x = sample((4, 6), torch.bool)
    torch.testing.assert_close(noncontig(x).nonzero().cpu(), x.nonzero())
    big = sample((3000,), torch.float32) > 0
    torch.testing.assert_close(dev(big).nonzero().cpu(), big.nonzero())
    assert_native()


def test_cat_and_stack():
    parts = [sample((2, 3, 4), torch.float32, seed=s) for s in range(5)]
    for n in range(1, 6):
        for dim in [0, 1, 2, -1]:
            torch.testing.assert_close(
                torch.cat([dev(p) for p in parts[:n]], dim).cpu(), torch.cat(parts[:n], dim)
            )
            torch.testing.assert_close(
                torch.stack([dev(p) for p in parts[:n]], dim).cpu(), torch.stack(parts[:n], dim)
            )
    # mixed dtypes promote, legacy empty tensors are skipped, non-contiguous inputs
    mixed = [sample((2, 3), torch.int32), sample((4, 3), torch.bfloat16), torch.empty(0)]
    torch.testing.assert_close(torch.cat([dev(m) for m in mixed]).cpu(), torch.cat(mixed))
    nc = sample((3, 5), torch.int64)
    torch.testing.assert_close(torch.cat([noncontig(nc), dev(nc)], 1).cpu(), torch.cat([nc, nc], 1))
    out = torch.empty(0, dtype=torch.float64, device="accel")
    torch.cat([dev(p) for p in parts[:2]], 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.cat(parts[:2], 1).double())
    assert_native()


def test_cat_keeps_the_inputs_memory_format():
    # CPU's (and the meta function's) layout: the inputs' common memory format, else
    # contiguous; a given out= of the right shape keeps its own.
    cl = sample((2, 3, 4, 5), torch.float32).to(memory_format=torch.channels_last)
    cl3d = sample((2, 3, 2, 4, 5), torch.float32).to(memory_format=torch.channels_last_3d)
    plain = sample((2, 3, 4, 5), torch.float32, seed=1)
    for parts in [[cl, cl], [cl, plain], [cl3d, cl3d], [cl, torch.empty(0)]]:
        for dim in [0, 1, 3]:
            want = torch.cat(parts, dim)
            got = torch.cat([p.to("accel") for p in parts], dim)
            torch.testing.assert_close(got.cpu(), want)
            assert got.stride() == want.stride(), (dim, got.stride(), want.stride())
    out = torch.empty(2, 3, 4, 10, device="accel")
    torch.cat([cl.to("accel")] * 2, 3, out=out)
    assert out.is_contiguous()
    torch.testing.assert_close(out.cpu(), torch.cat([cl, cl], 3))
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_triu_tril(dtype):
    x = sample((3, 5, 6), dtype)
    for k in [-2, 0, 1, 4]:
        torch.testing.assert_close(dev(x).triu(k).cpu(), x.triu(k))
        torch.testing.assert_close(noncontig(x).tril(k).cpu(), x.tril(k))
        a = dev(x)
        a.tril_(k)
        torch.testing.assert_close(a.cpu(), x.tril(k))
        out = torch.empty(0, dtype=dtype, device="accel")
        torch.triu(dev(x), k, out=out)
        torch.testing.assert_close(out.cpu(), x.triu(k))
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_short_rows_copied_across_task_boundaries(dtype):
    # Flips and permuted copies whose innermost rows (3, 5 elements) are shorter than a strided
    # run: the host steps its row offsets across rows and starts tasks mid-row (200K elements
    # split over the pool). Exact values, against CPU.
    x = sample((97, 83, 5, 5), dtype)
    for dims in [(2, 3), (0,), (0, 3), (1, 2, 3)]:
        assert torch.equal(dev(x).flip(dims).cpu(), x.flip(dims))
    for perm in [(1, 0, 3, 2), (0, 2, 1, 3), (3, 1, 2, 0)]:
        assert torch.equal(dev(x).permute(perm).contiguous().cpu(), x.permute(perm).contiguous())
    y = sample((3, 41, 1627), dtype).transpose(0, 2)  # rows of 3, strided
    assert torch.equal(dev(y).contiguous().cpu(), y.contiguous())
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_flip_and_roll(dtype):
    x = sample((3, 4, 5), dtype)
    for dims in [(0,), (1, 2), (-1,), (0, 1, 2), ()]:
        torch.testing.assert_close(dev(x).flip(dims).cpu(), x.flip(dims))
        torch.testing.assert_close(noncontig(x).flip(dims).cpu(), x.flip(dims))
    for shifts, dims in [(1, 0), ((2, -1), (1, 2)), (7, None), (-3, -1)]:
        args = (shifts,) if dims is None else (shifts, dims)
        torch.testing.assert_close(dev(x).roll(*args).cpu(), x.roll(*args))
    assert_native()


def test_arange_and_factories():
    for args, kw in [
        ((10,), {}),
        ((2, 11, 3), {}),
        ((0, 1, 0.1), {}),
        ((5, -3, -2), {}),
        ((0, 4), dict(dtype=torch.bfloat16)),
        ((1, 2.5, 0.5), dict(dtype=torch.float64)),
    ]:
        torch.testing.assert_close(
            torch.arange(*args, device="accel", **kw).cpu(), torch.arange(*args, **kw)
        )
    torch.testing.assert_close(torch.ones(2, 3, device="accel").cpu(), torch.ones(2, 3))
    torch.testing.assert_close(torch.full((2,), 4, device="accel").cpu(), torch.full((2,), 4))
    assert_native()


def test_linspace():
    # From both ends as CPU. Half/bfloat16 step and round in their dtype as CPU does, so they
    # match exactly; an integer output takes integer ends (4.3 -> 4) and truncates; float32 and
    # float64 are within an ulp (CPU's vector loop steps from each vector's first element).
    for args, kw, exact in [
        ((0, 1, 11), {}, False),
        ((-3.5, 7.25, 1000), {}, False),
        ((2, -2, 7), dict(dtype=torch.float64), False),
        ((0, 1, 33), dict(dtype=torch.bfloat16), True),
        ((-2.0, 1, 50), dict(dtype=torch.bfloat16), True),
        ((10.7, 3.3, 300), dict(dtype=torch.half), True),
        ((0, 100, 7), dict(dtype=torch.int64), True),
        ((4.3, -3, 50), dict(dtype=torch.int64), True),
        ((-5, 5, 4), dict(dtype=torch.int32), True),
        ((3, 9, 1), {}, True),
        ((3, 9, 0), {}, True),
    ]:
        got = torch.linspace(*args, device="accel", **kw)
        expected = torch.linspace(*args, **kw)
        assert got.dtype == expected.dtype
        tol = dict(rtol=0, atol=0) if exact else {}
        torch.testing.assert_close(got.cpu(), expected, **tol)
    out = torch.empty(3, device="accel")
    torch.linspace(0, 1, 5, out=out[:0])  # an empty out= is resized
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        torch.linspace(0, 1, -1, device="accel")
    assert_native()


def test_logspace():
    # base ** e in double, e from both ends as CPU: equal to CPU's up to the last rounding.
    for args, kw in [
        ((0, 1, 11), {}),
        ((-3.5, 7.25, 100), dict(base=2.0)),
        ((2, -2, 7), dict(dtype=torch.float64)),
        ((0, 1, 33), dict(dtype=torch.bfloat16, base=3.0)),
        ((1.5, 1.5, 1), {}),
        ((3, 9, 0), {}),
    ]:
        got = torch.logspace(*args, device="accel", **kw)
        expected = torch.logspace(*args, **kw)
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got.cpu(), expected)
    out = torch.empty(0, device="accel", dtype=torch.float64)
    torch.logspace(-1, 2, 9, base=5, out=out)
    torch.testing.assert_close(out.cpu(), torch.logspace(-1, 2, 9, base=5, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        torch.logspace(0, 1, -1, device="accel")
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_linalg_cross(dtype):
    a = sample((4, 3, 5), dtype)
    b = sample((4, 3, 5), dtype, seed=1)
    for x, y, dim in [
        (a, b, 1),
        (a.transpose(0, 2), b[:1].transpose(0, 2), 1),
        (a[:, :, 0], b[:1, :, 0], -1),
    ]:
        expected = torch.linalg.cross(x, y, dim=dim)
        torch.testing.assert_close(torch.linalg.cross(dev(x), dev(y), dim=dim).cpu(), expected)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.linalg.cross(dev(a), dev(b), dim=1, out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.cross(a, b, dim=1))
    if dtype.is_floating_point:
        grads = []
        for d in (torch.clone, dev):
            xa, xb = d(a).requires_grad_(), d(b).requires_grad_()
            (torch.cross(xa, xb, dim=1) * d(b)).sum().backward()
            grads.append((xa.grad.cpu(), xb.grad.cpu()))
        # Sums of products near 1e4 that cancel: CPU may fuse a multiply-add.
        torch.testing.assert_close(grads[1], grads[0], rtol=1e-5, atol=1e-3)
    assert_native()
    with pytest.raises(RuntimeError, match="must have length 3"):
        torch.linalg.cross(dev(a), dev(b), dim=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        torch.linalg.cross(dev(a), dev(b[0]), dim=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_embedding_renorm(dtype):
    weight = sample((10, 4), dtype)
    ids = torch.tensor([[1, 2, 4, 1], [4, 3, 2, 9]])
    for max_norm, norm_type in [(5.0, 2.0), (1.0, 1.0), (100.0, 2.0)]:
        w = weight.clone()
        torch.embedding_renorm_(w, ids, max_norm, norm_type)
        a = dev(weight)
        torch.embedding_renorm_(a, dev(ids).int(), max_norm, norm_type)
        torch.testing.assert_close(a.cpu(), w)
    # nn.functional.embedding with max_norm renormalises the looked-up rows in place
    a = dev(weight)
    out = torch.nn.functional.embedding(dev(ids), a, max_norm=2.0)
    w = weight.clone()
    torch.testing.assert_close(out.cpu(), torch.nn.functional.embedding(ids, w, max_norm=2.0))
    torch.testing.assert_close(a.cpu(), w)
    assert_native()
    with pytest.raises(IndexError):
        torch.embedding_renorm_(dev(weight), dev(torch.tensor([10])), 1.0, 2.0)


def test_eye():
    # eye(n, m) and eye(n) into out=: zeros, then ones on the diagonal.
    for n, m, dtype in [
        (3, 5, torch.float32),
        (4, 2, torch.int64),
        (3, None, torch.bool),
        (0, 2, torch.float16),
        (3, 4, torch.complex64),
        (2, None, torch.complex128),
    ]:
        expected = torch.eye(n, dtype=dtype) if m is None else torch.eye(n, m, dtype=dtype)
        got = (
            torch.eye(n, dtype=dtype, device="accel")
            if m is None
            else torch.eye(n, m, dtype=dtype, device="accel")
        )
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)
    out = torch.full((2, 2), 7.0, device="accel")
    torch.eye(3, 4, out=out)  # resized, zeroed, then the diagonal set
    torch.testing.assert_close(out.cpu(), torch.eye(3, 4))
    with pytest.raises(RuntimeError, match="must be greater or equal to 0"):
        torch.eye(-1, device="accel")
    assert_native()


# ---- sort / topk ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.uint8]
)
def test_sort_and_argsort(dtype):
    # distinct values, so the indices are unique too
    x = (
        (torch.randperm(4 * 37 * 5).reshape(4, 37, 5) % 200).to(dtype)
        if dtype == torch.uint8
        else torch.randperm(4 * 37 * 5).reshape(4, 37, 5).to(dtype)
    )
    for dim in [0, 1, -1]:
        for descending in [False, True]:
            v, i = torch.sort(dev(x), dim=dim, descending=descending, stable=True)
            ev, ei = torch.sort(x, dim=dim, descending=descending, stable=True)
            torch.testing.assert_close(v.cpu(), ev)
            # uint8 and bfloat16 have ties: the stable order must match CPU's stable sort
            torch.testing.assert_close(i.cpu(), ei)
    torch.testing.assert_close(
        torch.argsort(noncontig(x), dim=1).cpu(), torch.argsort(x, dim=1, stable=True)
    )
    assert_native()


def test_sort_nan_and_topk():
    x = torch.tensor([[3.0, float("nan"), -1.0, 2.0, float("inf")], [0.5, -0.5, 7.0, 1.0, 2.0]])
    for descending in [False, True]:
        v, i = torch.sort(dev(x), descending=descending)
        ev, ei = torch.sort(x, descending=descending, stable=True)
        torch.testing.assert_close(v.cpu(), ev, equal_nan=True)
        torch.testing.assert_close(i.cpu(), ei)
    s = torch.tensor(3.0)  # 0-dim
    torch.testing.assert_close(torch.sort(dev(s))[0].cpu(), torch.sort(s)[0])
    torch.testing.assert_close(torch.topk(dev(s), 1)[1].cpu(), torch.topk(s, 1)[1])
    y = torch.randperm(600).reshape(6, 100).float()
    for k, dim, largest in [(5, -1, True), (3, 0, False), (1, 1, True), (100, 1, False)]:
        v, i = torch.topk(dev(y), k, dim=dim, largest=largest)
        ev, ei = torch.topk(y, k, dim=dim, largest=largest)
        torch.testing.assert_close(v.cpu(), ev)
        torch.testing.assert_close(i.cpu(), ei)
    assert_native()


# ---- searchsorted / bucketize -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_searchsorted_both_sides_and_sorter(dtype):
    g = torch.Generator().manual_seed(5)
    # Boundaries with repeats (ties decide left from right), values beyond both ends.
    rows = torch.randint(0, 12, (3, 10), generator=g).sort(-1).values.to(dtype)
    values = torch.randint(-2, 14, (3, 7), generator=g).to(dtype)
    flat = rows[0]
    for right, side in [(False, None), (True, None), (False, "right"), (False, "left")]:
        kw = dict(right=right, side=side)
        torch.testing.assert_close(
            torch.searchsorted(dev(rows), dev(values), **kw).cpu(),
            torch.searchsorted(rows, values, **kw),
        )
        # 1-D boundaries for every value, non-contiguous values, int32 out=.
        vt = values.t()
        out = torch.empty(0, dtype=torch.int32, device="accel")
        torch.searchsorted(dev(flat), dev(vt), out_int32=True, out=out, **kw)
        torch.testing.assert_close(out.cpu(), torch.searchsorted(flat, vt, out_int32=True, **kw))
        torch.testing.assert_close(
            torch.bucketize(dev(vt), dev(flat), right=right).cpu(),
            torch.bucketize(vt, flat, right=right),
        )
    # sorter: unsorted boundaries and the permutation that sorts them.
    shuffled = rows[:, torch.randperm(10, generator=g)]
    sorter = shuffled.argsort(dim=-1, stable=True)
    for right in (False, True):
        torch.testing.assert_close(
            torch.searchsorted(dev(shuffled), dev(values), right=right, sorter=dev(sorter)).cpu(),
            torch.searchsorted(shuffled, values, right=right, sorter=sorter),
        )
    # Scalars, and a value of another dtype (promoted, as CPU does).
    assert torch.searchsorted(dev(flat), 5).item() == torch.searchsorted(flat, 5).item()
    assert torch.bucketize(5, dev(flat), right=True).item() == torch.bucketize(5, flat, right=True)
    torch.testing.assert_close(
        torch.searchsorted(dev(flat), dev(values.double() + 0.5)).cpu(),
        torch.searchsorted(flat, values.double() + 0.5),
    )
    assert_native()


def test_searchsorted_nan_empty_and_bad_input():
    b = torch.tensor([1.0, 2.0, float("nan")])
    v = torch.tensor([[0.5, 2.0, float("nan")], [3.0, 1.0, -1.0]])
    for right in (False, True):
        torch.testing.assert_close(
            torch.searchsorted(dev(b), dev(v), right=right).cpu(),
            torch.searchsorted(b, v, right=right),
        )
    empty = torch.empty(0)
    torch.testing.assert_close(
        torch.searchsorted(dev(empty), dev(v)).cpu(), torch.searchsorted(empty, v)
    )
    torch.testing.assert_close(
        torch.searchsorted(dev(b), dev(empty)).cpu(), torch.searchsorted(b, empty)
    )
    assert_native()
    bad = [
        lambda d: torch.searchsorted(d(b), d(v), side="left", right=True),
        lambda d: torch.searchsorted(d(torch.ones(2, 3)), d(v[:1])),
        lambda d: torch.searchsorted(d(b), d(v), sorter=d(torch.tensor([0, 1, 3]))),
        lambda d: torch.bucketize(d(v), d(torch.ones(2, 3))),
    ]
    for call in bad:
        with pytest.raises(RuntimeError) as cpu_err:
            call(lambda t: t)
        with pytest.raises(RuntimeError, match=re.escape(str(cpu_err.value)[:30])):
            call(dev)


# ---- bad indices ---------------------------------------------------------------------------------

BAD = {
    "index_select": (
        "x.index_select(0, torch.tensor([0, 5], device='accel'))",
        "index out of range in self",
    ),
    "index_select negative": (
        "x.index_select(0, torch.tensor([-1], device='accel'))",
        "index out of range in self",
    ),
    "gather": (
        "torch.gather(x, 0, torch.tensor([[5, 0, 0]], device='accel'))",
        "index 5 is out of bounds for dimension 0 with size 3",
    ),
    "scatter": (
        "x.scatter_(0, torch.tensor([[7, 0, 0]], device='accel'), 1.0)",
        "index 7 is out of bounds for dimension 0 with size 3",
    ),
    "index_add": (
        "x.index_add_(0, torch.tensor([3], device='accel'), torch.ones(1, 3, device='accel'))",
        "index out of range in self",
    ),
    "scatter_reduce": (
        "x.scatter_reduce_(0, torch.tensor([[5, 0, 0]], device='accel'), x + 1, 'amax')",
        "index 5 is out of bounds for dimension 0 with size 3",
    ),
    "index_reduce": (
        "x.index_reduce_(0, torch.tensor([-1], device='accel'), x[:1] + 1, 'prod',"
        " include_self=False)",
        "index out of range in self",
    ),
    "index": (
        "x[torch.tensor([3], device='accel')]",
        "index 3 is out of bounds for dimension 0 with size 3",
    ),
    "index negative": (
        "x[:, torch.tensor([-4], device='accel')]",
        "index -4 is out of bounds for dimension 1 with size 3",
    ),
    "index_put": (
        "x.index_put_((torch.tensor([9], device='accel'),), torch.ones(3, device='accel'), "
        "accumulate=True)",
        "index 9 is out of bounds for dimension 0 with size 3",
    ),
    "embedding": (
        "torch.nn.functional.embedding(torch.tensor([3], device='accel'), x)",
        "index out of range in self",
    ),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_index_raises_and_device_survives(name):
    # The indices are checked on the device before any kernel runs (one small synchronising
    # copy), so the error is raised here, in this process, and nothing was written.
    stmt, message = BAD[name]
    x = torch.arange(9.0, device="accel").reshape(3, 3)
    with pytest.raises((IndexError, RuntimeError)) as info:
        exec(stmt, {"torch": torch, "x": x})
        torch.accel.synchronize()
    assert message in str(info.value).splitlines()[0]
    # the device, the allocator and x are intact
    y = torch.ones(1000, device="accel") * 2
    torch.accel.synchronize()
    assert x.cpu().flatten().tolist() == [float(i) for i in range(9)]
    assert y.cpu().sum().item() == 2000.0


# ---- take / put_ / repeat_interleave(repeats) --------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_and_put_over_the_flat_tensor(dtype):
    x = sample((4, 6), dtype)
    index = torch.tensor([[0, 23, -1], [5, -24, 7]])
    for src in (x, x.t()):  # logical order, also when the storage is transposed
        got = torch.take(noncontig(src) if src is x.t() else dev(src), dev(index))
        torch.testing.assert_close(got.cpu(), torch.take(src, index))
        out = torch.empty(0, dtype=dtype, device="accel")
        torch.take(dev(src), dev(index), out=out)
        torch.testing.assert_close(out.cpu(), torch.take(src, index))
    source = sample((2, 3), dtype, seed=1)
    for accumulate in (False, True):
        unique = torch.tensor([[1, 22, -3], [4, 0, 9]])
        want = x.t().clone().put_(unique, source, accumulate)
        got = noncontig(x.t().clone())
        got.put_(dev(unique), dev(source), accumulate)
        torch.testing.assert_close(got.cpu(), want)
    if dtype not in (torch.bool, torch.uint8):
        repeated = torch.tensor([3, 3, -21, 0])
        add = sample((4,), dtype, seed=2)
        want = x.clone().put_(repeated, add, accumulate=True)
        got = dev(x).put_(dev(repeated), dev(add), accumulate=True)
        torch.testing.assert_close(got.cpu(), want)
    assert_native()


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: torch.take(x, torch.tensor([24], device=d)),
        lambda x, d: torch.take(x, torch.tensor([-25], device=d)),
        lambda x, d: torch.take(x, torch.tensor([1.0], device=d)),
        lambda x, d: torch.take(x[:0], torch.tensor([0], device=d)),
        lambda x, d: x.put_(torch.tensor([24], device=d), torch.ones(1, device=d)),
        lambda x, d: x.put_(torch.tensor([1, 2], device=d), torch.ones(1, device=d)),
        lambda x, d: x.put_(torch.tensor([1], device=d).int(), torch.ones(1, device=d)),
    ],
    ids=[
        "past end",
        "before start",
        "float index",
        "empty self",
        "put past end",
        "put sizes",
        "put int32 index",
    ],
)
def test_take_and_put_bad_input_raise_cpus_error_type(call):
    x = torch.randn(4, 6)
    with pytest.raises(Exception) as cpu:
        call(x.clone(), "cpu")
    with pytest.raises(Exception) as acc:
        call(dev(x), "accel")
        torch.accel.synchronize()
    assert type(acc.value) is type(cpu.value), (acc.value, cpu.value)
    assert (dev(torch.ones(3)) * 2).cpu().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_repeat_interleave_of_repeats(dtype):
    repeats = torch.tensor([2, 0, 3, 1, 0], dtype=dtype)
    want = torch.repeat_interleave(repeats)
    got = torch.repeat_interleave(dev(repeats))
    assert got.dtype == want.dtype and torch.equal(got.cpu(), want)
    sized = torch.repeat_interleave(dev(repeats), output_size=6)
    assert torch.equal(sized.cpu(), want)
    # The forms built on it: a tensor with per-element and per-row repeats.
    x = sample((5, 3), torch.float32)
    torch.testing.assert_close(
        torch.repeat_interleave(dev(x), dev(repeats), dim=0).cpu(),
        torch.repeat_interleave(x, repeats, dim=0),
    )
    assert torch.repeat_interleave(dev(repeats[:0])).numel() == 0
    assert_native()
    for bad in (torch.tensor([1, -1], dtype=dtype), torch.tensor([[1, 2]], dtype=dtype)):
        with pytest.raises(RuntimeError) as cpu:
            torch.repeat_interleave(bad)
        with pytest.raises(RuntimeError) as acc:
            torch.repeat_interleave(dev(bad))
        assert str(acc.value).splitlines()[0] == str(cpu.value).splitlines()[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_channel_shuffle(dtype):
    x = sample((2, 6, 3, 4), dtype)
    for groups in (1, 2, 3, 6):
        torch.testing.assert_close(
            torch.nn.functional.channel_shuffle(dev(x), groups).cpu(),
            torch.nn.functional.channel_shuffle(x, groups),
            rtol=0,
            atol=0,
        )
    shuffle = torch.nn.ChannelShuffle(3)
    cl = x.contiguous(memory_format=torch.channels_last)
    got = shuffle(dev(cl))
    assert got.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(got.cpu(), shuffle(cl), rtol=0, atol=0)
    assert_native()
    for bad in ((x, 4), (x, 0), (x[0, 0], 2)):
        with pytest.raises(RuntimeError) as cpu:
            torch.nn.functional.channel_shuffle(*bad)
        with pytest.raises(RuntimeError) as acc:
            torch.nn.functional.channel_shuffle(dev(bad[0]), bad[1])
        assert str(acc.value) == str(cpu.value)


@pytest.mark.parametrize("fn", [torch.triu_indices, torch.tril_indices])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_triangle_indices(fn, dtype):
    for row, col, offset in [(4, 4, 0), (3, 5, 1), (5, 3, -2), (3, 3, 10), (3, 3, -10), (0, 2, 0)]:
        got = fn(row, col, offset, dtype=dtype, device="accel")
        want = fn(row, col, offset, dtype=dtype)
        assert got.dtype == want.dtype and torch.equal(got.cpu(), want)
    assert_native()
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        fn(-1, 3, device="accel")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_unfold_backward_adds_overlapping_windows(dtype):
    x = sample((3, 11, 2), dtype)
    for dim, size, step in [(1, 4, 2), (1, 3, 3), (0, 2, 1), (-1, 1, 1)]:
        grads = []
        for dev in ("cpu", "accel"):
            leaf = x.detach().to(dev).requires_grad_()
            y = leaf.unfold(dim, size, step)
            y.backward(torch.arange(y.numel(), dtype=dtype).view(y.shape).to(dev))
            grads.append(leaf.grad.cpu())
        torch.testing.assert_close(grads[1], grads[0])
    scalar = torch.tensor(3.0, device="accel", requires_grad=True)
    scalar.unfold(0, 1, 1).sum().backward()
    assert scalar.grad.item() == 1.0
    assert_native()


def test_unfold_backward_broadcasts_grad_as_cpu():
    # torch._refs.istft passes the window's squares with a batch of 1 for a batch of frames.
    g = sample((1, 6, 10), torch.float32)
    want = torch.ops.aten.unfold_backward(g, (10, 20), 1, 10, 2)
    got = torch.ops.aten.unfold_backward(g.to("accel"), (10, 20), 1, 10, 2)
    torch.testing.assert_close(got.cpu(), want)
    assert_native()
    with pytest.raises(RuntimeError, match=r"size of tensor a \(10\) must match .* b \(3\)"):
        torch.ops.aten.unfold_backward(torch.ones(3, 6, 10, device="accel"), (10, 20), 1, 10, 2)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_index_add_of_complex(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(5, 4, dtype=dtype, generator=g)
    src = torch.randn(6, 4, dtype=dtype, generator=g)
    index = torch.tensor([0, 2, 2, 4, 1, 0])
    for alpha in (1, -2.5):
        want = x.clone().index_add_(0, index, src, alpha=alpha)
        got = dev(x).index_add_(0, dev(index), dev(src), alpha=alpha)
        torch.testing.assert_close(got.cpu(), want)
    # along another dim, with a lazily conjugated source, out of place
    want = torch.index_add(x, 1, torch.tensor([3, 0]), src[:5, :2].conj())
    got = torch.index_add(dev(x), 1, dev(torch.tensor([3, 0])), dev(src[:5, :2]).conj())
    torch.testing.assert_close(got.cpu(), want)
    assert_native()


@pytest.mark.parametrize(
    "mask",
    [
        torch.zeros(0, 3),
        torch.zeros(2, 3),
        torch.tensor(3.0),
        torch.tensor(0.0),
        torch.ones(5),
        torch.arange(60.0).reshape(3, 4, 5) % 3 > 0,
        (torch.arange(16.0).reshape(4, 4) % 3 > 0).t(),
    ],
    ids=["empty", "none_set", "scalar", "scalar_zero", "all_set", "3d", "transposed"],
)
def test_nonzero_layout_matches_cpu(mask):
    """The functional form is column-major (strides (1, count)) as CPU's; out= keeps rows."""
    got, want = torch.nonzero(mask.to("accel")), torch.nonzero(mask)
    assert got.shape == want.shape and got.stride() == want.stride()
    assert torch.equal(got.cpu(), want)
    out = torch.empty(0, dtype=torch.long, device="accel")
    torch.nonzero(mask.to("accel"), out=out)
    assert out.is_contiguous() and torch.equal(out.cpu(), want)


COMPLEX = [torch.complex64, torch.complex128]


def _on_both(x, fn):
    """fn(t, device) on a copy of x on the CPU and on accel: (cpu result, accel result)."""
    return fn(x.clone(), "cpu"), fn(x.to("accel"), "accel")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_tensors_index_and_assign_natively_like_cpu(dtype):
    # The element-moving ops take a complex tensor as its real view: each index moves both
    # parts, and index_put_'s and scatter_add's accumulations add part to part (the complex sum).
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, 3, dtype=dtype, generator=g)
    idx = torch.tensor([3, 0, 3])
    mask = torch.rand(4, 5, generator=g) > 0.5
    values = torch.randn(3, 5, 3, dtype=dtype, generator=g)
    source = torch.randn(4, 2, 3, dtype=dtype, generator=g)
    scatter_index = torch.randint(0, 4, (3, 5, 3), generator=g)
    cases = {
        "index": lambda t, d: t[idx.to(d)],
        "index after a slice": lambda t, d: t[:, idx.to(d) % 5, 1:],
        "two indices": lambda t, d: t[idx.to(d), idx.to(d) % 5],
        "mask": lambda t, d: t[mask.to(d)],
        "index_put_": lambda t, d: t.index_put_((torch.tensor([1, 2, 0]).to(d),), values.to(d)),
        "index_put_ accumulate": lambda t, d: t.index_put_((idx.to(d),), values.to(d), True),
        "setitem": lambda t, d: t.__setitem__((slice(None), idx.to(d) % 5), 3 - 1j) or t,
        "masked_select": lambda t, d: t.masked_select(mask.unsqueeze(-1).to(d)),
        "masked_scatter_": lambda t, d: t.masked_scatter_(mask.unsqueeze(-1).to(d), values.to(d)),
        "index_copy": lambda t, d: t.index_copy(1, torch.tensor([4, 0]).to(d), source.to(d)),
        "index_fill complex": lambda t, d: t.index_fill(2, torch.tensor([0, 2]).to(d), 2 - 5j),
        "index_fill real": lambda t, d: t.index_fill(0, torch.tensor([1]).to(d), 7.0),
        "index_fill tensor": lambda t, d: t.index_fill(
            0, torch.tensor([1]).to(d), torch.tensor(1j, dtype=dtype).to(d)
        ),
        "masked_fill device value": lambda t, d: t.masked_fill(
            mask.unsqueeze(-1).to(d), torch.tensor(2 + 3j, dtype=dtype).to(d)
        ),
        "masked_fill real device value": lambda t, d: t.masked_fill(
            mask.unsqueeze(-1).to(d), torch.tensor(2.5).to(d)
        ),
        "scatter": lambda t, d: t.scatter(0, scatter_index.to(d), values.to(d)),
        "scatter_add": lambda t, d: t.scatter_add(0, scatter_index.to(d), values.to(d)),
        "scatter value": lambda t, d: t.scatter(1, scatter_index[:, :2].to(d), 2 - 1j),
        "triu": lambda t, d: t.triu(1),
        "tril_": lambda t, d: t.tril_(-1),
        "tril of a conjugate view": lambda t, d: t.conj().tril(),
    }
    torch_accel.reset_fallback_counts()
    for name, fn in cases.items():
        expected, got = _on_both(x, fn)
        assert got.device.type == "accel" and got.dtype == dtype, name
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0, msg=name)
    # The conjugate view's tril resolves on the fallback; every other case is native.
    assert set(torch_accel.fallback_counts()) <= {"aten::tril"}, torch_accel.fallback_counts()


def test_complex_indexing_refuses_indices_past_its_dimensions():
    # The real view has one more dimension: an index must not reach the parts.
    for device in ("cpu", "accel"):
        x = torch.randn(3, dtype=torch.complex64, device=device)
        with pytest.raises(IndexError, match="too many indices for tensor of dimension 1"):
            x[0, 1]
        with pytest.raises(IndexError, match="too many indices for tensor of dimension 1"):
            x[torch.ones(3, 2, dtype=torch.bool, device=device)]
        with pytest.raises(IndexError, match="out of bounds"):
            x[torch.tensor([5], device=device)]
        x[torch.tensor([2], device=device)] = 1j  # the device stays usable
        assert x[2].item() == 1j


def test_complex_indexing_gradients_match_cpu():
    # index's backward is index_put_ with accumulation: a repeated index sums both parts.
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, 4, dtype=torch.complex64, generator=g)
    w = torch.randn(4, 4, dtype=torch.complex64, generator=g)
    idx = torch.tensor([1, 3, 1, 0])
    grads = []
    for device in ("cpu", "accel"):
        leaf = x.to(device).detach().requires_grad_()
        picked = leaf[idx.to(device)].triu()
        (picked * w.to(device)).abs().sum().backward()
        grads.append(leaf.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-5, atol=1e-6)
