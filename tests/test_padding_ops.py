"""Native reflection and replication padding (F.pad modes 'reflect' and 'replicate', 1-D to
3-D, batched and unbatched) and their backward against CPU, out=, non-contiguous inputs,
negative padding, circular padding's composite, and CPU's errors."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

# bfloat16 gradients: accel sums the reflected/replicated positions in float, CPU in bfloat16.
TOL = {
    torch.float32: dict(rtol=1e-6, atol=1e-6),
    torch.bfloat16: dict(rtol=2e-2, atol=3e-2),
    torch.complex64: dict(rtol=1e-6, atol=1e-6),
}

# (input shape, padding) per spatial rank: batched and unbatched, uneven and negative pads.
CASES = [
    ((2, 3, 7), (2, 3)),
    ((3, 6), (5, 1)),
    ((2, 3, 5, 6), (1, 2, 4, 0)),
    ((3, 4, 5), (3, 3, -1, 2)),
    ((1, 2, 3, 4, 5), (1, 2, 2, 0, 1, 1)),
    ((2, 4, 3, 5), (0, 3, 1, 2, 2, 1)),
]


def pad_with(device, x, pad, mode, dtype, non_contiguous):
    xd = x.to(device=device)
    if non_contiguous:
        xd = xd.transpose(-1, -2).contiguous().transpose(-1, -2)
        assert not xd.is_contiguous()
    xd = xd.detach().requires_grad_()
    y = F.pad(xd, pad, mode=mode)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1), dtype=dtype).to(device)
    (y * gy).sum().real.backward()  # .real: the complex cases need a real loss
    return y.detach().cpu(), xd.grad.cpu()


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", CASES, ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.complex64])
def test_pad_matches_cpu(mode, shape, pad, dtype, monkeypatch):
    monkeypatch.setenv("TORCH_ACCEL_FALLBACK", "error")
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=dtype)
    torch_accel.reset_fallback_counts()
    for non_contiguous in (False, True):
        got = pad_with("accel", x, pad, mode, dtype, non_contiguous)
        want = pad_with("cpu", x, pad, mode, dtype, non_contiguous)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, **TOL[dtype])
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("op", ["reflection_pad2d", "replication_pad2d"])
def test_pad_out_and_backward_grad_input(op):
    x = torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(3))
    pad = [2, 1, 1, 3]
    torch_accel.reset_fallback_counts()
    want = getattr(torch.ops.aten, op)(x, pad)
    out = torch.empty(0, device="accel")
    getattr(torch.ops.aten, op).out(x.to("accel"), pad, out=out)
    torch.testing.assert_close(out.cpu(), want)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(4))
    backward = getattr(torch.ops.aten, op + "_backward")
    grad = torch.empty(0, device="accel")
    backward.grad_input(g.to("accel"), x.to("accel"), pad, grad_input=grad)
    torch.testing.assert_close(grad.cpu(), backward(g, x, pad))
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize(
    "shape,pad,mode",
    [
        ((1, 2, 3), (3, 1), "reflect"),
        ((2, 3, 4), (0, 0, 1, 4), "reflect"),
        ((1, 2, 3, 4), (0, 0, 0, 0, 2, 0), "reflect"),
        ((1, 2, 3), (-2, -2), "replicate"),
        ((2, 0, 3), (1, 1), "reflect"),
    ],
)
def test_pad_bad_input_raises_cpu_error(shape, pad, mode):
    x = torch.randn(shape)
    with pytest.raises(RuntimeError) as cpu:
        F.pad(x, pad, mode=mode)
    with pytest.raises(RuntimeError) as accel:
        F.pad(x.to("accel"), pad, mode=mode)
    if mode == "reflect" and 0 not in shape:
        assert str(accel.value) == str(cpu.value)
    # The device stays usable.
    assert F.pad(torch.ones(1, 4, device="accel"), (1, 1), mode=mode).sum().item() == 6


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_integer_pads_are_native(mode, monkeypatch):
    monkeypatch.setenv("TORCH_ACCEL_FALLBACK", "error")
    x = torch.arange(2 * 3 * 4 * 5).view(2, 3, 4, 5)
    torch.testing.assert_close(
        F.pad(x.to("accel"), (1, 2, 2, 1), mode=mode).cpu(), F.pad(x, (1, 2, 2, 1), mode=mode)
    )
