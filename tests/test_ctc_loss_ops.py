"""ctc_loss on accel (csrc/aten/ctc_loss_ops.cpp) against CPU: both target layouts, every
reduction, zero_infinity, repeated labels, empty targets and frames, the loss and its gradient,
float and double, the out= forms, CPU's errors, and no fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-10)}


def inputs(dtype, frames=9, batch=4, classes=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(frames, batch, classes, generator=g, dtype=dtype)
    # Repeats (2, 2) need a blank between them; the last sample's target is empty.
    targets = torch.tensor([[1, 2, 2, 3], [4, 4, 0, 0], [5, 1, 3, 0], [0, 0, 0, 0]])
    target_lengths = [4, 2, 3, 0]
    input_lengths = [frames, frames - 2, 5, 3]
    return logits, targets, input_lengths, target_lengths


def run(device, logits, targets, il, tl, concatenated, reduction, zero_infinity, grad_seed=1):
    x = logits.to(device).detach().requires_grad_()
    lp = x.log_softmax(2)
    t = (torch.cat([targets[b, : tl[b]] for b in range(len(tl))]) if concatenated else targets).to(
        device
    )
    loss = F.ctc_loss(
        lp,
        t,
        torch.tensor(il),
        torch.tensor(tl),
        blank=0,
        reduction=reduction,
        zero_infinity=zero_infinity,
    )
    g = torch.randn(
        loss.shape, generator=torch.Generator().manual_seed(grad_seed), dtype=loss.dtype
    )
    loss.backward(g.to(device))
    return loss.detach().cpu(), x.grad.cpu()


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("concatenated", [False, True], ids=["padded", "concatenated"])
def test_loss_and_gradient_match_cpu(concatenated, reduction, dtype):
    args = inputs(dtype)
    want = run("cpu", *args, concatenated, reduction, False)
    torch_accel.reset_fallback_counts()
    got = run("accel", *args, concatenated, reduction, False)
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(got[0], want[0], **TOL[dtype])
    torch.testing.assert_close(got[1], want[1], **TOL[dtype])
    assert want[1].abs().max() > 0


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(zero_infinity):
    # Sample 1 has 3 frames for 3 labels with a repeat (it needs 4): an infinite loss, whose
    # gradient zero_infinity zeroes.
    logits = torch.randn(5, 2, 4, generator=torch.Generator().manual_seed(3))
    targets = torch.tensor([[1, 2, 3], [2, 2, 3]])
    args = (logits, targets, [5, 3], [3, 3])
    want = run("cpu", *args, False, "none", zero_infinity)
    got = run("accel", *args, False, "none", zero_infinity)
    torch.testing.assert_close(got[0], want[0], **TOL[torch.float32])
    if zero_infinity:
        torch.testing.assert_close(got[1], want[1], **TOL[torch.float32])
    else:
        assert got[0][1] == float("inf")
        torch.testing.assert_close(got[1][:, 0], want[1][:, 0], **TOL[torch.float32])


def test_no_frames_and_long_sequence():
    # A sample with no frames (loss 0 for an empty target), and a 60-frame one.
    for il, tl, frames in [([0, 4], [0, 2], 4), ([60, 41], [7, 5], 60)]:
        g = torch.Generator().manual_seed(frames)
        lp = torch.randn(frames, 2, 5, generator=g).log_softmax(2)
        targets = torch.randint(1, 5, (2, 7), generator=g)
        want = torch.ops.aten._ctc_loss(lp, targets, il, tl, 0, False)[0]
        got = torch.ops.aten._ctc_loss(lp.to("accel"), targets.to("accel"), il, tl, 0, False)[0]
        torch.testing.assert_close(got.cpu(), want, **TOL[torch.float32])


def test_out_forms():
    logits, targets, il, tl = inputs(torch.float32)
    lp = logits.log_softmax(2)
    nll, alpha = torch.ops.aten._ctc_loss(lp, targets, il, tl, 0, False)
    out0, out1 = torch.empty(0, device="accel"), torch.empty(0, device="accel")
    torch.ops.aten._ctc_loss.out(
        lp.to("accel"), targets.to("accel"), il, tl, 0, False, out0=out0, out1=out1
    )
    torch.testing.assert_close(out0.cpu(), nll, **TOL[torch.float32])
    assert out1.shape == alpha.shape
    g = torch.rand(4)
    want = torch.ops.aten._ctc_loss_backward(g, lp, targets, il, tl, nll, alpha, 0, False)
    out = torch.empty(0, device="accel")
    torch.ops.aten._ctc_loss_backward.out(
        g.to("accel"), lp.to("accel"), targets.to("accel"), il, tl, out0, out1, 0, False, out=out
    )
    torch.testing.assert_close(out.cpu(), want, **TOL[torch.float32])


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(il=[10, 7, 5, 3]), "input_lengths to have value at most 9"),
        (dict(tl=[5, 2, 3, 0]), "size at least 5 at dimension 1"),
        (dict(blank=6), "blank must be in label range"),
        (dict(il=[9, 7, 5]), "input_lengths must be of size batch_size"),
    ],
)
def test_bad_arguments_raise_cpu_error(change, match):
    logits, targets, il, tl = inputs(torch.float32)
    il, tl, blank = change.get("il", il), change.get("tl", tl), change.get("blank", 0)
    lp = logits.log_softmax(2)
    with pytest.raises(RuntimeError, match=match):
        torch.ops.aten._ctc_loss(lp, targets, il, tl, blank, False)
    with pytest.raises(RuntimeError, match=match):
        torch.ops.aten._ctc_loss(lp.to("accel"), targets.to("accel"), il, tl, blank, False)
    # The device stays usable.
    assert (
        torch.ops.aten._ctc_loss(lp.to("accel"), targets.to("accel"), [9, 7, 5, 3], [4, 2, 3, 0])[0]
        .isfinite()
        .all()
    )
