"""Native histc (every integer and float dtype, as on CUDA) and bincount against CPU."""

import pytest
import torch

import torch_accel

INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def strided(x):
    """x as a non-contiguous view (every other element of a longer tensor)."""
    wide = torch.empty(x.numel() * 2, dtype=x.dtype)
    wide[::2] = x.reshape(-1)
    return wide[::2].reshape(x.shape)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1000,), (37, 11)])
@pytest.mark.parametrize("contiguous", [True, False])
def test_histc_float_matches_cpu(dtype, shape, contiguous):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(3)) * 2).to(dtype)
    if not contiguous:
        x = strided(x)
        assert not x.is_contiguous()
    for bins, lo, hi in [(10, -2, 2), (7, -1.5, 3.25), (1, 0, 1)]:
        got = torch.histc(x.to("accel"), bins=bins, min=lo, max=hi)
        assert got.device.type == "accel" and got.dtype == dtype
        torch.testing.assert_close(got.cpu(), torch.histc(x, bins=bins, min=lo, max=hi))
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_histc_half_precision_bins_in_float_as_cuda(dtype):
    # CUDA computes the bin in float (its acc_type), as float32 histc does; CPU rounds each
    # step to the dtype and puts some elements near an edge one bin off.
    # Few enough elements that every count is exact in bfloat16 (at most 256).
    x = (torch.randn(600, generator=torch.Generator().manual_seed(5)) * 4).to(dtype)
    for bins, lo, hi in [(100, -10, 10), (7, -1.5, 3.25), (33, 0, 0)]:
        got = torch.histc(x.to("accel"), bins=bins, min=lo, max=hi)
        assert got.dtype == dtype
        want = torch.histc(x.float(), bins=bins, min=lo, max=hi).to(dtype)
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64])
def test_histc_data_range_when_min_equals_max(dtype):
    x = (torch.randn(200, generator=torch.Generator().manual_seed(4)) * 5).to(dtype)
    got = torch.histc(x.to("accel"), bins=6)  # min == max == 0: the data's min and max
    want = torch.histc(x.double(), bins=6).to(dtype)
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    # All elements equal: the range widens to [v - 1, v + 1].
    same = torch.full((5,), 3, dtype=dtype)
    torch.testing.assert_close(
        torch.histc(same.to("accel"), bins=4).cpu(), torch.histc(same.double(), bins=4).to(dtype)
    )
    no_fallback()


@pytest.mark.parametrize("dtype", INTS)
def test_histc_integer_dtypes(dtype):
    # CPU has no integer histc; CUDA's counts equal CPU's on the same values as doubles.
    g = torch.Generator().manual_seed(5)
    x = torch.randint(0, 100, (300,), generator=g).to(dtype)
    for bins, lo, hi in [(4, 0, 3), (10, 0, 99), (7, 20, 80)]:
        got = torch.histc(x.to("accel"), bins=bins, min=lo, max=hi)
        assert got.dtype == dtype
        want = torch.histc(x.double(), bins=bins, min=lo, max=hi).to(dtype)
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    got = torch.histc(strided(x).to("accel"), bins=5, min=0, max=99)
    torch.testing.assert_close(got.cpu(), torch.histc(x.double(), 5, 0, 99).to(dtype))
    no_fallback()


def test_histc_router_counts_like_mixtral():
    # transformers' MoE routers count experts with histc on int32 off CPU.
    experts = torch.randint(0, 8, (64, 2), generator=torch.Generator().manual_seed(6))
    got = torch.histc(experts.reshape(-1).int().to("accel"), bins=8, min=0, max=7)
    want = torch.bincount(experts.reshape(-1), minlength=8).int()
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    no_fallback()


