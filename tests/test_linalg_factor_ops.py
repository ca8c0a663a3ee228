"""The LU, Cholesky and QR families on accel (csrc/aten/lu_ops.cpp, cholesky_ops.cpp,
qr_ops.cpp, kernels/linalg.h) against CPU: factors, pivots and info, solves on both sides and
adjoint, inverses, determinants, unpacking, reflectors and Q in every mode, gradients through
the factor each op returns, singular and non-positive-definite inputs, broadcast batches, large
systems (many factorization steps and panels), out= forms, empty matrices, and no fallback."""

import pytest
import torch

import torch_accel

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(autouse=True)
def no_fallback():
    torch_accel.reset_fallback_counts()
    yield
    assert torch_accel.fallback_counts() == {}


def randn(*shape, dtype=torch.float64, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def spd(*shape, dtype=torch.float64, seed=0):
    """Symmetric positive-definite matrices of `shape` [.., n, n]."""
    a = randn(*shape, dtype=dtype, seed=seed)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def close(got, want, dtype):
    torch.testing.assert_close(got.cpu(), want, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 7, 4), (2, 3, 6), (1, 1)])
def test_lu_factor_and_unpack_match_cpu(dtype, shape):
    A = randn(*shape, dtype=dtype)
    LU, piv, info = torch.linalg.lu_factor_ex(A.to("accel"))
    LU_cpu, piv_cpu, info_cpu = torch.linalg.lu_factor_ex(A)
    close(LU, LU_cpu, dtype)
    assert torch.equal(piv.cpu(), piv_cpu) and torch.equal(info.cpu(), info_cpu)
    assert LU.stride() == LU_cpu.stride()  # column-major, as LAPACK's
    for got, want in zip(torch.linalg.lu(A.to("accel")), torch.linalg.lu(A)):
        close(got, want, dtype)
    for got, want in zip(torch.lu_unpack(LU, piv), torch.lu_unpack(LU_cpu, piv_cpu)):
        close(got, want, dtype)


