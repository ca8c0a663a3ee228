"""Native matrix products (mm, bmm, addmm, baddbmm, addmv, dot and the composites matmul,
linear, mv) against CPU: dtypes, transposed and non-contiguous operands, out= and in-place
forms, broadcasting in matmul, and PyTorch's shape and dtype errors."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

TOL = {
    torch.float32: dict(atol=1e-5, rtol=1e-5),
    torch.float64: dict(atol=1e-12, rtol=1e-12),
    torch.bfloat16: dict(atol=5e-2, rtol=2e-2),
    torch.float16: dict(atol=5e-3, rtol=5e-3),
}
DTYPES = list(TOL)


def dev(*ts):
    return [t.to("accel") for t in ts]


def check(got, expected, dtype):
    assert got.device.type == "accel"
    assert got.dtype == expected.dtype
    # references are CPU products of the same (rounded) values in fp64, rounded to dtype
    torch.testing.assert_close(got.cpu().double(), expected.double(), **TOL[dtype])


LAYOUTS = ["contiguous", "transposed", "strided", "padded_ld"]


def on_device(x, layout):
    """x (a matrix) on the device with the given memory layout, built there by copy_."""
    r, c = x.shape
    if layout == "contiguous":
        return x.to("accel")
    if layout == "transposed":  # strides (1, rows): a BLAS operand with a transpose flag
        y = torch.empty(c, r, dtype=x.dtype, device="accel").t()
    elif layout == "strided":  # strides (2 * cols, 2): fits no BLAS layout, copied first
        y = torch.zeros(r, 2 * c, dtype=x.dtype, device="accel")[:, ::2]
    else:  # "padded_ld": strides (cols + 3, 1), a leading dimension larger than cols
        y = torch.zeros(r, c + 3, dtype=x.dtype, device="accel")[:, :c]
    y.copy_(x)
    assert y.is_contiguous() == (layout == "contiguous")
    return y


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_all_layouts(dtype):
    a, b = rand(7, 5, dtype=dtype), rand(5, 9, dtype=dtype)
    ref = (a.double() @ b.double()).to(dtype)
    for la in LAYOUTS:
        for lb in LAYOUTS:
            A, B = on_device(a, la), on_device(b, lb)
            check(torch.mm(A, B), ref, dtype)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_products_split_over_host_threads(dtype):
    # Products of millions of flops are split over the host's threads, by columns of the
    # result or by batch: every layout, alpha/beta and a batch gives CPU's values.
    def close(got, expected, dtype):  # sums of 160 products: fp32 rounding grows with them
        tol = dict(atol=1e-4, rtol=1e-4) if dtype == torch.float32 else TOL[dtype]
        assert got.device.type == "accel" and got.dtype == expected.dtype
        torch.testing.assert_close(got.cpu().double(), expected.double(), **tol)

    a, b, c = rand(96, 160, dtype=dtype), rand(160, 200, dtype=dtype), rand(96, 200, dtype=dtype)
    ref = (a.double() @ b.double()).to(dtype)
    for la in LAYOUTS:
        for lb in LAYOUTS:
            close(torch.mm(on_device(a, la), on_device(b, lb)), ref, dtype)
    expected = torch.addmm(c.double(), a.double(), b.double(), beta=0.5, alpha=2).to(dtype)
    close(torch.addmm(*dev(c, a, b), beta=0.5, alpha=2), expected, dtype)
    x, y = rand(5, 64, 96, dtype=dtype), rand(5, 96, 80, dtype=dtype)
    close(torch.bmm(*dev(x, y)), torch.bmm(x.double(), y.double()).to(dtype), dtype)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", DTYPES)
def test_bmm_and_baddbmm(dtype):
    a, b, c = rand(4, 3, 6, dtype=dtype), rand(4, 6, 5, dtype=dtype), rand(4, 3, 5, dtype=dtype)
    A, B, C = dev(a, b, c)
    check(torch.bmm(A, B), torch.bmm(a.double(), b.double()).to(dtype), dtype)
    At = torch.empty(4, 6, 3, dtype=dtype, device="accel").transpose(1, 2).copy_(a)
    check(torch.bmm(At, B), torch.bmm(a.double(), b.double()).to(dtype), dtype)
    expected = torch.baddbmm(c.double(), a.double(), b.double(), beta=0.5, alpha=2).to(dtype)
    check(torch.baddbmm(C, A, B, beta=0.5, alpha=2), expected, dtype)
    # self broadcast from (3, 5)
    check(
        torch.baddbmm(C[0], A, B),
        torch.baddbmm(c[0].double(), a.double(), b.double()).to(dtype),
        dtype,
    )
    C2 = C.clone()
    C2.baddbmm_(A, B, beta=0.5, alpha=2)
    check(C2, expected, dtype)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.bmm(A, B, out=out)
    check(out, torch.bmm(a.double(), b.double()).to(dtype), dtype)
    assert torch_accel.fallback_counts() == {}


def test_batch_broadcast_operand_and_transposed_out():
    a, b = torch.randn(1, 3, 4), torch.randn(5, 4, 2)
    A = a.to("accel").expand(5, 3, 4)  # batch stride 0
    torch.testing.assert_close(torch.bmm(A, b.to("accel")).cpu(), torch.bmm(a.expand(5, 3, 4), b))
    # an out= tensor in column-major layout is written in place, without a copy
    out = torch.empty(5, 2, 3, device="accel").transpose(1, 2)
    ptr = out.data_ptr()
    torch.bmm(A, b.to("accel"), out=out)
    assert out.data_ptr() == ptr and out.stride() == (6, 1, 3)
    torch.testing.assert_close(out.cpu(), torch.bmm(a.expand(5, 3, 4), b))
    # an out= tensor with no BLAS layout still gets the right values
    out = torch.zeros(5, 3, 4, device="accel")[:, :, ::2]
    torch.bmm(A, b.to("accel"), out=out)
    torch.testing.assert_close(out.cpu(), torch.bmm(a.expand(5, 3, 4), b))
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", DTYPES)
def test_addmm_forms(dtype):
    s, a, b = rand(6, dtype=dtype), rand(3, 4, dtype=dtype), rand(4, 6, dtype=dtype)
    S, A, B = dev(s, a, b)

    def ref(beta, alpha):
        return torch.addmm(s.double(), a.double(), b.double(), beta=beta, alpha=alpha).to(dtype)

    check(torch.addmm(S, A, B), ref(1, 1), dtype)
    check(
        torch.addmm(S, A, on_device(b, "transposed"), beta=-1.5, alpha=0.25), ref(-1.5, 0.25), dtype
    )
    out = torch.empty(3, 6, dtype=dtype, device="accel")
    torch.addmm(S, A, B, beta=2, alpha=3, out=out)
    check(out, ref(2, 3), dtype)
    full = torch.addmm(S, A, B)  # 3 x 6
    full.addmm_(A, B, beta=0.5)
    check(full, (ref(1, 1).double() * 0.5 + (a.double() @ b.double())).to(dtype), dtype)
    assert torch_accel.fallback_counts() == {}


def test_beta_zero_ignores_nan_self():
    s = torch.full((3, 2), float("nan"))
    a, b = torch.randn(3, 4), torch.randn(4, 2)
    got = torch.addmm(s.to("accel"), a.to("accel"), b.to("accel"), beta=0)
    torch.testing.assert_close(got.cpu(), a @ b)
    assert not got.cpu().isnan().any()


def test_empty_and_k_zero():
    a, b = torch.randn(3, 0), torch.randn(0, 4)
    torch.testing.assert_close(torch.mm(*dev(a, b)).cpu(), torch.zeros(3, 4))
    s = torch.randn(3, 4)
    torch.testing.assert_close(torch.addmm(*dev(s, a, b), beta=2).cpu(), 2 * s)
    assert torch.mm(*dev(torch.randn(0, 3), torch.randn(3, 4))).shape == (0, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_addmv_mv_dot(dtype):
    m, v, y = rand(5, 7, dtype=dtype), rand(7, dtype=dtype), rand(5, dtype=dtype)
    M, V, Y = dev(m, v, y)
    check(torch.mv(M, V), (m.double() @ v.double()).to(dtype), dtype)
    check(torch.mv(on_device(m, "transposed"), V), (m.double() @ v.double()).to(dtype), dtype)
    v2 = rand(14, dtype=dtype)
    check(torch.mv(M, v2.to("accel")[::2]), (m.double() @ v2[::2].double()).to(dtype), dtype)
    check(
        torch.addmv(Y, M, V, beta=0.5, alpha=2),
        torch.addmv(y.double(), m.double(), v.double(), beta=0.5, alpha=2).to(dtype),
        dtype,
    )
    Y2 = Y.clone()
    Y2.addmv_(M, V)
    check(Y2, torch.addmv(y.double(), m.double(), v.double()).to(dtype), dtype)
    strided_out = torch.zeros(10, dtype=dtype, device="accel")[::2]
    torch.addmv(Y, M, V, out=strided_out)
    check(strided_out, torch.addmv(y.double(), m.double(), v.double()).to(dtype), dtype)
    check(torch.dot(V, V), (v.double() @ v.double()).to(dtype), dtype)
    check(torch.dot(v2.to("accel")[::2], V), (v2[::2].double() @ v.double()).to(dtype), dtype)
    check(torch.vdot(V, V), (v.double() @ v.double()).to(dtype), dtype)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", DTYPES)
def test_addr_in_cpus_order(dtype):
    # beta and alpha are taken in the dtype (0.6 is 0.6015625 in bfloat16) and (alpha * vec1)
    # * vec2 is rounded at each step, as CPU's and CUDA's kernels do: half and bfloat16 match
    # CPU exactly. beta = 0 ignores self, nan included.
    self, v1, v2 = torch.randn(5, 10).to(dtype), torch.randn(5).to(dtype), torch.randn(10).to(dtype)
    exact = dict(rtol=0, atol=0) if dtype in (torch.bfloat16, torch.float16) else TOL[dtype]
    a, b1, b2 = dev(self, v1, v2)
    close = torch.testing.assert_close
    got = torch.addr(a, b1, b2, beta=0.6, alpha=0.2)
    close(got.cpu(), torch.addr(self, v1, v2, beta=0.6, alpha=0.2), **exact)
    close(torch.addr(a[0], b1, b2).cpu(), torch.addr(self[0], v1, v2), **exact)  # self broadcast
    nan_self = torch.full((5, 10), float("nan"), dtype=dtype)
    got = torch.addr(nan_self.to("accel"), b1, b2, beta=0, alpha=3)
    close(got.cpu(), torch.addr(nan_self, v1, v2, beta=0, alpha=3), **exact)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.addr(a, b1, b2, alpha=-1.3, out=out)
    close(out.cpu(), torch.addr(self, v1, v2, alpha=-1.3), **exact)
    a.addr_(b1, b2, beta=2.5)
    close(a.cpu(), self.clone().addr_(v1, v2, beta=2.5), **exact)
    ints = torch.arange(20).view(4, 5), torch.arange(4), torch.arange(5)
    close(torch.addr(*dev(*ints), beta=2).cpu(), torch.addr(*ints, beta=2))
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize(
    "shapes",
    [
        ((3,), (3,)),
        ((4, 3), (3,)),
        ((3,), (3, 5)),
        ((2, 4, 3), (3, 5)),
        ((4, 3), (2, 3, 5)),
        ((2, 1, 4, 3), (5, 3, 6)),
        ((3, 2, 4), (3, 4, 2)),
        ((6, 3), (2, 3, 5)),
    ],
)
def test_matmul_broadcasting(shapes):
    a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1])
    got = torch.matmul(*dev(a, b))
    torch.testing.assert_close(got.cpu(), torch.matmul(a, b), atol=1e-5, rtol=1e-5)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 8), (2, 5, 8), (8,)])
def test_linear(dtype, bias, shape):
    x, w = rand(*shape, dtype=dtype), rand(6, 8, dtype=dtype)
    b = rand(6, dtype=dtype) if bias else None
    expected = F.linear(x.double(), w.double(), None if b is None else b.double()).to(dtype)
    got = F.linear(x.to("accel"), w.to("accel"), None if b is None else b.to("accel"))
    check(got, expected, dtype)
    assert torch_accel.fallback_counts() == {}


def test_linear_backward():
    x, w, b = (
        torch.randn(4, 3, 8, requires_grad=True),
        torch.randn(6, 8, requires_grad=True),
        torch.randn(6, requires_grad=True),
    )
    xa, wa, ba = [t.detach().to("accel").requires_grad_() for t in (x, w, b)]
    F.linear(x, w, b).square().sum().backward()
    # square/sum may fall back; the matrix products of the backward are what is checked
    F.linear(xa, wa, ba).square().sum().backward()
    for cpu, acc in [(x, xa), (w, wa), (b, ba)]:
        torch.testing.assert_close(acc.grad.cpu(), cpu.grad, atol=1e-4, rtol=1e-4)
    counts = torch_accel.fallback_counts()
    assert not any(k in counts for k in ("aten::mm", "aten::bmm", "aten::addmm", "aten::mv"))


def test_shape_and_dtype_errors_match_cpu():
    def err(fn, *args, **kw):
        with pytest.raises(RuntimeError) as e:
            fn(*args, **kw)
        return str(e.value)

    cases = [
        (torch.mm, (torch.randn(2, 3), torch.randn(4, 5))),
        (torch.mm, (torch.randn(2, 3), torch.randn(3, 5, dtype=torch.float64))),
        (torch.mm, (torch.randn(2, 3, 1), torch.randn(3, 5))),
        (torch.bmm, (torch.randn(2, 2, 3), torch.randn(3, 3, 5))),
        (torch.bmm, (torch.randn(2, 2, 3), torch.randn(2, 4, 5))),
        (torch.addmm, (torch.randn(7), torch.randn(2, 3), torch.randn(3, 5))),
        (torch.addmv, (torch.randn(2), torch.randn(2, 3), torch.randn(4))),
        (torch.dot, (torch.randn(3), torch.randn(4))),
        (torch.dot, (torch.randn(3), torch.randn(3, dtype=torch.float64))),
        (torch.matmul, (torch.randn(2, 3), torch.randn(4, 5))),
        (F.linear, (torch.randn(2, 3), torch.randn(5, 4))),
    ]
    for fn, args in cases:
        assert err(fn, *dev(*args)) == err(fn, *args), fn
    with pytest.raises(RuntimeError) as e:
        torch.mm(
            *dev(torch.randn(2, 3), torch.randn(3, 4)),
            out=torch.empty(2, 4, dtype=torch.float64, device="accel"),
        )
    assert "dtype" in str(e.value)


def test_integer_dtype_goes_to_counted_fallback():
    a = torch.randint(-5, 5, (3, 4))
    b = torch.randint(-5, 5, (4, 2))
    torch.testing.assert_close(torch.mm(*dev(a, b)).cpu(), a @ b)
    assert torch_accel.fallback_counts().get("aten::mm", 0) >= 1


def test_async_on_stream_ordering():
    # a chain of dependent products on a side stream, read back after synchronising
    a = torch.randn(64, 64) / 8
    s = torch.accel.Stream()
    with torch.accel.stream(s):
        x = a.to("accel")
        for _ in range(5):
            x = x @ x.t()
    s.synchronize()
    ref = a
    for _ in range(5):
        ref = ref @ ref.t()
    torch.testing.assert_close(x.cpu(), ref, atol=1e-3, rtol=1e-4)


# --- complex products: cuBLAS's complex GEMM on CUDA, the CPU BLAS's on host -----------------

CTOL = {
    torch.complex64: dict(atol=1e-5, rtol=1e-5),
    torch.complex128: dict(atol=1e-12, rtol=1e-12),
}


def crand(*shape, dtype=torch.complex64):
    return torch.randn(*shape, dtype=dtype)


def ccheck(got, expected):
    assert got.device.type == "accel"
    assert got.dtype == expected.dtype
    assert not got.is_conj()
    torch.testing.assert_close(got.cpu(), expected.resolve_conj(), **CTOL[expected.dtype])


# The same view of an operand on CPU and on the device: lazily conjugated, transposed (a BLAS
# operand with a transpose flag), conjugate-transposed (.mH, BLAS's conjugate transpose).
VIEWS = {
    "plain": lambda x: x,
    "conj": lambda x: x.conj(),
    "mT": lambda x: x.mT.contiguous().mT,
    "mH": lambda x: x.mT.contiguous().mT.conj(),
    "strided": lambda x: torch.repeat_interleave(x, 2, dim=-1)[..., ::2],
}


@pytest.mark.parametrize("dtype", list(CTOL))
def test_complex_mm_views(dtype):
    a, b = crand(7, 5, dtype=dtype), crand(5, 9, dtype=dtype)
    for va, fa in VIEWS.items():
        for fb in VIEWS.values():
            A, B = fa(a.to("accel")), fb(b.to("accel"))
            assert A.is_conj() == (va in ("conj", "mH")), va
            ccheck(torch.mm(A, B), torch.mm(fa(a), fb(b)))
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", list(CTOL))
def test_complex_bmm_baddbmm_addmm_complex_scalars(dtype):
    a, b, s = crand(3, 4, 5, dtype=dtype), crand(3, 5, 6, dtype=dtype), crand(3, 4, 6, dtype=dtype)
    A, B, S = dev(a, b, s)
    ccheck(torch.bmm(A, B), torch.bmm(a, b))
    ccheck(torch.bmm(A.conj(), B.mT.contiguous().mT), torch.bmm(a.conj(), b))
    ccheck(torch.bmm(A, B[:1].expand(3, 5, 6)), torch.bmm(a, b[:1].expand(3, 5, 6)))
    beta, alpha = 0.5 - 2j, 1.5 + 0.25j
    ccheck(
        torch.baddbmm(S, A, B, beta=beta, alpha=alpha),
        torch.baddbmm(s, a, b, beta=beta, alpha=alpha),
    )
    S2 = S.clone()
    S2.baddbmm_(A.conj(), B, alpha=alpha)
    ccheck(S2, torch.baddbmm(s, a.conj(), b, alpha=alpha))
    m1, m2, bias = a[0], b[0], crand(6, dtype=dtype)
    out = torch.empty(4, 6, dtype=dtype, device="accel")
    torch.addmm(bias.to("accel").conj(), *dev(m1, m2), beta=beta, alpha=alpha, out=out)
    ccheck(out, torch.addmm(bias.conj(), m1, m2, beta=beta, alpha=alpha))
    full = torch.addmm(*dev(s[0], m1, m2))
    full.addmm_(m1.to("accel").mH.mH, m2.to("accel").conj(), beta=beta)
    ccheck(full, torch.addmm(s[0], m1, m2).addmm_(m1, m2.conj(), beta=beta))
    # beta == 0: self is not read, NaN or not
    nan = torch.full((4, 6), complex(float("nan"), 0), dtype=dtype)
    ccheck(torch.addmm(*dev(nan, m1, m2), beta=0), m1 @ m2)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", list(CTOL))
def test_complex_addmv_mv_dot_vdot(dtype):
    m, v, y = crand(5, 7, dtype=dtype), crand(14, dtype=dtype), crand(5, dtype=dtype)
    M, V, Y = dev(m, v, y)
    for f in VIEWS.values():
        ccheck(torch.mv(f(M), V[:7]), torch.mv(f(m), v[:7]))
    ccheck(torch.mv(M, V[::2].conj()), torch.mv(m, v[::2].conj()))
    ccheck(
        torch.addmv(Y, M.conj(), V[::2], beta=2j, alpha=-1 + 1j),
        torch.addmv(y, m.conj(), v[::2], beta=2j, alpha=-1 + 1j),
    )
    Y2 = Y.clone()
    Y2.addmv_(M, V[:7], alpha=0.5j)
    ccheck(Y2, torch.addmv(y, m, v[:7], alpha=0.5j))
    x, z = V[:7], V[7:]
    for fx in (lambda t: t, lambda t: t.conj()):
        for fz in (lambda t: t, lambda t: t.conj()):
            ccheck(torch.dot(fx(x), fz(z)), torch.dot(fx(v[:7]), fz(v[7:])))
            ccheck(torch.vdot(fx(x), fz(z)), torch.vdot(fx(v[:7]), fz(v[7:])))
    ccheck(torch.vdot(V[::2], V[1::2]), torch.vdot(v[::2], v[1::2]))
    ccheck(torch.dot(V[::2], V[1::2]), torch.dot(v[::2], v[1::2]))
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", list(CTOL))
def test_complex_composites(dtype):
    a, b, w = crand(2, 3, 4, dtype=dtype), crand(4, 5, dtype=dtype), crand(6, 4, dtype=dtype)
    A, B, W = dev(a, b, w)
    ccheck(torch.matmul(A, B), torch.matmul(a, b))
    ccheck(torch.matmul(A.conj(), B.mH.mH), torch.matmul(a.conj(), b))
    ccheck(F.linear(A, W), F.linear(a, w))
    ccheck(torch.einsum("bij,jk->bik", A, B), torch.einsum("bij,jk->bik", a, b))
    ccheck(torch.tensordot(A, B, dims=([2], [0])), torch.tensordot(a, b, dims=([2], [0])))
    ccheck(A[0] @ B.conj(), a[0] @ b.conj())
    assert torch_accel.fallback_counts() == {}


def test_complex_errors_match_cpu():
    def err(fn, *args):
        with pytest.raises(RuntimeError) as e:
            fn(*args)
        return str(e.value)

    c64, c128 = torch.complex64, torch.complex128
    cases = [
        (torch.mm, (crand(2, 3), crand(4, 5))),
        (torch.vdot, (crand(3), crand(4))),
        (torch.vdot, (crand(3), crand(3, dtype=c128))),
        (torch.dot, (crand(3, dtype=c64), crand(3, dtype=c128))),
    ]
    for fn, args in cases:
        assert err(fn, *dev(*args)) == err(fn, *args), fn


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.complex64])
def test_addbmm_forms_match_cpu(dtype):
    g = torch.Generator().manual_seed(5)
    b1 = torch.randn(4, 3, 5, generator=g).to(dtype)
    b2 = torch.randn(4, 5, 2, generator=g).to(dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else {}
    for self_, beta, alpha in ((torch.randn(3, 2, generator=g), 0.5, 2.0), (torch.randn(2), 1, 1)):
        s = self_.to(dtype)
        want = torch.addbmm(s, b1, b2, beta=beta, alpha=alpha)
        got = torch.addbmm(s.to("accel"), b1.to("accel"), b2.to("accel"), beta=beta, alpha=alpha)
        torch.testing.assert_close(got.cpu(), want, **tol)
    # transposed operands, in place, and out=
    s = torch.randn(3, 2, generator=g).to(dtype)
    t1, t2 = b1.transpose(1, 2).contiguous().transpose(1, 2), b2.transpose(0, 2)
    t2 = torch.randn(4, 2, 5, generator=g).to(dtype).transpose(1, 2)
    want = s.clone().addbmm_(t1, t2)
    got = s.to("accel").addbmm_(t1.to("accel"), t2.to("accel"))
    torch.testing.assert_close(got.cpu(), want, **tol)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.addbmm(s.to("accel"), b1.to("accel"), b2.to("accel"), out=out)
    torch.testing.assert_close(out.cpu(), torch.addbmm(s, b1, b2), **tol)
    empty = torch.addbmm(s.to("accel"), b1[:0].to("accel"), b2[:0].to("accel"), beta=2)
    torch.testing.assert_close(empty.cpu(), 2 * s, **tol)
    assert torch_accel.fallback_counts() == {}


def test_addbmm_shape_errors_match_cpu():
    s = torch.randn(3, 4)
    cases = [
        (torch.randn(3, 4), torch.randn(2, 4, 4)),
        (torch.randn(2, 3, 4), torch.randn(3, 4, 4)),
        (torch.randn(2, 3, 5), torch.randn(2, 4, 4)),
    ]
    for b1, b2 in cases:
        with pytest.raises(RuntimeError) as cpu:
            torch.addbmm(s, b1, b2)
        with pytest.raises(RuntimeError) as acc:
            torch.addbmm(s.to("accel"), b1.to("accel"), b2.to("accel"))
        assert str(acc.value).splitlines()[0] == str(cpu.value).splitlines()[0]


def test_mixed_dtype_products_raise_cpus_error_without_fallback():
    # A product of mixed dtypes is an error on CPU and CUDA (a bfloat16 gradient meeting a
    # float32 activation in a custom backward, say). It raises CPU's RuntimeError natively,
    # so the fallback's "error" mode does not report it as a missing kernel.
    h = torch.bfloat16
    m, b, v = torch.randn(3, 3), torch.randn(2, 3, 3), torch.randn(3)
    cases = [
        (torch.mm, (m, m.to(h))),
        (torch.mm, (m.to(h), m)),
        (torch.bmm, (b, b.to(h))),
        (torch.matmul, (b.to(h), b)),
        (torch.addmm, (m, m, m.to(h))),
        (torch.addmm, (m, m.to(h), m)),
        (torch.addmm, (m.to(h), m, m)),
        (torch.baddbmm, (b, b, b.to(h))),
        (torch.baddbmm, (b, b.to(h), b.to(h))),
        (torch.addbmm, (m, b.to(h), b)),
        (torch.addmv, (v, m.to(h), v)),
        (torch.mv, (m, v.to(h))),
        (torch.dot, (v, v.to(h))),
        (torch.vdot, (v.to(h), v)),
        (torch.Tensor.addmm_, (m, m.to(h), m.to(h))),
    ]
    saved = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("error")
    try:
        for fn, args in cases:
            with pytest.raises(RuntimeError) as cpu:
                fn(*args)
            with pytest.raises(RuntimeError) as acc:
                fn(*dev(*args))
            assert type(acc.value) is RuntimeError, fn
            assert str(acc.value).splitlines()[0] == str(cpu.value).splitlines()[0], fn
    finally:
        torch_accel.set_fallback_mode(saved)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize(
    "dtype", [torch.complex64, torch.complex128, torch.bfloat16, torch.float16]
)
@pytest.mark.parametrize("m,k,n", [(37, 29, 13), (2, 4, 4)])
def test_products_round_as_cpus_mm(dtype, m, k, n):
    # One product runs as CPU's mm runs it (small ones too, which baddbmm summed in a loop of
    # its own), and a conjugated transposed operand goes to the BLAS as 'C', as on CPU: the
    # same bits.
    torch.manual_seed(0)
    a, b = torch.randn(k, m, dtype=dtype), torch.randn(k, n, dtype=dtype)
    c, d = torch.randn(m, n, dtype=dtype), torch.randn(n, k, dtype=dtype)
    cases = {
        "aH @ b": lambda a, b, c, d: a.mH @ b,
        "conj(a).T @ b": lambda a, b, c, d: a.conj().mT.contiguous() @ b,
        "aT @ b": lambda a, b, c, d: a.mT @ b,
        "aT @ dH": lambda a, b, c, d: a.mT @ d.mH,
        "bmm aH": lambda a, b, c, d: torch.bmm(a.mH.expand(2, -1, -1), b.expand(2, -1, -1)),
        "addmm": lambda a, b, c, d: torch.addmm(c, a.mH, b, beta=0.5, alpha=2),
    }
    for name, f in cases.items():
        want = f(a, b, c, d)
        got = f(*(t.to("accel") for t in (a, b, c, d)))
        assert torch.equal(got.cpu(), want), name
    assert torch_accel.fallback_counts() == {}
