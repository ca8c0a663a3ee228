"""Native max pooling (2-D, 3-D, adaptive 2-D), average and adaptive average pooling (2-D and
3-D), max unpooling (2-D and 3-D) and their backward against CPU: values, indices, gradients,
stride/padding/dilation/ceil_mode, unbatched and non-contiguous inputs, bad input."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def pool_with(fn, device, x, dtype=torch.float32, **kw):
    """Values, indices and the input's gradient of a max pooling `fn` on `device`."""
    xd = x.to(device=device, dtype=dtype).detach().requires_grad_()
    y, idx = fn(xd, return_indices=True, **kw)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1)).to(device, dtype)
    (y * gy).sum().backward()
    return y.detach().cpu(), idx.cpu(), xd.grad.cpu()


def pool(device, x, dtype=torch.float32, **kw):
    return pool_with(F.max_pool2d, device, x, dtype, **kw)


CONFIGS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1)),
    dict(kernel_size=3, stride=2, dilation=2, padding=1),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=3, padding=1, ceil_mode=True),
]


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
@pytest.mark.parametrize("shape", [(2, 3, 9, 8), (3, 7, 10)])
def test_max_pool2d_matches_cpu(kw, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    for got, want in zip(pool("accel", x, **kw), pool("cpu", x, **kw)):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_max_pool2d_dtypes_and_non_contiguous(dtype):
    x = torch.randn(2, 4, 8, 10, generator=torch.Generator().manual_seed(2)).transpose(2, 3)
    assert not x.is_contiguous()
    kw = dict(kernel_size=3, stride=2, padding=1)
    for got, want in zip(pool("accel", x, dtype, **kw), pool("cpu", x, dtype, **kw)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    no_fallback()


def test_max_pool2d_ties_and_nan_pick_like_cpu():
    # After a ReLU most windows hold equal zeros: the first maximum wins, as on CPU.
    x = torch.relu(torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(3)) - 0.8)
    x[0, 0, 1, 1] = float("nan")
    for got, want in zip(pool("accel", x, kernel_size=2), pool("cpu", x, kernel_size=2)):
        torch.testing.assert_close(got, want, equal_nan=True)
    no_fallback()


def test_max_pool_kernel_follows_cpus_order_bit_for_bit():
    # Two NaN in a window: CPU's scan keeps the last. Overlapping windows (3, stride 2, and
    # 3-D): each input's gradient adds its windows' in CPU's order, so the sums are equal;
    # disjoint ones (2, stride 2) place each window's gradient.
    x = torch.randn(2, 3, 9, 9, generator=torch.Generator().manual_seed(4))
    x[0, 0, 2, 2] = x[0, 0, 2, 3] = x[1, 2, 0, 0] = float("nan")
    x[1, 1, :3, :3] = -float("inf")
    for fn, inp, kw in (
        (F.max_pool2d, x, dict(kernel_size=2)),  # disjoint windows: the gradient placed
        (F.max_pool2d, x, dict(kernel_size=2, padding=1, ceil_mode=True)),
        (F.max_pool2d, x, dict(kernel_size=3, stride=2, padding=1)),
        (F.max_pool2d, x, dict(kernel_size=3, stride=1, dilation=2, ceil_mode=True)),
        (F.max_pool3d, x.view(2, 3, 3, 3, 9), dict(kernel_size=(2, 2, 3), stride=1)),
        (F.max_pool1d, x.view(6, 9, 9), dict(kernel_size=4, stride=2, padding=2)),
    ):
        for got, want in zip(pool_with(fn, "accel", inp, **kw), pool_with(fn, "cpu", inp, **kw)):
            assert torch.equal(got.nan_to_num(0.5), want.nan_to_num(0.5))
    no_fallback()


@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=5), dict(kernel_size=2, padding=2), dict(kernel_size=0)],
    ids=["kernel-larger-than-input", "pad-over-half", "kernel-0"],
)
def test_max_pool2d_bad_input_raises_like_cpu(kw):
    x = torch.randn(1, 2, 3, 3)
    with pytest.raises(RuntimeError):
        F.max_pool2d(x, **kw)
    with pytest.raises(RuntimeError):
        F.max_pool2d(x.to("accel"), **kw)
    torch.testing.assert_close(F.max_pool2d(x.to("accel"), 2).cpu(), F.max_pool2d(x, 2))


def avg_pool(device, x, dtype=torch.float32, fn=F.avg_pool2d, **kw):
    xd = x.to(device=device, dtype=dtype).detach().requires_grad_()
    y = fn(xd, **kw)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1)).to(device, dtype)
    (y * gy).sum().backward()
    return y.detach().cpu(), xd.grad.cpu()


