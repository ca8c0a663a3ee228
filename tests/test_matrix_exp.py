"""linalg.matrix_exp on accel (csrc/aten/matrix_exp_ops.cpp: scaling and squaring around a
Taylor polynomial, composed of native ops) against CPU: no farther from a float64 (complex128)
reference than CPU's own result, across norms that need no squaring and many, batches whose
matrices square a different number of times, the gradient, the orthogonal parametrization
that calls it, CPU's errors, and no fallback."""

import mpmath
import pytest
import torch
from torch.nn.utils import parametrizations

import torch_accel


def reference(a):
    """e^A to 30 digits (mpmath, which torch depends on), in complex128 / float64: for float64
    inputs CPU's own result is no reference (it can be 1e-13 off on a matrix of norm 0.01)."""
    wide = torch.complex128 if a.dtype.is_complex else torch.float64
    flat = a.to(wide).reshape(-1, a.shape[-1], a.shape[-1])
    with mpmath.workdps(30):
        out = [
            torch.tensor(mpmath.expm(mpmath.matrix(m.tolist())).tolist(), dtype=wide) for m in flat
        ]
    return torch.stack(out).reshape(a.shape)


def relative_error(got, want):
    return ((got.to(want.dtype) - want).abs().max() / want.abs().max()).item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape", [(5, 5), (3, 2, 7, 7), (24, 24)])
@pytest.mark.parametrize("scale", [0.01, 1.0, 20.0])
def test_matches_cpu_within_its_error(dtype, shape, scale):
    gen = torch.Generator().manual_seed(len(shape) + int(scale))
    a = torch.randn(*shape, generator=gen, dtype=dtype) * scale / shape[-1] ** 0.5
    want = reference(a)
    cpu = torch.linalg.matrix_exp(a)
    torch_accel.reset_fallback_counts()
    got = torch.linalg.matrix_exp(a.to("accel")).cpu()
    assert torch_accel.fallback_counts() == {}
    assert got.dtype == dtype and got.shape == a.shape
    eps = torch.finfo(dtype).eps
    assert relative_error(got, want) <= 4 * max(relative_error(cpu, want), 8 * eps)


def test_batch_of_different_norms_squares_each_its_own_count():
    # Norms from 1e-3 to about 50: zero to six squarings in one call.
    scales = torch.tensor([1e-3, 0.5, 3.0, 50.0], dtype=torch.float64).view(4, 1, 1)
    a = torch.randn(4, 6, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    a = a / 6**0.5 * scales
    got = torch.linalg.matrix_exp(a.to("accel")).cpu()
    torch.testing.assert_close(got, torch.linalg.matrix_exp(a), rtol=1e-11, atol=1e-13)


def test_special_sizes_and_values():
    for a in [torch.zeros(3, 3), torch.randn(2, 1, 1), torch.empty(0, 4, 4), torch.empty(3, 0, 0)]:
        torch.testing.assert_close(
            torch.linalg.matrix_exp(a.to("accel")).cpu(), torch.linalg.matrix_exp(a)
        )
    nan = torch.eye(3)
    nan[0, 1] = float("nan")
    assert torch.linalg.matrix_exp(nan.to("accel")).cpu().isnan().any()
    # Half precision is computed in float, rounded once.
    h = torch.randn(4, 4, generator=torch.Generator().manual_seed(2)) / 2
    got = torch.linalg.matrix_exp(h.to(torch.bfloat16).to("accel")).cpu()
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(
        got.float(), reference(h.to(torch.bfloat16)).float(), rtol=1e-2, atol=1e-2
    )


def test_gradient_matches_cpu():
    a = torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    cpu = a.clone().requires_grad_()
    acc = a.to("accel").requires_grad_()
    torch.linalg.matrix_exp(cpu).sin().sum().backward()
    torch.linalg.matrix_exp(acc).sin().sum().backward()
    torch.testing.assert_close(acc.grad.cpu(), cpu.grad, rtol=1e-10, atol=1e-12)


def test_orthogonal_parametrization_trains_without_fallback():
    torch.manual_seed(0)
    cpu = parametrizations.orthogonal(torch.nn.Linear(8, 8))
    acc = parametrizations.orthogonal(torch.nn.Linear(8, 8)).to("accel")
    acc.load_state_dict(cpu.state_dict())
    x = torch.randn(4, 8)
    torch_accel.reset_fallback_counts()
    for m, inp in [(cpu, x), (acc, x.to("accel"))]:
        m(inp).square().sum().backward()
    assert torch_accel.fallback_counts() == {}
    w = acc.weight.detach().cpu()
    torch.testing.assert_close(w @ w.T, torch.eye(8), rtol=0, atol=2e-6)
    torch.testing.assert_close(w, cpu.weight.detach(), rtol=1e-5, atol=2e-6)
    grad = acc.parametrizations.weight.original.grad.cpu()
    torch.testing.assert_close(
        grad, cpu.parametrizations.weight.original.grad, rtol=1e-4, atol=1e-5
    )


def test_cpus_errors():
    for bad in [torch.randn(2, 3), torch.randn(3), torch.ones(3, 3, dtype=torch.long)]:
        with pytest.raises(RuntimeError) as cpu:
            torch.linalg.matrix_exp(bad)
        with pytest.raises(RuntimeError) as acc:
            torch.linalg.matrix_exp(bad.to("accel"))
        assert str(acc.value).split("\n")[0] == str(cpu.value).split("\n")[0]
    torch.testing.assert_close(
        torch.linalg.matrix_exp(torch.eye(2, device="accel")).cpu(), torch.eye(2) * torch.e
    )