def test_pivots_pick_the_largest_entry_and_record_zero_pivots():
    A = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=torch.float64)
    LU, piv, info = torch.linalg.lu_factor_ex(A.to("accel"))
    assert piv.cpu().tolist() == [3, 3, 3] and info.item() == 0
    P, L, U = torch.linalg.lu(A.to("accel"))
    close(P @ L @ U, A, torch.float64)
    zeros = torch.zeros(2, 3, 3)
    zeros[1] = torch.eye(3)
    zeros[1, 1, 1] = 0
    got = torch.linalg.lu_factor_ex(zeros.to("accel")).info.cpu()
    assert torch.equal(got, torch.linalg.lu_factor_ex(zeros).info)  # [1, 2]: first zero column
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):  # as CPU: not LinAlgError
        torch.linalg.lu_factor_ex(zeros.to("accel"), check_errors=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_cpu(dtype, left, adjoint):
    A = randn(3, 5, 5, dtype=dtype)
    B = randn(2, 1, 5, 4, dtype=dtype, seed=1)  # broadcast against A's batch
    if not left:
        B = B.mT
    LU, piv = torch.linalg.lu_factor(A)
    got = torch.linalg.lu_solve(*(t.to("accel") for t in (LU, piv, B)), left=left, adjoint=adjoint)
    close(got, torch.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_slogdet_match_cpu(dtype):
    A = randn(4, 6, 6, dtype=dtype)
    B = randn(4, 6, 3, dtype=dtype, seed=1)
    Aa, Ba = A.to("accel"), B.to("accel")
    close(torch.linalg.solve(Aa, Ba), torch.linalg.solve(A, B), dtype)
    close(torch.linalg.solve(Aa, Ba[..., 0]), torch.linalg.solve(A, B[..., 0]), dtype)  # vector
    close(torch.linalg.solve(Aa, Ba.mT, left=False), torch.linalg.solve(A, B.mT, left=False), dtype)
    close(torch.linalg.solve(Aa.mT, Ba), torch.linalg.solve(A.mT, B), dtype)  # not contiguous
    close(torch.linalg.inv(Aa), torch.linalg.inv(A), dtype)
    close(torch.linalg.det(Aa), torch.linalg.det(A), dtype)
    for got, want in zip(torch.linalg.slogdet(Aa), torch.linalg.slogdet(A)):
        close(got, want, dtype)
    close(
        torch.logdet(spd(6, 6, dtype=dtype).to("accel")),
        torch.logdet(spd(6, 6, dtype=dtype)),
        dtype,
    )
    close(torch.linalg.matrix_power(Aa, -2), torch.linalg.matrix_power(A, -2), dtype)


def test_singular_matrices_as_cpu():
    A = randn(3, 4, 4)
    A[1, :, 2] = 0  # exactly singular whatever the rounding: U[2, 2] is 0
    close(torch.linalg.det(A.to("accel")), torch.linalg.det(A), torch.float64)
    assert torch.linalg.det(A.to("accel"))[1].item() == pytest.approx(0, abs=1e-12)
    assert torch.equal(torch.linalg.inv_ex(A.to("accel")).info.cpu(), torch.linalg.inv_ex(A).info)
    eyes = torch.eye(2).repeat(3, 1, 1)
    eyes[1, 1, 1] = 0
    with pytest.raises(
        torch.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2"
    ):
        torch.linalg.inv(eyes.to("accel"))


@pytest.mark.parametrize("shape", [(2, 150, 130), (140, 200), (1, 129, 129)])
def test_factor_in_panels_matches_cpu(shape):
    """Matrices wider than a panel (64 columns): the panels' row exchanges reach the columns
    outside them, and the rest of the matrix is updated by GEMM."""
    A = randn(*shape)
    LU, piv = torch.linalg.lu_factor(A.to("accel"))
    LU_cpu, piv_cpu = torch.linalg.lu_factor(A)
    assert torch.equal(piv.cpu(), piv_cpu)
    close(LU, LU_cpu, torch.float64)
    S = spd(*shape[:-2], shape[-1], shape[-1])
    close(torch.linalg.cholesky(S.to("accel")), torch.linalg.cholesky(S), torch.float64)


def test_large_system_takes_many_steps():
    # 96 factorization steps; partial pivoting keeps the residual at rounding level.
    A = randn(96, 96, dtype=torch.float32)
    B = randn(96, 8, dtype=torch.float32, seed=1)
    X = torch.linalg.solve(A.to("accel"), B.to("accel")).cpu()
    torch.testing.assert_close(X, torch.linalg.solve(A, B), rtol=1e-3, atol=1e-3)
    assert (A.double() @ X.double() - B.double()).abs().max() < 1e-3


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: torch.linalg.solve(a, b),
        lambda a, b: torch.linalg.solve(a, b[..., 0]),
        lambda a, b: torch.linalg.solve(a.mT, b, left=True),
        lambda a, b: torch.linalg.inv(a),
        lambda a, b: torch.linalg.det(a),
        lambda a, b: torch.linalg.slogdet(a)[1],
        lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
        lambda a, b: torch.linalg.lu(a)[1] * 2 + torch.linalg.lu(a)[2],
    ],
    ids=["solve", "solve-vector", "solve-transposed", "inv", "det", "slogdet", "lu_solve", "lu"],
)
def test_gradients_match_cpu(op):
    """The backward formulas read the factor each op returns (of A or of A^T, as CPU's)."""
    A, B = randn(2, 4, 4), randn(2, 4, 3, seed=1)
    grads = []
    for device in ("cpu", "accel"):
        a, b = (t.to(device).requires_grad_() for t in (A.clone(), B.clone()))
        op(a, b).sum().backward()
        grads.append([a.grad.cpu(), None if b.grad is None else b.grad.cpu()])
    for got, want in zip(*grads[::-1]):
        if want is not None:
            close(got, want, torch.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family_matches_cpu(dtype, upper):
    S = spd(3, 5, 5, dtype=dtype)
    Sa = S.to("accel")
    close(torch.linalg.cholesky(Sa, upper=upper), torch.linalg.cholesky(S, upper=upper), dtype)
    close(torch.cholesky(Sa, upper=upper), torch.cholesky(S, upper=upper), dtype)
    F = torch.linalg.cholesky(S, upper=upper)
    B = randn(3, 5, 2, dtype=dtype, seed=2)
    got = torch.cholesky_solve(B.to("accel"), F.to("accel"), upper=upper)
    close(got, torch.cholesky_solve(B, F, upper=upper), dtype)
    close(
        torch.cholesky_inverse(F[0].to("accel"), upper=upper),
        torch.cholesky_inverse(F[0], upper=upper),
        dtype,
    )


def test_cholesky_reads_one_triangle_and_reports_non_positive_definite():
    S = spd(4, 4)  # one matrix
    noisy = S + torch.triu(randn(4, 4, seed=3), 1)  # only the upper triangle changes
    close(torch.linalg.cholesky(noisy.to("accel")), torch.linalg.cholesky(S), torch.float64)
    bad = torch.stack([S, -S, S])
    bad[2, 2, 2] = -100.0
    info = torch.linalg.cholesky_ex(bad.to("accel")).info.cpu()
    assert torch.equal(info, torch.linalg.cholesky_ex(bad).info)  # [0, 1, 3]
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        torch.linalg.cholesky(bad.to("accel"))
    a = torch.randn(4, 4, dtype=torch.float64, device="accel").requires_grad_()
    torch.linalg.cholesky(
        a @ a.mT + 4 * torch.eye(4, dtype=torch.float64, device="accel")
    ).sum().backward()
    a_cpu = a.detach().cpu().requires_grad_()
    torch.linalg.cholesky(a_cpu @ a_cpu.mT + 4 * torch.eye(4, dtype=torch.float64)).sum().backward()
    close(a.grad, a_cpu.grad, torch.float64)


def test_out_forms_and_empty():
    A = randn(3, 3)
    LU, piv, info = (
        torch.empty(0, device="accel", dtype=t) for t in (torch.float64, torch.int32, torch.int32)
    )
    torch.linalg.lu_factor_ex(A.to("accel"), out=(LU, piv, info))
    close(LU, torch.linalg.lu_factor(A)[0], torch.float64)
    out = torch.empty(3, 3, device="accel", dtype=torch.float64)
    torch.linalg.inv(A.to("accel"), out=out)
    close(out, torch.linalg.inv(A), torch.float64)
    with pytest.raises(RuntimeError, match="device"):
        torch.linalg.inv(A.to("accel"), out=torch.empty(3, 3, dtype=torch.float64))
    for shape in [(0, 0), (2, 0, 0), (0, 3, 3)]:
        E = torch.empty(shape, dtype=torch.float64)
        close(torch.linalg.inv(E.to("accel")), torch.linalg.inv(E), torch.float64)
        close(torch.linalg.det(E.to("accel")), torch.linalg.det(E), torch.float64)
        close(torch.linalg.cholesky(E.to("accel")), torch.linalg.cholesky(E), torch.float64)


def test_bad_pivots_raise_and_leave_the_device_usable():
    LU, piv = torch.linalg.lu_factor(randn(3, 3).to("accel"))
    bad = piv.clone()
    bad[0] = 7
    with pytest.raises(torch.AcceleratorError, match="out of bounds"):
        torch.linalg.lu_solve(LU, bad, randn(3, 2).to("accel"))
        torch.accel.synchronize()
    B = randn(3, 2)
    close(
        torch.linalg.lu_solve(LU, piv, B.to("accel")),
        torch.linalg.lu_solve(LU.cpu(), piv.cpu(), B),
        torch.float64,
    )


def test_shape_errors_match_cpu():
    for device in ("cpu", "accel"):
        with pytest.raises(RuntimeError, match="square"):
            torch.linalg.solve(torch.randn(2, 3, device=device), torch.randn(2, device=device))
        with pytest.raises(RuntimeError, match="Incompatible shapes"):
            torch.linalg.solve(torch.randn(3, 3, device=device), torch.randn(4, 2, device=device))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 130, 70), (1, 1)])