AVG_CONFIGS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), ceil_mode=True),
    dict(kernel_size=3, stride=2, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=1, padding=1, divisor_override=4),
]


@pytest.mark.parametrize(
    "kw", AVG_CONFIGS, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items())
)
@pytest.mark.parametrize("shape", [(2, 3, 9, 8), (3, 7, 10)])
def test_avg_pool2d_matches_cpu(kw, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    for got, want in zip(avg_pool("accel", x, **kw), avg_pool("cpu", x, **kw)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_avg_pool2d_dtypes_and_non_contiguous(dtype):
    x = torch.randn(2, 4, 8, 10, generator=torch.Generator().manual_seed(2)).transpose(2, 3)
    kw = dict(kernel_size=3, stride=2, padding=1)
    # bfloat16: CPU adds each window's share into the bfloat16 gradient, accel in float.
    tol = dict(rtol=2e-2, atol=1e-2) if dtype == torch.bfloat16 else {}
    for got, want in zip(avg_pool("accel", x, dtype, **kw), avg_pool("cpu", x, dtype, **kw)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, **tol)
    no_fallback()


@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=5), dict(kernel_size=2, padding=2), dict(kernel_size=2, divisor_override=0)],
    ids=["kernel-larger-than-input", "pad-over-half", "divisor-0"],
)
def test_avg_pool2d_bad_input_raises_like_cpu(kw):
    x = torch.randn(1, 2, 3, 3)
    with pytest.raises(RuntimeError):
        F.avg_pool2d(x, **kw)
    with pytest.raises(RuntimeError):
        F.avg_pool2d(x.to("accel"), **kw)
    torch.testing.assert_close(F.avg_pool2d(x.to("accel"), 2).cpu(), F.avg_pool2d(x, 2))


@pytest.mark.parametrize("out", [(3, 3), (4, 5), (7, 1), (9, 8), (2, 16)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_adaptive_avg_pool2d_matches_cpu(out, dtype):
    # Uneven windows (9 -> 4, 8 -> 5 overlap), identity, and upsampling output sizes.
    x = torch.randn(2, 3, 9, 8, generator=torch.Generator().manual_seed(4))
    res = []
    for device in ("accel", "cpu"):
        xd = x.to(device, dtype).requires_grad_()
        y = F.adaptive_avg_pool2d(xd, out)
        gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(5)).to(device, dtype)
        (y * gy).sum().backward()
        res.append((y.detach().cpu(), xd.grad.cpu()))
    for got, want in zip(*res):
        assert got.dtype == want.dtype
        if dtype == torch.float32:
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
        else:  # accel averages in float and rounds once, CPU rounds to bfloat16 on the way
            torch.testing.assert_close(got, want, rtol=2e-2, atol=1e-2)
    no_fallback()


def test_adaptive_avg_pool2d_bad_input_raises_like_cpu():
    x = torch.randn(2, 3, 0, 4)
    with pytest.raises(RuntimeError, match="non-zero size"):
        F.adaptive_avg_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="non-zero size"):
        F.adaptive_avg_pool2d(x.to("accel"), 2)


CONFIGS_3D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(1, 2, 3), stride=(1, 2, 1), padding=(0, 1, 1)),
    dict(kernel_size=2, stride=2, dilation=2, ceil_mode=True),
]


@pytest.mark.parametrize(
    "kw", CONFIGS_3D, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items())
)
@pytest.mark.parametrize("shape", [(2, 3, 5, 6, 7), (3, 6, 5, 8)])
def test_max_pool3d_matches_cpu(kw, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(6))
    for got, want in zip(
        pool_with(F.max_pool3d, "accel", x, **kw), pool_with(F.max_pool3d, "cpu", x, **kw)
    ):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    no_fallback()


def test_max_pool3d_bfloat16_non_contiguous_and_bad_input():
    x = torch.randn(2, 3, 6, 5, 4, generator=torch.Generator().manual_seed(7)).transpose(2, 4)
    assert not x.is_contiguous()
    kw = dict(kernel_size=2, stride=1)
    got = pool_with(F.max_pool3d, "accel", x, torch.bfloat16, **kw)
    for g, w in zip(got, pool_with(F.max_pool3d, "cpu", x, torch.bfloat16, **kw)):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w)
    no_fallback()
    for bad in (dict(kernel_size=7), dict(kernel_size=2, padding=2)):
        with pytest.raises(RuntimeError):
            F.max_pool3d(x, **bad)
        with pytest.raises(RuntimeError):
            F.max_pool3d(x.to("accel"), **bad)


