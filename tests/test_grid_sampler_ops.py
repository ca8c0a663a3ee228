"""F.grid_sample on 4-D and 5-D inputs (grid_sampler_2d / 3d, csrc/aten/grid_sampler_ops.cpp)
against CPU: bilinear (trilinear) and nearest, zeros, border and reflection padding,
align_corners, grid points outside the input and on exact pixel centres, the input's and the
grid's gradients, float and double, out=, empty batches, bicubic through the counted fallback,
CPU's errors, and no fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12)}


def operands(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 5, 7, generator=g, dtype=dtype)
    # Points beyond [-1, 1] (outside the input), plus some on exact source positions.
    grid = torch.rand(2, 4, 6, 2, generator=g, dtype=dtype) * 2.6 - 1.3
    grid[0, 0, :, 0] = torch.linspace(-1, 1, 6, dtype=dtype)
    grid[0, 0, :, 1] = 0.0
    return x, grid


def sample(device, x, grid, mode, padding, align_corners, seed=1):
    xa = x.to(device).detach().requires_grad_()
    ga = grid.to(device).detach().requires_grad_()
    y = F.grid_sample(xa, ga, mode=mode, padding_mode=padding, align_corners=align_corners)
    w = torch.randn(y.shape, generator=torch.Generator().manual_seed(seed), dtype=y.dtype)
    (y * w.to(device)).sum().backward()
    return y.detach().cpu(), xa.grad.cpu(), ga.grad.cpu()


def volume_operands(dtype):
    # grid_sampler_3d: trilinear's eight neighbours, points up to two depths out.
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 4, 5, 6, generator=g, dtype=dtype)
    return x, torch.rand(2, 3, 4, 2, 3, generator=g, dtype=dtype) * 4 - 2


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("dims", [2, 3])
def test_values_and_gradients_match_cpu(dims, mode, padding, align_corners, dtype):
    x, grid = operands(dtype) if dims == 2 else volume_operands(dtype)
    if padding == "reflection":
        grid = grid * 3  # several widths out: mirrored more than once, both ways
    want = sample("cpu", x, grid, mode, padding, align_corners)
    torch_accel.reset_fallback_counts()
    got = sample("accel", x, grid, mode, padding, align_corners)
    assert torch_accel.fallback_counts() == {}
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, **TOL[dtype])
    assert want[1].abs().max() > 0
    if mode == "bilinear":
        assert want[2].abs().max() > 0


@pytest.mark.parametrize(
    "shapes", [((0, 2, 3, 4), (0, 5, 6, 2)), ((0, 2, 3, 4, 5), (0, 2, 2, 2, 3))]
)
def test_an_empty_batch_matches_cpu(shapes):
    x, grid = torch.randn(shapes[0]), torch.rand(shapes[1])
    want = F.grid_sample(x, grid, align_corners=False)
    got = F.grid_sample(x.to("accel"), grid.to("accel"), align_corners=False)
    assert got.shape == want.shape == (0, 2) + shapes[1][1:-1]


def test_input_gradient_only_and_non_contiguous():
    x, grid = operands(torch.float32)
    x = x.transpose(2, 3)  # [2, 3, 7, 5], strided
    for dev in ("cpu", "accel"):
        xa = x.to(dev).detach().requires_grad_()
        F.grid_sample(xa, grid.to(dev), align_corners=False).square().sum().backward()
        if dev == "cpu":
            want = xa.grad
        else:
            torch.testing.assert_close(xa.grad.cpu(), want, **TOL[torch.float32])


def test_out_form():
    x, grid = operands(torch.float32)
    out = torch.empty(0, device="accel")
    torch.ops.aten.grid_sampler_2d.out(x.to("accel"), grid.to("accel"), 0, 0, False, out=out)
    want = torch.ops.aten.grid_sampler_2d(x, grid, 0, 0, False)
    torch.testing.assert_close(out.cpu(), want, **TOL[torch.float32])


@pytest.mark.parametrize("padding", ["reflection", "border"])
def test_a_one_pixel_side_matches_cpu(padding):
    # Reflection on a side of one pixel: every point maps onto it, and the grid gets no gradient
    # along that side with align_corners.
    x = torch.randn(1, 2, 1, 4, generator=torch.Generator().manual_seed(4))
    grid = torch.rand(1, 3, 5, 2, generator=torch.Generator().manual_seed(5)) * 4 - 2
    for align_corners in (False, True):
        want = sample("cpu", x, grid, "bilinear", padding, align_corners)
        got = sample("accel", x, grid, "bilinear", padding, align_corners)
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, **TOL[torch.float32])


@pytest.mark.parametrize("mode, padding", [("bicubic", "zeros"), ("bicubic", "reflection")])
def test_other_modes_fall_back(mode, padding):
    x, grid = operands(torch.float32)
    want = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=False)
    torch_accel.reset_fallback_counts()
    got = F.grid_sample(
        x.to("accel"), grid.to("accel"), mode=mode, padding_mode=padding, align_corners=False
    )
    assert torch_accel.fallback_counts() == {"aten::grid_sampler_2d": 1}
    torch.testing.assert_close(got.cpu(), want, **TOL[torch.float32])


@pytest.mark.parametrize(
    "shapes, match",
    [
        (((2, 3, 5, 7), (1, 4, 6, 2)), "same batch size"),
        (((2, 3, 5, 7), (2, 4, 6, 3)), "size 2 in last dimension"),
        (((2, 3, 0, 7), (2, 4, 6, 2)), "non-empty spatial dimensions"),
        (((2, 3, 4, 5, 7), (2, 4, 6, 1, 2)), "size 3 in last dimension"),
        (((2, 3, 4, 5, 7), (2, 4, 6, 3)), "expected 5D input and grid"),
        (((2, 3, 4, 5, 7), (1, 4, 6, 1, 3)), "same batch size"),
    ],
)
def test_bad_input_raises_cpu_error(shapes, match):
    x, grid = torch.randn(shapes[0]), torch.rand(shapes[1])
    op = torch.ops.aten.grid_sampler_2d if x.dim() == 4 else torch.ops.aten.grid_sampler_3d
    with pytest.raises(RuntimeError, match=match):
        op(x, grid, 0, 0, False)
    with pytest.raises(RuntimeError, match=match):
        op(x.to("accel"), grid.to("accel"), 0, 0, False)
    y = torch.ops.aten.grid_sampler_2d(
        *[t.to("accel") for t in operands(torch.float32)], 0, 0, False
    )
    assert y.shape == (2, 3, 4, 6)  # the device stays usable
