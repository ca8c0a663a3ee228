"""The activations that take parameters and their backward (csrc/aten/activation_ops.cpp)
against CPU: forward and gradient values, in-place and out= forms, non-contiguous inputs, and
no fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
    torch.float16: dict(rtol=2e-3, atol=1e-3),
}

ACTIVATIONS = {
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, 0.7),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, 1.3),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 1.5),
    "relu6": F.relu6,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "mish": F.mish,
    "logsigmoid": F.logsigmoid,
    "softshrink": lambda x: F.softshrink(x, 0.3),
    "hardshrink": lambda x: F.hardshrink(x, 0.3),
    "threshold": lambda x: F.threshold(x, 0.1, -2.0),
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=3.0),
    "prelu": lambda x: F.prelu(
        x, torch.linspace(0.1, 0.4, x.shape[1], device=x.device, dtype=x.dtype)
    ),
}


def sample(dtype):
    # Values across every branch: around +-3 (hardswish), the thresholds, zero, large.
    x = torch.cat([torch.linspace(-6, 6, 97), torch.randn(61) * 3, torch.tensor([0.0, -0.3, 0.3])])
    return x.reshape(7, 1, 23).expand(7, 4, 23).clone().to(dtype)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_forward_and_backward_match_cpu(name, dtype):
    fn = ACTIVATIONS[name]
    x = sample(dtype)
    g = torch.randn(x.shape).to(dtype)
    xc = x.clone().requires_grad_()
    yc = fn(xc)
    yc.backward(g)
    xa = x.to("accel").requires_grad_()
    torch_accel.reset_fallback_counts()
    ya = fn(xa)
    ya.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(ya.detach().cpu(), yc.detach(), **TOL[dtype])
    torch.testing.assert_close(xa.grad.cpu(), xc.grad, **TOL[dtype])


@pytest.mark.parametrize(
    "name", ["leaky_relu", "elu", "hardtanh", "hardswish", "hardsigmoid", "mish", "threshold"]
)
def test_in_place_out_and_non_contiguous(name):
    x = sample(torch.float32)
    inplace = {
        "leaky_relu": lambda t: F.leaky_relu(t, 0.2, inplace=True),
        "elu": lambda t: F.elu(t, 0.7, inplace=True),
        "hardtanh": lambda t: F.hardtanh(t, -0.5, 1.5, inplace=True),
        "hardswish": lambda t: F.hardswish(t, inplace=True),
        "hardsigmoid": lambda t: F.hardsigmoid(t, inplace=True),
        "mish": lambda t: F.mish(t, inplace=True),
        "threshold": lambda t: F.threshold(t, 0.1, -2.0, inplace=True),
    }[name]
    expected = inplace(x.clone())
    a = x.to("accel")
    view = a[:, ::2]  # in place through a strided view
    inplace(view)
    torch.testing.assert_close(view.cpu(), expected[:, ::2], **TOL[torch.float32])
    torch.testing.assert_close(a[:, 1::2].cpu(), x[:, 1::2])  # the rest untouched
    t = x.transpose(0, 2)
    torch.testing.assert_close(
        ACTIVATIONS[name](t.to("accel")).cpu(), ACTIVATIONS[name](t), **TOL[torch.float32]
    )
    assert torch_accel.fallback_counts() == {}


def test_out_forms():
    x = sample(torch.float32)
    out = torch.empty(0, device="accel")
    torch._C._nn.leaky_relu(x.to("accel"), 0.1, out=out)
    torch.testing.assert_close(out.cpu(), F.leaky_relu(x, 0.1))
    torch._C._nn.hardswish(x.to("accel"), out=out)
    torch.testing.assert_close(out.cpu(), F.hardswish(x))
    assert torch_accel.fallback_counts() == {}


def test_inplace_backward_from_the_result():
    # leaky_relu_ and elu_ save their result; the backward reads it (self_is_result).
    for fn in (lambda t: F.leaky_relu(t, 0.2, inplace=True), lambda t: F.elu(t, 0.7, inplace=True)):
        x = sample(torch.float32)
        g = torch.randn(x.shape)
        xc = x.clone().requires_grad_()
        fn(xc * 1).backward(g)
        xa = x.to("accel").requires_grad_()
        fn(xa * 1).backward(g.to("accel"))
        torch.testing.assert_close(xa.grad.cpu(), xc.grad)
    with pytest.raises(RuntimeError, match="negative slope"):
        xa = x.to("accel").requires_grad_()
        F.leaky_relu(xa * 1, -0.2, inplace=True).sum().backward()
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("name", ["softshrink", "hardshrink"])
def test_shrinks_pass_nan_and_infinities(name, dtype):
    # softshrink's zero band is 0 * x in ATen, so a NaN stays NaN (it gave 0).
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.2, 0.2, 0.0, 1.0, -1.0])
    x = x.to(dtype)
    expected = ACTIVATIONS[name](x)
    actual = ACTIVATIONS[name](x.to("accel")).cpu()
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)


def test_integer_input_raises_cpus_error():
    with pytest.raises(RuntimeError) as cpu:
        F.hardswish(torch.arange(4))
    with pytest.raises(RuntimeError) as acc:
        F.hardswish(torch.arange(4, device="accel"))
    assert str(acc.value) == str(cpu.value)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("dim", [1, -2, 0])
def test_glu_and_gradient_match_cpu(dim, dtype):
    x = torch.cat([sample(dtype), sample(dtype)])  # [14, 4, 23]
    xc = x.clone().requires_grad_()
    yc = F.glu(xc, dim)
    g = torch.randn(yc.shape).to(dtype)
    yc.backward(g)
    xa = x.to("accel").requires_grad_()
    torch_accel.reset_fallback_counts()
    ya = F.glu(xa, dim)
    ya.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(ya.detach().cpu(), yc.detach(), **TOL[dtype])
    torch.testing.assert_close(xa.grad.cpu(), xc.grad, **TOL[dtype])


def test_glu_out_non_contiguous_and_odd_size():
    x = sample(torch.float32).transpose(0, 2)  # [23, 4, 7], non-contiguous
    g = torch.randn(23, 2, 7)
    a = x.to("accel")
    out = torch.empty(0, device="accel")
    torch._C._nn.glu(a, 1, out=out)
    torch.testing.assert_close(out.cpu(), F.glu(x, 1), **TOL[torch.float32])
    grad = torch.empty(0, device="accel")
    torch.ops.aten.glu_backward.grad_input(g.to("accel"), a, -2, grad_input=grad)
    torch.testing.assert_close(
        grad.cpu(), torch.ops.aten.glu_backward(g, x, -2), **TOL[torch.float32]
    )
    assert torch_accel.fallback_counts() == {}
    for t, dim in [(a, 0), (a, -1), (torch.tensor(1.0, device="accel"), 0)]:
        with pytest.raises(RuntimeError) as cpu:
            F.glu(t.cpu(), dim)
        with pytest.raises(RuntimeError) as acc:
            F.glu(t, dim)
        assert str(acc.value) == str(cpu.value)


def rrelu_input(dtype=torch.float32):
    # Zeros and a NaN included: zero counts as negative (scaled), NaN passes with noise 1.
    x = torch.randn(4096, generator=torch.Generator().manual_seed(5)).to(dtype)
    x[:8] = 0
    x[8] = float("nan")
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rrelu_training_draws_slopes_in_range_and_records_them(dtype):
    x = rrelu_input(dtype)
    noise = torch.empty_like(x, device="accel")
    torch_accel.reset_fallback_counts()
    y = torch.ops.aten.rrelu_with_noise(x.to("accel"), noise, 0.1, 0.3, True)
    assert torch_accel.fallback_counts() == {}
    y, noise = y.cpu(), noise.cpu()
    scaled = x <= 0
    slopes = noise[scaled]
    tol = 0.3 * torch.finfo(dtype).eps  # a drawn slope rounded to the dtype
    assert slopes.min() >= 0.1 - tol and slopes.max() <= 0.3 + tol
    assert slopes.float().std() > 0.04  # drawn per element, not one slope for all
    assert torch.equal(noise[~scaled], torch.ones_like(noise[~scaled]))
    torch.testing.assert_close(y, x * noise, equal_nan=True, rtol=0, atol=0)


def test_rrelu_eval_is_leaky_relu_with_the_mean_slope():
    x = rrelu_input()
    torch_accel.reset_fallback_counts()
    got = F.rrelu(x.to("accel"), 0.1, 0.3, training=False).cpu()
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(got, F.rrelu(x, 0.1, 0.3, training=False), equal_nan=True)


def test_rrelu_in_place_out_gradient_and_generator():
    x = rrelu_input().to("accel")
    g = torch.Generator(device="accel").manual_seed(3)
    n1, n2 = torch.empty_like(x), torch.empty_like(x)
    y1 = torch.ops.aten.rrelu_with_noise(x, n1, 0.1, 0.3, True, g.manual_seed(3))
    y2 = x.clone()
    torch.ops.aten.rrelu_with_noise_(y2, n2, 0.1, 0.3, True, g.manual_seed(3))
    assert torch.equal(n1.cpu(), n2.cpu())  # the same draws from the same seed
    torch.testing.assert_close(y1.cpu(), y2.cpu(), equal_nan=True, rtol=0, atol=0)
    out = torch.empty(3, device="accel")  # resized, as CPU resizes
    n3 = torch.empty_like(x)
    torch.ops.aten.rrelu_with_noise.out(x, n3, 0.1, 0.3, True, g.manual_seed(3), out=out)
    torch.testing.assert_close(out.cpu(), y1.cpu(), equal_nan=True, rtol=0, atol=0)
    # The gradient is the recorded slope (1 for the positive elements).
    xg = torch.randn(64, device="accel", requires_grad=True)
    m = torch.nn.RReLU(0.1, 0.3).train()
    m(xg).sum().backward()
    pos = (xg > 0).cpu()
    assert torch.equal(xg.grad.cpu()[pos], torch.ones(int(pos.sum())))
    grad_neg = xg.grad.cpu()[~pos]
    assert grad_neg.min() >= 0.1 and grad_neg.max() < 0.3


def test_rrelu_noise_of_another_shape_raises_cpus_error():
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match="noise tensor shape must match") as cpu:
        torch.ops.aten.rrelu_with_noise(x, torch.empty(2), 0.1, 0.3, True)
    with pytest.raises(RuntimeError) as acc:
        torch.ops.aten.rrelu_with_noise(
            x.to("accel"), torch.empty(2, device="accel"), 0.1, 0.3, True
        )
    assert str(acc.value).split("\n")[0] == str(cpu.value).split("\n")[0]
