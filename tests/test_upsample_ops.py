"""Native upsample_nearest1d/2d/3d and upsample_bilinear2d (align_corners both ways), forward
and backward, against CPU: sizes and scale factors up and down, bfloat16, non-contiguous
input."""

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
