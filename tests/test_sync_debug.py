"""torch.accel.set_sync_debug_mode: operations that make the host wait for the device warn or
raise, as with torch.cuda.set_sync_debug_mode; asynchronous work does neither."""

import warnings

import pytest
import torch


@pytest.fixture
def mode():
    yield torch.accel.set_sync_debug_mode
    torch.accel.set_sync_debug_mode(0)


SYNCHRONISING = {
    "item": lambda x: x.sum().item(),
    "blocking copy to the host": lambda x: x.cpu(),
    "blocking copy to the device": lambda x: torch.ones(3).to("accel"),
    "nonzero": lambda x: torch.nonzero(x),
    "stream synchronize": lambda x: torch.accel.current_stream().synchronize(),
    "CPU fallback": lambda x: torch.special.airy_ai(x),
}


@pytest.mark.parametrize("name", sorted(SYNCHRONISING))
def test_synchronising_ops_warn_and_raise(mode, name):
    x = torch.arange(6.0, device="accel")
    op = SYNCHRONISING[name]
    mode("warn")
    assert torch.accel.get_sync_debug_mode() == 1
    with pytest.warns(UserWarning, match="called a synchronizing accel operation") as record:
        op(x)
    # one warning per operation, even when it is built of several waits (the fallback)
    assert len([w for w in record if "synchronizing accel" in str(w.message)]) == 1
    mode(2)
    with pytest.raises(RuntimeError, match="called a synchronizing accel operation"):
        op(x)
    mode("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        op(x)


def test_asynchronous_work_is_quiet(mode):
    mode("error")
    x = torch.randn(64, 64, device="accel")
    y = (x @ x).relu().sum(0)
    pinned = torch.empty(64, pin_memory=True)
    pinned.copy_(y, non_blocking=True)  # a pinned, non_blocking copy does not wait
    z = torch.empty(64, device="accel").copy_(pinned, non_blocking=True)
    torch.accel.synchronize()  # asked for explicitly: torch.cuda does not flag it either
    mode(0)
    torch.testing.assert_close(z.cpu(), y.cpu())


def test_invalid_mode():
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
        torch.accel.set_sync_debug_mode("loud")
    with pytest.raises(RuntimeError, match="must be 0, 1 or 2"):
        torch.accel.set_sync_debug_mode(5)


def test_padding_and_upsampling_do_not_wait_for_the_device(mode):
    # Their gathers' indices are in range by construction, so nothing reads them back.
    def outputs(x):
        f = torch.nn.functional
        return [
            f.pad(x, (2, 3, 1, -2), mode="reflect"),
            f.pad(x, (2, 3, 1, 4), mode="replicate"),
            f.interpolate(x, scale_factor=2, mode="bilinear"),
            f.interpolate(x, size=(5, 13), mode="nearest"),
            f.interpolate(x, scale_factor=1.5, mode="bicubic"),
        ]

    x = torch.randn(2, 3, 9, 9)
    xa = x.to("accel").requires_grad_()
    mode("error")
    outs = outputs(xa)
    grad = torch.autograd.grad(sum(o.sum() for o in outs), xa)[0]
    mode(0)
    xc = x.clone().requires_grad_()
    expected = outputs(xc)
    for got, want in zip(outs, expected):
        torch.testing.assert_close(got.detach().cpu(), want.detach())
    torch.testing.assert_close(
        grad.cpu(), torch.autograd.grad(sum(o.sum() for o in expected), xc)[0]
    )
