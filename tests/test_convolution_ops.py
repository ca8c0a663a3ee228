"""Native convolution (1d/2d/3d, groups, stride, padding, dilation) forward and backward
against CPU, non-contiguous inputs, and the shape errors CPU raises."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def conv(device, x, w, b, dtype=torch.float32, **kw):
    leaves = [
        t.to(device, dtype).detach().requires_grad_() if t is not None else None for t in (x, w, b)
    ]
    y = CONV[x.dim() - 2](*leaves, **kw)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1)).to(device, dtype)
    (y * gy).sum().backward()
    return [y.detach().cpu()] + [t.grad.cpu() for t in leaves if t is not None]


CASES = [
    # (input shape, weight shape, kwargs)
    ((2, 3, 9), (4, 3, 3), dict()),
    ((2, 4, 16), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    ((2, 3, 8, 8), (5, 3, 3, 3), dict(padding=1)),
    ((2, 3, 16, 16), (8, 3, 4, 4), dict(stride=4)),  # ViT's patch embedding
    ((1, 4, 9, 7), (4, 1, 3, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=4)),
    ((2, 3, 11, 11), (6, 3, 7, 7), dict(stride=2, padding=3)),  # ResNet's stem
    ((1, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(padding=1, stride=(1, 2, 1))),
    # Stride 1, output as wide as the input: im2col and col2im move whole shifted planes
    # (kernels/im2col.h's denseShift), then fix the padding lines and columns.
    ((2, 3, 9), (4, 3, 3), dict(padding=1)),
    ((2, 3, 7, 9), (4, 3, 3, 5), dict(padding=(1, 2))),
    ((1, 2, 6, 5), (3, 2, 3, 3), dict(padding=2, dilation=2)),
    ((2, 2, 2, 3), (3, 2, 5, 7), dict(padding=(2, 3))),  # a window wider than the image
    ((1, 2, 4, 5, 6), (2, 2, 3, 3, 3), dict(padding=1)),
    ((2, 4, 6, 6), (4, 2, 3, 3), dict(padding=1, groups=2)),
]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c[2]}")
def test_convolution_matches_cpu(case, bias):
    xs, ws, kw = case
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(xs, generator=g), torch.randn(ws, generator=g)
    b = torch.randn(ws[0], generator=g) if bias else None
    for got, want in zip(conv("accel", x, w, b, **kw), conv("cpu", x, w, b, **kw)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_convolution_dtypes(dtype):
    g = torch.Generator().manual_seed(2)
    x, w, b = torch.randn(2, 3, 7, 7, generator=g), torch.randn(4, 3, 3, 3, generator=g), None
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == torch.float64 else dict(rtol=3e-2, atol=1e-1)
    for got, want in zip(
        conv("accel", x, w, b, dtype, padding=1), conv("cpu", x, w, b, dtype, padding=1)
    ):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, **tol)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_convolution_bias_rounds_once_in_half_precision(dtype):
    # The bias is added before the one rounding to the dtype, as on CPU: a product rounded to
    # the dtype and then added to the bias was off by up to an ulp (OpInfo's depthwise sample).
    g = torch.Generator().manual_seed(4)
    x = (torch.randn(2, 4, 6, 6, generator=g) * 8).to(dtype)
    w = (torch.randn(4, 1, 3, 3, generator=g) * 8).to(dtype)
    b = (torch.randn(4, generator=g) * 8).to(dtype)
    kw = dict(padding=1, groups=4)
    got = F.conv2d(x.to("accel"), w.to("accel"), b.to("accel"), **kw).cpu()
    rounded_once = F.conv2d(x.double(), w.double(), b.double(), **kw).to(dtype)
    torch.testing.assert_close(got, rounded_once, rtol=0, atol=0)
    torch.testing.assert_close(got, F.conv2d(x, w, b, **kw), rtol=0, atol=0)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_convolution_bias_is_not_written(dtype):
    # A one-element output has the bias's own shape: the output must still be a new tensor.
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1, 1, 4, 4, 4, generator=g, dtype=dtype)
    w = torch.randn(1, 1, 4, 4, 4, generator=g, dtype=dtype)
    b = torch.randn(1, generator=g, dtype=dtype)
    bias = b.to("accel")
    got = F.conv3d(x.to("accel"), w.to("accel"), bias, stride=2, padding=2, dilation=2)
    torch.testing.assert_close(got.cpu(), F.conv3d(x, w, b, stride=2, padding=2, dilation=2))
    torch.testing.assert_close(bias.cpu(), b, rtol=0, atol=0)
    no_fallback()


def test_convolution_non_contiguous_and_channels_last():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 10, 8, generator=g).transpose(2, 3)
    w = torch.randn(4, 3, 3, 3, generator=g)
    assert not x.is_contiguous()
    for got, want in zip(conv("accel", x, w, None, stride=2), conv("cpu", x, w, None, stride=2)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    xc = torch.randn(2, 3, 6, 6, generator=g).to(memory_format=torch.channels_last)
    for got, want in zip(conv("accel", xc, w, None), conv("cpu", xc, w, None)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    no_fallback()


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, 4, 5, 5), (2, 3, 3, 3), 1),
        ((1, 4, 5, 5), (3, 2, 3, 3), 2),
        ((1, 3, 5, 5), (2, 1, 3, 3), 2),
    ],
    ids=["channels", "out-channels-vs-groups", "in-channels-vs-groups"],
)
def test_convolution_bad_shapes_raise_like_cpu(shapes):
    xs, ws, groups = shapes
    x, w = torch.randn(xs), torch.randn(ws)
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, groups=groups)
    with pytest.raises(RuntimeError, match="groups|channels"):
        F.conv2d(x.to("accel"), w.to("accel"), groups=groups)
    ok = torch.randn(2, xs[1], 3, 3)
    torch.testing.assert_close(
        F.conv2d(x.to("accel"), ok.to("accel")).cpu(), F.conv2d(x, ok), rtol=1e-4, atol=1e-4
    )


TRANSPOSED_CASES = [
    # (input shape, weight shape [C, OC/G, *k], kwargs)
    ((2, 3, 7), (3, 4, 3), dict(stride=2, output_padding=1)),
    ((2, 4, 5, 6), (4, 3, 3, 3), dict(padding=1, groups=2)),
    ((1, 2, 4, 5), (2, 3, 3, 2), dict(stride=(2, 3), padding=(1, 0), dilation=(1, 2))),
    ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), dict(stride=2, output_padding=(1, 0, 1))),
]
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


@pytest.mark.parametrize("case", TRANSPOSED_CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c[2]}")
def test_conv_transpose_matches_cpu(case):
    xs, ws, kw = case
    g = torch.Generator().manual_seed(4)
    x, w, b = (
        torch.randn(xs, generator=g),
        torch.randn(ws, generator=g),
        torch.randn(ws[1] * kw.get("groups", 1), generator=g),
    )

    def run(device):
        leaves = [t.to(device).requires_grad_() for t in (x, w, b)]
        y = CONV_T[x.dim() - 2](*leaves, **kw)
        gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(5)).to(device)
        (y * gy).sum().backward()
        return [y.detach().cpu()] + [t.grad.cpu() for t in leaves]

    for got, want in zip(run("accel"), run("cpu")):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    no_fallback()


UNFOLD_CASES = [
    ((2, 3, 6, 7), dict(kernel_size=3)),
    ((2, 2, 9, 8), dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 2), dilation=(2, 1))),
    ((3, 5, 4), dict(kernel_size=2, stride=2)),  # unbatched
    ((2, 3, 6, 7), dict(kernel_size=3, padding=1)),
    ((1, 2, 3, 4), dict(kernel_size=(3, 5), padding=(1, 2))),
]


@pytest.mark.parametrize("case", UNFOLD_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_unfold_fold_match_cpu(case):
    """F.unfold (aten::im2col) and F.fold (aten::col2im), forward and backward (each is the
    other's gradient), from a non-contiguous input."""
    xs, kw = case
    g = torch.Generator().manual_seed(6)
    x = torch.randn(xs[:-2] + (xs[-1], xs[-2]), generator=g).transpose(-1, -2)
    assert not x.is_contiguous()

    def run(device):
        xd = x.to(device).requires_grad_()
        cols = F.unfold(xd, **kw)
        colsd = (cols.detach() * 0.5).transpose(-1, -2).contiguous().transpose(-1, -2)
        colsd.requires_grad_()
        img = F.fold(colsd, output_size=xs[-2:], **kw)
        gc = torch.randn(cols.shape, generator=torch.Generator().manual_seed(7)).to(device)
        gi = torch.randn(img.shape, generator=torch.Generator().manual_seed(8)).to(device)
        ((cols * gc).sum() + (img * gi).sum()).backward()
        return [cols.detach().cpu(), img.detach().cpu(), xd.grad.cpu(), colsd.grad.cpu()]

    for got, want in zip(run("accel"), run("cpu")):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    no_fallback()


@pytest.mark.parametrize(
    "case",
    UNFOLD_CASES
    + [
        ((2, 4, 16, 16), dict(kernel_size=3, padding=1)),  # a ResNet 3x3's input gradient
        ((1, 3, 8, 11), dict(kernel_size=(5, 3), padding=(2, 1), dilation=(1, 2))),
        ((1, 2, 5, 4), dict(kernel_size=(3, 7), padding=(1, 3))),  # window wider than the image
    ],
    ids=lambda c: f"{c[0]}-{c[1]}",
)
def test_fold_adds_in_cpus_order(case):
    """F.fold sums each image element's window entries in kernel-offset order, as CPU's
    col2im does: float32 results are CPU's bits, on the whole-plane path (stride 1, full-width
    output) and the element path alike."""
    xs, kw = case
    out = xs[-2:]
    cols = F.unfold(torch.zeros(xs), **kw)
    cols = torch.randn(cols.shape, generator=torch.Generator().manual_seed(9))
    got = F.fold(cols.to("accel"), output_size=out, **kw).cpu()
    torch.testing.assert_close(got, F.fold(cols, output_size=out, **kw), rtol=0, atol=0)
    no_fallback()


def test_unfold_fold_bad_shapes_raise_like_cpu():
    for device in ("cpu", "accel"):
        x = torch.randn(1, 2, 3, 3, device=device)
        with pytest.raises(RuntimeError, match="kernel"):
            F.unfold(x, kernel_size=0)
        with pytest.raises(RuntimeError, match="[Ee]xpected size of input's dimension 1"):
            F.fold(torch.randn(1, 5, 4, device=device), output_size=(3, 3), kernel_size=2)
    no_fallback()
