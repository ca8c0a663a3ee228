"""linalg.solve_triangular on accel (csrc/aten/linalg_ops.cpp, kernels/linalg.h) against CPU:
both triangles, both sides, unit diagonals, broadcast batches, transposed operands, mixed
dtypes, the gradient, the out= form (B itself included), CPU's errors, and no fallback.
Qwen3-Next's gated delta rule solves its chunks' UT systems with it."""

import pytest
import torch

import torch_accel

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12)}
solve = torch.linalg.solve_triangular


def triangular(*shape, dtype=torch.float32, seed=0):
    # A strong diagonal keeps the systems well conditioned; both triangles hold values, so a
    # kernel reading the wrong one fails.
    n = shape[-1]
    a = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    return a + n * torch.eye(n, dtype=dtype)


def rhs(*shape, dtype=torch.float32, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def on_accel(*tensors):
    return [t.to("accel") for t in tensors]


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("unit", [False, True], ids=["diag", "unit"])
@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
def test_matches_cpu(upper, left, unit, dtype):
    # A's batch [2, 1] broadcasts against B's [3].
    a = triangular(2, 1, 7, 7, dtype=dtype)
    b = rhs(3, 7, 4, dtype=dtype) if left else rhs(3, 4, 7, dtype=dtype)
    want = solve(a, b, upper=upper, left=left, unitriangular=unit)
    torch_accel.reset_fallback_counts()
    got = solve(*on_accel(a, b), upper=upper, left=left, unitriangular=unit)
    assert torch_accel.fallback_counts() == {}
    assert got.shape == want.shape == ((2, 3, 7, 4) if left else (2, 3, 4, 7))
    torch.testing.assert_close(got.cpu(), want, **TOL[dtype])


def test_long_systems_and_many_columns():
    # More multiply-adds than one host task's grain: the columns split over threads.
    a, b = triangular(3, 96, 96), rhs(3, 96, 80)
    for upper in (False, True):
        want = solve(a, b, upper=upper)
        torch.testing.assert_close(solve(*on_accel(a, b), upper=upper).cpu(), want, **TOL[a.dtype])


def test_transposed_operands_and_mixed_dtypes():
    a, b = triangular(6, 6).mT, rhs(5, 6).mT  # column-major A, B
    torch.testing.assert_close(
        solve(*on_accel(a, b), upper=True).cpu(), solve(a, b, upper=True), **TOL[a.dtype]
    )
    a64 = triangular(6, 6, dtype=torch.float64)
    want = solve(a64, b, upper=False)  # promotes to double
    got = solve(*on_accel(a64, b), upper=False)
    assert got.dtype == want.dtype == torch.float64
    torch.testing.assert_close(got.cpu(), want, **TOL[torch.float64])


@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
def test_gradient_matches_cpu(left):
    a, b = triangular(2, 6, 6), rhs(2, 6, 3) if left else rhs(2, 3, 6)
    g = rhs(2, 6, 3, seed=2) if left else rhs(2, 3, 6, seed=2)

    def grads(device):
        x, y = (t.detach().to(device).requires_grad_() for t in (a, b))
        solve(x, y, upper=False, left=left).backward(g.to(device))
        return x.grad.cpu(), y.grad.cpu()

    want = grads("cpu")
    torch_accel.reset_fallback_counts()
    got = grads("accel")
    assert torch_accel.fallback_counts() == {}
    for w, h in zip(want, got):
        assert w.abs().max() > 0
        torch.testing.assert_close(h, w, **TOL[torch.float32])


def test_out_forms():
    a, b = triangular(5, 5), rhs(5, 2)
    want = solve(a, b, upper=True)
    out = torch.empty(7, device="accel")  # resized, as on CPU
    assert solve(*on_accel(a, b), upper=True, out=out) is out
    torch.testing.assert_close(out.cpu(), want, **TOL[a.dtype])
    xa, xb = on_accel(a, b)
    assert solve(xa, xb, upper=True, out=xb) is xb  # B overwritten by X, as CPU allows
    torch.testing.assert_close(xb.cpu(), want, **TOL[a.dtype])
    # An out= that is A itself: the solve reads A after X is written.
    sq = rhs(5, 5)
    want = solve(a, sq, upper=False)
    xa, xs = on_accel(a, sq)
    solve(xa, xs, upper=False, out=xa)
    torch.testing.assert_close(xa.cpu(), want, **TOL[a.dtype])
    bad = torch.empty(5, 2, dtype=torch.float64, device="accel")
    with pytest.raises(RuntimeError):
        solve(*on_accel(a, b), upper=True, out=bad)


def test_empty():
    for a, b in ((torch.randn(0, 0), torch.randn(0, 3)), (triangular(4, 4), torch.randn(4, 0))):
        got = solve(*on_accel(a, b), upper=False)
        assert got.shape == solve(a, b, upper=False).shape


@pytest.mark.parametrize(
    "a, b, kwargs",
    [
        (torch.randn(3, 4), torch.randn(3, 2), {}),
        (torch.randn(3, 3), torch.randn(3), {}),
        (torch.randn(3), torch.randn(3, 2), {}),
        (torch.randn(3, 3), torch.randn(4, 2), {}),
        (torch.randn(3, 3), torch.randn(4, 2), {"left": False}),
        (torch.randn(2, 3, 3), torch.randn(5, 3, 2), {}),
    ],
    ids=["not-square", "b-vector", "a-vector", "shapes", "shapes-right", "batch"],
)
def test_errors_match_cpu(a, b, kwargs):
    with pytest.raises(RuntimeError) as cpu:
        solve(a, b, upper=False, **kwargs)
    with pytest.raises(RuntimeError) as acc:
        solve(*on_accel(a, b), upper=False, **kwargs)
    assert str(acc.value) == str(cpu.value)


def test_half_raises_cpu_error():
    a, b = triangular(3, 3).half(), rhs(3, 2).half()
    with pytest.raises(NotImplementedError, match="Half"):
        solve(*on_accel(a, b), upper=False)
