"""Native add/sub/mul/div against CPU: broadcasting, promotion, scalars, in-place, out=."""

import pytest
import torch

import torch_accel

OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32]
)
def test_tensor_tensor_broadcast(op, dtype):
    x = (torch.randn(4, 1, 6) * 5).to(dtype)
    y = (torch.randn(3, 6) * 5 + 7).to(dtype)
    expected = OPS[op](x, y)
    got = OPS[op](x.to("accel"), y.to("accel"))
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True)  # int 0/0 is nan in both
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("op", list(OPS))
def test_scalars_and_promotion(op):
    x = torch.arange(1, 7, dtype=torch.int32).reshape(2, 3)
    for other in [2, 1.5, True]:
        if op == "sub" and other is True:
            continue
        torch.testing.assert_close(OPS[op](x.to("accel"), other).cpu(), OPS[op](x, other))
    f = torch.randn(2, 3, dtype=torch.bfloat16)
    torch.testing.assert_close(OPS[op](f.to("accel"), x.to("accel")).cpu(), OPS[op](f, x))
    assert torch_accel.fallback_counts() == {}


def test_alpha_inplace_and_out():
    x, y = torch.randn(5, 4), torch.randn(5, 4)
    a = x.to("accel")
    a.add_(y.to("accel"), alpha=-2.5)
    torch.testing.assert_close(a.cpu(), x.add(y, alpha=-2.5))
    out = torch.empty(5, 4, dtype=torch.float64, device="accel")
    torch.sub(x.to("accel"), y.to("accel"), alpha=3, out=out)
    torch.testing.assert_close(out.cpu(), torch.sub(x, y, alpha=3).double())
    a.t().mul_(2)  # non-contiguous in-place
    torch.testing.assert_close(a.cpu(), x.add(y, alpha=-2.5) * 2)


def test_operators_and_large_sizes():
    x = torch.randn(1 << 20)
    a = x.to("accel")
    torch.testing.assert_close(((a + 1) * a / 3 - a).cpu(), (x + 1) * x / 3 - x)


def test_complex_without_a_kernel_goes_through_the_counted_fallback():
    # complex add is native (tests/test_complex_ops.py); complex ** complex is not.
    z = torch.randn(4, dtype=torch.complex64)
    got = torch.pow(z.to("accel"), z.to("accel")).cpu()
    torch.testing.assert_close(got, torch.pow(z, z))
    assert torch_accel.fallback_counts() == {"aten::pow.Tensor_Tensor": 1}


def test_bool_sub_error_matches_cpu():
    b = torch.tensor([True, False], device="accel")
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        b - b


def test_scalar_on_the_left():
    x = torch.arange(1.0, 5.0)
    a = x.to("accel")
    torch.testing.assert_close((2 - a).cpu(), 2 - x)  # rsub: the scalar is the left operand
    xs = [x.clone().to("accel"), (x * 2).to("accel")]
    torch._foreach_mul_(xs, 2.5)  # ATen's slow path computes scalar * tensor
    torch.testing.assert_close(xs[0].cpu(), x * 2.5)
    torch.testing.assert_close(xs[1].cpu(), x * 5.0)
    assert torch_accel.fallback_counts() == {}