def test_qr_family_matches_cpu(dtype, shape):
    """geqrf's reflectors and tau, Q and R in every mode, householder_product and ormqr on both
    sides: LAPACK's conventions (a 130-row matrix takes 70 reflectors)."""
    A = randn(*shape, dtype=dtype)
    a, tau = torch.geqrf(A)
    got_a, got_tau = torch.geqrf(A.to("accel"))
    close(got_a, a, dtype)
    close(got_tau, tau, dtype)
    for mode in ("reduced", "complete", "r"):
        want = torch.linalg.qr(A, mode=mode)
        got = torch.linalg.qr(A.to("accel"), mode=mode)
        close(got.R, want.R, dtype)
        assert got.Q.shape == want.Q.shape
        if mode != "r":
            close(got.Q, want.Q, dtype)
    if shape[-2] >= shape[-1]:
        close(
            torch.linalg.householder_product(got_a, got_tau),
            torch.linalg.householder_product(a, tau),
            dtype,
        )
    m = shape[-2]
    for left, c in (
        (True, randn(*shape[:-2], m, 4, dtype=dtype)),
        (False, randn(*shape[:-2], 4, m, dtype=dtype)),
    ):
        for transpose in (False, True):
            want = torch.ormqr(a, tau, c, left=left, transpose=transpose)
            close(
                torch.ormqr(got_a, got_tau, c.to("accel"), left=left, transpose=transpose),
                want,
                dtype,
            )


def test_qr_gradient_and_orthogonal_init():
    A = randn(5, 3)
    grads = []
    for device in ("cpu", "accel"):
        a = A.clone().to(device).requires_grad_()
        q, r = torch.linalg.qr(a)
        (q.sum() + r.sum()).backward()
        grads.append(a.grad.cpu())
    close(grads[1], grads[0], torch.float64)
    w = torch.empty(64, 32, device="accel")
    torch.nn.init.orthogonal_(w)  # a QR of a random matrix, on the device
    torch.testing.assert_close((w.T @ w).cpu(), torch.eye(32), rtol=0, atol=1e-5)