def test_histc_out_and_reduced_floats():
    x = torch.randn(500, generator=torch.Generator().manual_seed(7))
    out = torch.empty(0, device="accel")
    torch.histc(x.to("accel"), bins=8, min=-3, max=3, out=out)
    torch.testing.assert_close(out.cpu(), torch.histc(x, 8, -3, 3))
    for dtype in (torch.bfloat16, torch.float16):
        # Bins computed in float from the rounded values: the same as CPU on them as float32.
        xr = x.to(dtype)
        got = torch.histc(xr.to("accel"), bins=8, min=-3, max=3)
        assert got.dtype == dtype
        torch.testing.assert_close(got.cpu().float(), torch.histc(xr.float(), 8, -3, 3))
    no_fallback()


@pytest.mark.parametrize(
    "kwargs",
    [dict(bins=4, min=2, max=1), dict(bins=0), dict(bins=-3)],
    ids=["min>max", "bins=0", "bins<0"],
)
def test_histc_bad_input_raises_like_cpu(kwargs):
    x = torch.rand(8)
    with pytest.raises(RuntimeError):
        torch.histc(x, **kwargs)
    with pytest.raises(RuntimeError, match="histc"):
        torch.histc(x.to("accel"), **kwargs)
    assert torch.histc(x.to("accel"), bins=2).sum().item() == 8  # the device stays usable


def test_histc_non_finite_range_raises():
    x = torch.tensor([1.0, float("inf")])
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(x, bins=4)
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(x.to("accel"), bins=4)


@pytest.mark.parametrize("dtype", INTS)
def test_bincount_matches_cpu(dtype):
    g = torch.Generator().manual_seed(8)
    x = torch.randint(0, 50, (400,), generator=g).to(dtype)
    for minlength in (0, 10, 80):
        got = torch.bincount(x.to("accel"), minlength=minlength)
        assert got.dtype == torch.int64
        torch.testing.assert_close(got.cpu(), torch.bincount(x, minlength=minlength))
    got = torch.bincount(strided(x).to("accel"))
    torch.testing.assert_close(got.cpu(), torch.bincount(x))
    no_fallback()


@pytest.mark.parametrize("wdtype", [torch.float32, torch.float64, torch.float16, torch.int32])
def test_bincount_weights_match_cpu(wdtype):
    g = torch.Generator().manual_seed(9)
    x = torch.randint(0, 20, (300,), generator=g)
    w = (torch.rand(300, generator=g) * 10).to(wdtype)
    got = torch.bincount(x.to("accel"), weights=w.to("accel"), minlength=25)
    want = torch.bincount(x, weights=w, minlength=25)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want)
    got = torch.bincount(strided(x).to("accel"), weights=strided(w).to("accel"))
    torch.testing.assert_close(got.cpu(), torch.bincount(x, weights=w))
    no_fallback()


def test_bincount_empty_input():
    for kwargs in (dict(), dict(minlength=4)):
        got = torch.bincount(torch.empty(0, dtype=torch.long, device="accel"), **kwargs)
        want = torch.bincount(torch.empty(0, dtype=torch.long), **kwargs)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got.cpu(), want)
    no_fallback()


@pytest.mark.parametrize(
    "args",
    [
        (torch.tensor([1, -1, 2]), {}),
        (torch.tensor([[1, 2]]), {}),
        (torch.tensor([1, 2]), dict(weights=torch.ones(3))),
        (torch.tensor([1, 2]), dict(minlength=-1)),
        (torch.tensor([1.0, 2.0]), {}),
    ],
    ids=["negative", "2-d", "weights-length", "minlength", "float-input"],
)
def test_bincount_bad_input_raises_like_cpu(args):
    x, kwargs = args
    with pytest.raises(Exception) as cpu_err:
        torch.bincount(x, **kwargs)
    moved = {k: v.to("accel") if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    with pytest.raises(cpu_err.type):
        torch.bincount(x.to("accel"), **moved)
    got = torch.bincount(torch.tensor([0, 2, 2], device="accel"))
    torch.testing.assert_close(got.cpu(), torch.tensor([1, 0, 2]))
