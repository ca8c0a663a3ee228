"""The counted CPU fallback: counts, warnings, strict mode, in-place, out=, factories, random."""

import warnings

import pytest
import torch

import torch_accel
from conftest import run_python


def test_fallback_is_counted_with_time_and_bytes():
    x = torch.randn(100, 10)
    a = x.to("accel")
    torch_accel.reset_fallback_counts()
    r = torch.special.airy_ai(a)  # an op with no accel kernel
    torch.testing.assert_close(r.cpu(), torch.special.airy_ai(x))
    # airy_ai is structured: its functional form reaches the fallback as the out= overload.
    assert torch_accel.fallback_counts() == {"aten::special_airy_ai.out": 1}
    stats = torch_accel.fallback_stats()["aten::special_airy_ai.out"]
    assert stats["calls"] == 1 and stats["seconds"] > 0
    # to the host: the input and the preallocated out tensor; back: the filled out tensor
    assert stats["bytes_to_host"] == 2 * x.nbytes and stats["bytes_to_device"] == x.nbytes
    torch_accel.reset_fallback_counts()
    assert torch_accel.fallback_counts() == {}


def _airy_ai_warnings(calls):
    a = torch.randn(8, device="accel")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(calls):
            torch.special.airy_ai(a)
    return [str(w.message) for w in caught if "airy_ai" in str(w.message)]


def test_warns_once_per_op_until_reset():
    # conftest resets the counts before each test, so this op has not warned yet
    texts = _airy_ai_warnings(2)
    assert len(texts) == 1 and "'aten::special_airy_ai.out' has no native accel kernel" in texts[0]
    assert torch_accel.fallback_counts()["aten::special_airy_ai.out"] == 2
    assert _airy_ai_warnings(1) == []
    torch_accel.reset_fallback_counts()
    assert len(_airy_ai_warnings(1)) == 1


def test_in_place_and_out_forms():
    x = torch.rand(6, 5) + 0.5
    a = x.to("accel")
    a.log2_()
    torch.testing.assert_close(a.cpu(), x.log2())
    out = torch.empty(0, device="accel")
    torch.atan2(x.to("accel"), x.to("accel"), out=out)  # out= resized by the fallback
    torch.testing.assert_close(out.cpu(), torch.atan2(x, x))
    assert out.device.type == "accel"


def test_factory_functions():
    r = torch.arange(2, 20, 3, device="accel")
    assert r.device.type == "accel"
    torch.testing.assert_close(r.cpu(), torch.arange(2, 20, 3))
    last = torch.accel.device_count() - 1  # accel:1 where there are two
    e = torch.eye(4, device=f"accel:{last}")
    assert e.device == torch.device(f"accel:{last}")
    torch.testing.assert_close(e.cpu(), torch.eye(4))
    torch.testing.assert_close(
        torch.linspace(0, 1, 7, device="accel").cpu(), torch.linspace(0, 1, 7)
    )


def test_random_ops_follow_the_accel_seed():
    torch.accel.manual_seed(1234)
    a = torch.randn(5, device="accel")
    b = torch.rand(3, 3, device="accel")
    torch.accel.manual_seed(1234)
    assert torch.equal(torch.randn(5, device="accel").cpu(), a.cpu())
    assert torch.equal(torch.rand(3, 3, device="accel").cpu(), b.cpu())
    # The accel seed, not the CPU generator's state, drives accel random numbers.
    torch.manual_seed(999)
    torch.accel.manual_seed(1234)
    c = torch.randn(5, device="accel")
    assert torch.equal(c.cpu(), a.cpu())


def test_explicit_generator_and_state():
    g = torch.Generator(device="accel").manual_seed(7)
    x = torch.empty(10, device="accel").uniform_(generator=g)
    g.manual_seed(7)
    y = torch.empty(10, device="accel").uniform_(generator=g)
    assert torch.equal(x.cpu(), y.cpu())
    state = torch.accel.get_rng_state()
    p = torch.randperm(20, device="accel")
    torch.accel.set_rng_state(state)
    q = torch.randperm(20, device="accel")
    assert torch.equal(p.cpu(), q.cpu())
    assert sorted(p.cpu().tolist()) == list(range(20))


def test_error_mode_refuses_the_fallback():
    proc = run_python(
        "import torch, torch_accel\n"
        "a = torch.ones(3, device='accel')\n"
        "b = a + 1\n"  # native: allowed
        "try:\n"
        "    torch.special.airy_ai(a)\n"
        "except NotImplementedError as e:\n"
        "    print('REFUSED', 'airy_ai' in str(e))\n"
        "print('RESULT', (b.cpu() == 2).all().item())\n",
        env={"TORCH_ACCEL_FALLBACK": "error"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "REFUSED True" in proc.stdout and "RESULT True" in proc.stdout


def test_set_fallback_mode_at_run_time():
    torch_accel.set_fallback_mode("error")
    try:
        with pytest.raises(NotImplementedError, match="aten::special_airy_ai.out"):
            torch.special.airy_ai(torch.ones(3, device="accel"))
    finally:
        torch_accel.set_fallback_mode("warn")
    assert torch_accel.fallback_mode() == "warn"


def test_convolution_strides_are_what_fake_tensors_predict():
    # torch.compile plans buffers from FakeTensor's prediction; the fallback's CPU result
    # (channels_last for channels_last inputs) is returned in accel's format.
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    w = torch.randn(4, 3, 3, 3).to(memory_format=torch.channels_last)
    xa, wa = x.to("accel"), w.to("accel")
    out = torch.nn.functional.conv2d(xa, wa, padding=1)
    mode = FakeTensorMode()
    fx, fw = mode.from_tensor(xa), mode.from_tensor(wa)
    with mode:
        fake = torch.nn.functional.conv2d(fx, fw, padding=1)
    assert out.stride() == fake.stride()
    torch.testing.assert_close(
        out.cpu(), torch.nn.functional.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4
    )
    grad = torch.randn(out.shape)
    conv_args = ([4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
    ga = grad.to("accel")
    grads = torch.ops.aten.convolution_backward(ga, xa, wa, *conv_args)
    fg = mode.from_tensor(ga)
    with mode:
        fake_grads = torch.ops.aten.convolution_backward(fg, fx, fw, *conv_args)
    cpu_grads = torch.ops.aten.convolution_backward(grad, x, w, *conv_args)
    for g, f, c in zip(grads, fake_grads, cpu_grads):
        assert g.stride() == f.stride()
        torch.testing.assert_close(g.cpu(), c, rtol=1e-4, atol=1e-4)