ADAPTIVE_MAX = {
    2: (F.adaptive_max_pool2d, torch._C._nn.adaptive_max_pool2d, (9, 8)),
    3: (F.adaptive_max_pool3d, torch._C._nn.adaptive_max_pool3d, (5, 7, 6)),
}


@pytest.mark.parametrize(
    "out", [(3, 3), (4, 5), (7, 1), (9, 8), (2, 16), (2, 3, 3), (5, 1, 7), (1, 1, 1), (6, 8, 2)]
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_adaptive_max_pool_matches_cpu(out, dtype):
    # Uneven and overlapping windows, identity, global and upsampling sizes; unbatched,
    # transposed; values, indices and the input's gradient exactly as CPU's.
    fn, out_fn, spatial = ADAPTIVE_MAX[len(out)]
    x = torch.randn(2, 3, *spatial, generator=torch.Generator().manual_seed(8))
    for inp in (x, x[0].transpose(1, -1)):
        got = pool_with(fn, "accel", inp, dtype, output_size=out)
        want = pool_with(fn, "cpu", inp, dtype, output_size=out)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g, w, rtol=0, atol=0)
    values = torch.empty(0, device="accel", dtype=dtype)
    indices = torch.empty(0, dtype=torch.long, device="accel")
    out_fn(x.to("accel", dtype), out, out=(values, indices))
    want = fn(x.to(dtype), out, return_indices=True)
    torch.testing.assert_close(values.cpu(), want[0], rtol=0, atol=0)
    torch.testing.assert_close(indices.cpu(), want[1], rtol=0, atol=0)
    no_fallback()


@pytest.mark.parametrize("dims", [2, 3])
def test_adaptive_max_pool_ties_nan_empty_and_bad_input(dims):
    fn, _, spatial = ADAPTIVE_MAX[dims]
    # Ties (integer values) pick CPU's first in scan order; a NaN wins its windows.
    x = torch.randint(0, 3, (2, 2, *spatial), generator=torch.Generator().manual_seed(3)).float()
    x.view(-1)[7] = float("nan")
    for size in ((2,) * dims, (3,) * dims, (1,) * dims):
        got, want = (pool_with(fn, d, x, output_size=size) for d in ("accel", "cpu"))
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
    empty = torch.randn(0, 3, *spatial)
    got = fn(empty.to("accel"), 2, return_indices=True)
    assert got[0].shape == fn(empty, 2).shape and got[1].shape == got[0].shape
    no_fallback()
    bad = [
        (torch.randn(2, 3, *([0] + list(spatial[1:]))), 2, "non-zero size"),
        (torch.randn(2, 3, *spatial), (2,) * (dims - 1), "output_size"),
        (torch.randn(2, 3, *spatial), (-1,) + (2,) * (dims - 1), "negative dimension"),
    ]
    for inp, size, match in bad:
        with pytest.raises(RuntimeError, match=match) as cpu_error:
            fn(inp, size)
        with pytest.raises(RuntimeError, match=match) as accel_error:
            fn(inp.to("accel"), size)
        assert str(accel_error.value) == str(cpu_error.value)
    # The device stays usable.
    y = fn(x.nan_to_num().to("accel"), 2)
    torch.testing.assert_close(y.cpu(), fn(x.nan_to_num(), 2))


AVG_CONFIGS_3D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(1, 2, 3), stride=(1, 2, 1), padding=(0, 1, 1), ceil_mode=True),
    dict(kernel_size=2, stride=1, divisor_override=3),
]


@pytest.mark.parametrize(
    "kw", AVG_CONFIGS_3D, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items())
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])  # CPU has no bfloat16 one
def test_avg_pool3d_matches_cpu(kw, dtype):
    x = torch.randn(2, 3, 5, 6, 7, generator=torch.Generator().manual_seed(9)).transpose(2, 4)
    for inp in (x, x[0]):  # batched (strided), unbatched
        got = avg_pool("accel", inp, dtype, fn=F.avg_pool3d, **kw)
        want = avg_pool("cpu", inp, dtype, fn=F.avg_pool3d, **kw)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
    no_fallback()
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool3d(x.to("accel"), 2, divisor_override=0)
    with pytest.raises(RuntimeError):
        F.avg_pool3d(x.to("accel"), 9)


