"""Native upsample_nearest1d/2d/3d, _upsample_nearest_exact1d/2d/3d, upsample_linear1d,
upsample_bilinear2d, upsample_trilinear3d, upsample_bicubic2d and the antialiased
_upsample_bilinear2d_aa and _upsample_bicubic2d_aa (align_corners both ways),
forward and backward, against CPU: sizes and scale factors up and down, bfloat16 and float64,
non-contiguous input, out= forms and bad sizes."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def interpolate(device, x, dtype=torch.float32, **kw):
    xd = x.to(device=device, dtype=dtype).detach().requires_grad_()
    y = F.interpolate(xd, **kw)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1)).to(device, dtype)
    (y * gy).sum().backward()
    return y.detach().cpu(), xd.grad.cpu()


SIZES = [
    dict(size=(14, 16)),  # exactly 2x: ATen's shortcut
    dict(size=(11, 5)),  # up in H, down in W
    dict(scale_factor=1.7),
    dict(scale_factor=(0.5, 3.0)),
    dict(size=(7, 8)),  # the input's own size
]
ids = [("-".join(f"{k}{v}" for k, v in kw.items())) for kw in SIZES]


@pytest.mark.parametrize("kw", SIZES, ids=ids)
def test_nearest_matches_cpu(kw):
    x = torch.randn(2, 3, 7, 8, generator=torch.Generator().manual_seed(0))
    got, want = (
        interpolate("accel", x, mode="nearest", **kw),
        interpolate("cpu", x, mode="nearest", **kw),
    )
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
    torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-5)
    no_fallback()


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("kw", SIZES, ids=ids)
def test_bilinear_matches_cpu(kw, align_corners):
    x = torch.randn(2, 3, 7, 8, generator=torch.Generator().manual_seed(0))
    kw = dict(mode="bilinear", align_corners=align_corners, **kw)
    for got, want in zip(interpolate("accel", x, **kw), interpolate("cpu", x, **kw)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    no_fallback()


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float64])
def test_dtypes_and_non_contiguous(mode, dtype):
    x = torch.randn(2, 3, 8, 6, generator=torch.Generator().manual_seed(3)).transpose(2, 3)
    for got, want in zip(
        interpolate("accel", x, dtype, mode=mode, size=(9, 13)),
        interpolate("cpu", x, dtype, mode=mode, size=(9, 13)),
    ):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize(
    "shape, kw",
    [
        ((2, 3, 7), dict(size=14)),
        ((2, 3, 7), dict(scale_factor=0.6)),
        ((2, 2, 3, 4, 5), dict(size=(6, 3, 11))),
        ((1, 2, 4, 3, 5), dict(scale_factor=(1.5, 2.0, 0.7))),
    ],
    ids=["1d-2x", "1d-down", "3d-size", "3d-scale"],
)
def test_nearest_1d_3d_matches_cpu(shape, kw, dtype):
    # Transposed in the last two dimensions: a strided input.
    x = torch.randn(shape, generator=torch.Generator().manual_seed(4)).transpose(-1, -2)
    x = x.contiguous().transpose(-1, -2)
    got, want = (
        interpolate("accel", x, dtype, mode="nearest", **kw),
        interpolate("cpu", x, dtype, mode="nearest", **kw),
    )
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
    torch.testing.assert_close(got[1], want[1])
    out = torch.empty(0, device="accel", dtype=dtype)
    op = torch.ops.aten.upsample_nearest1d if len(shape) == 3 else torch.ops.aten.upsample_nearest3d
    size = list(want[0].shape[2:])  # no scales: the sizes' own ratio
    op.out(x.to("accel", dtype), size, out=out)
    torch.testing.assert_close(out.cpu(), op(x.to(dtype), size), rtol=0, atol=0)
    no_fallback()


# The modes composed from the same separable taps: linear (1d/2d/3d), bicubic, nearest-exact.
INTERPOLATED = [
    ((2, 3, 7), "linear", dict(size=12)),
    ((2, 3, 7), "linear", dict(scale_factor=0.6)),
    ((2, 3, 7, 8), "bicubic", dict(size=(13, 5))),
    ((2, 3, 7, 8), "bicubic", dict(scale_factor=(1.7, 0.5))),
    ((2, 3, 7, 8), "bicubic", dict(size=(7, 8))),
    ((1, 2, 4, 3, 5), "trilinear", dict(size=(6, 3, 11))),
    ((1, 2, 4, 3, 5), "trilinear", dict(scale_factor=(1.5, 2.0, 0.7))),
]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize(
    "shape, mode, kw", INTERPOLATED, ids=[f"{m}-{i}" for i, (_, m, _) in enumerate(INTERPOLATED)]
)
def test_linear_bicubic_trilinear_match_cpu(shape, mode, kw, dtype, align_corners):
    # Strided in the last two dimensions.
    x = torch.randn(shape, generator=torch.Generator().manual_seed(5)).transpose(-1, -2)
    x = x.contiguous().transpose(-1, -2)
    kw = dict(mode=mode, align_corners=align_corners, **kw)
    tol = dict(rtol=1.6e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-5)
    for got, want in zip(interpolate("accel", x, dtype, **kw), interpolate("cpu", x, dtype, **kw)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, **tol)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize(
    "shape, kw",
    [
        ((2, 3, 7), dict(size=12)),
        ((2, 3, 7), dict(scale_factor=0.6)),
        ((2, 3, 7, 5), dict(scale_factor=1.7)),
        ((2, 3, 7, 5), dict(size=(14, 3))),
        ((1, 2, 4, 3, 5), dict(size=(6, 3, 11))),
    ],
    ids=["1d-up", "1d-down", "2d-scale", "2d-size", "3d-size"],
)
def test_nearest_exact_matches_cpu(shape, kw, dtype):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(6)).transpose(-1, -2)
    x = x.contiguous().transpose(-1, -2)
    got, want = (
        interpolate("accel", x, dtype, mode="nearest-exact", **kw),
        interpolate("cpu", x, dtype, mode="nearest-exact", **kw),
    )
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
    torch.testing.assert_close(got[1], want[1])
    no_fallback()


def test_bicubic_out_form_and_bad_sizes():
    x = torch.randn(2, 3, 5, 6, generator=torch.Generator().manual_seed(7))
    out = torch.empty(0, device="accel")
    torch.ops.aten.upsample_bicubic2d.out(x.to("accel"), [9, 4], True, out=out)
    torch.testing.assert_close(
        out.cpu(), torch.ops.aten.upsample_bicubic2d(x, [9, 4], True), rtol=1e-5, atol=1e-5
    )
    for op, args in [
        (torch.ops.aten.upsample_bicubic2d, ([9], False)),  # one size for two dimensions
        (torch.ops.aten.upsample_bicubic2d, ([9, 0], False)),
        (torch.ops.aten.upsample_linear1d, ([4], False)),  # a 4-D input
    ]:
        with pytest.raises(RuntimeError):
            op(x, *args)
        with pytest.raises(RuntimeError):
            op(x.to("accel"), *args)
    with pytest.raises(RuntimeError):
        torch.ops.aten.upsample_bicubic2d_backward(
            torch.randn(2, 3, 4, 4, device="accel"), [9, 4], [2, 3, 5, 6], False
        )
    # The device still works.
    torch.testing.assert_close(
        F.interpolate(x.to("accel"), size=(7, 7), mode="bicubic").cpu(),
        F.interpolate(x, size=(7, 7), mode="bicubic"),
        rtol=1e-5,
        atol=1e-5,
    )
    no_fallback()


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        dict(size=(9, 4)),  # down 2.7x in H, 6x in W: wide windows
        dict(size=(40, 13)),  # up in both
        dict(size=(24, 30)),  # H kept: ATen leaves that dimension alone
        dict(scale_factor=(0.37, 1.9)),
        dict(scale_factor=0.5, recompute_scale_factor=False),
    ],
    ids=["down", "up", "kept", "mixed", "scale_half"],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_antialiased_matches_cpu(mode, align_corners, kw, dtype):
    """F.interpolate(antialias=True) (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa), as
    torchvision's Resize runs it, and its backward."""
    x = torch.randn(2, 3, 24, 30, generator=torch.Generator().manual_seed(0)) * 3
    kw = dict(kw, mode=mode, align_corners=align_corners, antialias=True)
    got = interpolate("accel", x, dtype, **kw)
    if dtype == torch.bfloat16:
        # CPU has no bfloat16 antialiasing (CUDA has): float32 on the rounded input, rounded.
        want = interpolate("cpu", x.bfloat16().float(), torch.float32, **kw)
        torch.testing.assert_close(got[0].float(), want[0].bfloat16().float(), atol=0.02, rtol=0.01)
        torch.testing.assert_close(got[1].float(), want[1].bfloat16().float(), atol=0.02, rtol=0.01)
    else:
        want = interpolate("cpu", x, dtype, **kw)
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[1], want[1])
    no_fallback()


def test_antialiased_keeps_an_unresized_dimension_exact():
    x = torch.randn(1, 1, 8, 6)
    x[0, 0, 3, 2] = float("inf")
    got = F.interpolate(x.to("accel"), size=(8, 3), mode="bilinear", antialias=True).cpu()
    want = F.interpolate(x, size=(8, 3), mode="bilinear", antialias=True)
    torch.testing.assert_close(got, want, equal_nan=True)
    assert got[0, 0, 2].isfinite().all()  # the row above the inf is not touched by it
    no_fallback()