@pytest.mark.parametrize("out", [(2, 3, 3), (5, 1, 7), (7, 8, 4)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_adaptive_avg_pool3d_matches_cpu(out, dtype):
    x = torch.randn(2, 3, 5, 6, 7, generator=torch.Generator().manual_seed(10))
    reduced = dtype in (torch.bfloat16, torch.float16)
    for inp in (x, x[1].transpose(1, 3)):
        res = []
        for device in ("accel", "cpu", "exact"):
            xd = inp.to(dtype)
            xd = (xd.double() if device == "exact" else xd.to(device)).clone().requires_grad_()
            y = F.adaptive_avg_pool3d(xd, out)
            gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(5)).to(dtype)
            gy = gy.double() if device == "exact" else gy.to(device)
            (y * gy).sum().backward()
            res.append((y.detach().cpu(), xd.grad.cpu()))
        for got, want, exact in zip(*res):
            assert got.dtype == want.dtype and got.shape == want.shape
            if not reduced:
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
                continue
            # CPU adds and divides in the dtype itself; accel in float, rounding once: within
            # one rounding of the exact average, and close to CPU's.
            eps = torch.finfo(dtype).eps
            torch.testing.assert_close(got.double(), exact, rtol=eps, atol=eps)
            torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)
    no_fallback()
    with pytest.raises(RuntimeError, match="non-zero size"):
        F.adaptive_avg_pool3d(torch.randn(2, 3, 0, 4, 4).to("accel"), 2)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_max_unpool_matches_cpu(dims, dtype):
    shape = (2, 3, 6, 7) if dims == 2 else (2, 3, 4, 6, 5)
    pool, unpool = (F.max_pool2d, F.max_unpool2d) if dims == 2 else (F.max_pool3d, F.max_unpool3d)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(11))
    y, idx = pool(x, 2, stride=2, return_indices=True)  # distinct indices
    y = (y * 10).to(dtype)
    size = x.shape[-dims:]
    for yy, ii in ((y, idx), (y[0], idx[0])):  # batched, unbatched
        res = []
        for device in ("accel", "cpu"):
            yd = yy.to(device).clone().requires_grad_()
            z = unpool(yd, ii.to(device), 2, stride=2, output_size=size)
            (z * torch.arange(z.numel()).view(z.shape).to(device, dtype)).sum().backward()
            res.append((z.detach().cpu(), yd.grad.cpu()))
        for got, want in zip(*res):
            torch.testing.assert_close(got, want, rtol=0, atol=0)
    out = torch.empty(0, dtype=dtype, device="accel")
    if dims == 2:
        torch._C._nn.max_unpool2d(y.to("accel"), idx.to("accel"), size, out=out)
    else:
        torch._C._nn.max_unpool3d(
            y.to("accel"), idx.to("accel"), size, (2, 2, 2), (0, 0, 0), out=out
        )
    torch.testing.assert_close(out.cpu(), unpool(y, idx, 2, stride=2, output_size=size))
    no_fallback()
    bad = idx.clone()
    bad.view(-1)[5] = 10_000
    with pytest.raises(RuntimeError, match="Found an invalid max index"):
        unpool(y.to("accel"), bad.to("accel"), 2, stride=2, output_size=size)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same"):
        unpool(y.to("accel"), idx[..., :1].to("accel"), 2, stride=2, output_size=size)


@pytest.mark.parametrize(
    "shape,kernel,stride,padding,ceil_mode,count_include_pad",
    [
        ((2, 16, 1, 1), 1280, None, 0, True, True),  # EfficientNet's head: kernel >> input
        ((2, 3, 5, 6), (9, 4), 3, (4, 2), True, False),
        ((1, 2, 3, 3), 8, 8, 0, True, True),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_avg_pool_with_windows_far_past_the_input(
    shape, kernel, stride, padding, ceil_mode, count_include_pad, dtype
):
    """Windows reaching many times the input's size are summed as products with 0/1 window
    matrices, not over a padded copy (which took 125 GiB for EfficientNet's head)."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    args = (kernel, stride, padding, ceil_mode, count_include_pad)
    grads = []
    for dev in ("cpu", "accel"):
        leaf = x.detach().to(dev).requires_grad_()
        y = F.avg_pool2d(leaf, *args)
        y.backward(torch.ones_like(y))
        grads.append((y.detach().cpu(), leaf.grad.cpu()))
    tol = dict(rtol=1e-2, atol=1e-2) if dtype == torch.bfloat16 else {}
    for got, want in zip(grads[1], grads[0]):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, **tol)
    assert torch_accel.fallback_counts() == {}
