"""Native complex kernels against CPU on the same inputs: copies and casts, fill, add/sub/mul/div,
eq/ne and the logical ops, the complex unary ops, where, sum/mean, torch.testing.assert_close
and isclose. Every test that claims a native path runs under TORCH_ACCEL_FALLBACK=error
(`strict`); ops the kernels do not cover must reach the counted fallback, never be refused."""

import math

import pytest
import torch

import torch_accel

COMPLEX = [torch.complex64, torch.complex128]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]
# Exact: add, sub, neg, conj, copies, comparisons (the same IEEE operations as CPU). mul is
# c10::complex's formula (mul_formula) within an ulp: the host's AVX2 lanes and CPU's
# vectorised mul may fuse a product into an fma.
EXACT = dict(rtol=0, atol=0)
TOL = {
    torch.complex64: dict(rtol=1e-5, atol=1e-5),
    torch.complex128: dict(rtol=1e-12, atol=1e-12),
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
}
INF, NAN = math.inf, math.nan


@pytest.fixture
def strict():
    """Any fallback raises; the counts stay empty."""
    torch_accel.set_fallback_mode("error")
    yield
    torch_accel.set_fallback_mode("warn")
    assert torch_accel.fallback_counts() == {}


def csample(dtype, shape=(6, 5), seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, dtype=dtype, generator=g) * 3).to(dtype)


def special(dtype):
    """Components that are inf, nan, signed zeros and ordinary values, in every pairing."""
    parts = [0.0, -0.0, 1.5, -2.25, INF, -INF, NAN]
    return torch.tensor([complex(a, b) for a in parts for b in parts], dtype=dtype)


def same(got, expected, exact=False):
    assert got.device.type == "accel"
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    tol = EXACT if exact else TOL.get(expected.dtype, EXACT)
    # Compare on CPU, so that the check itself does not depend on the kernels under test.
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True, **tol)


def mul_formula(a, b):
    """c10::complex's product, (ac - bd) + (ad + bc)i, each operation rounded on its own."""
    a, b = torch.broadcast_tensors(a, b)
    re = a.real * b.real - a.imag * b.imag
    im = a.real * b.imag + a.imag * b.real
    return torch.complex(re, im)


def layouts(x):
    """x contiguous, transposed and sliced (non-contiguous), each on accel with its CPU twin."""
    xa = x.to("accel")
    return [(x, xa), (x.t(), xa.t()), (x[::2, 1:], xa[::2, 1:])]


# --- copies, casts, fill ---------------------------------------------------------------------

CAST_TARGETS = [
    torch.complex64,
    torch.complex128,
    torch.complex32,
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int8,
    torch.uint8,
    torch.bool,
]


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("src", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("dst", CAST_TARGETS)
def test_cast_from_complex(strict, src, dst):
    x = csample(src)
    x[0, 0] = complex(0, 1)  # nonzero imaginary part only: bool True
    x[0, 1] = 0
    for cpu, acc in layouts(x):
        same(acc.to(dst), cpu.to(dst), exact=True)


@pytest.mark.parametrize(
    "src",
    [
        torch.float32,
        torch.float64,
        torch.float16,
        torch.int64,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    ],
)
@pytest.mark.parametrize("dst", [torch.complex64, torch.complex128, torch.complex32])
def test_cast_to_complex(strict, src, dst):
    x = (torch.randn(6, 5) * 4).to(src)
    for cpu, acc in layouts(x):
        same(acc.to(dst), cpu.to(dst), exact=True)
        out = torch.empty(cpu.shape, dtype=dst, device="accel")
        out.copy_(acc)
        same(out, cpu.to(dst), exact=True)


def test_copy_between_devices_and_views(strict):
    x = csample(torch.complex64)
    xa = x.to("accel")
    same(xa, x, exact=True)
    same(xa.t().contiguous(), x.t().contiguous(), exact=True)
    same(xa.clone(), x, exact=True)
    # real/imag are views of the same storage
    same(xa.real, x.real, exact=True)
    same(xa.imag, x.imag, exact=True)
    xa.imag.fill_(2)
    x.imag.fill_(2)
    same(xa, x, exact=True)


@pytest.mark.parametrize("dtype", COMPLEX + [torch.complex32])
def test_fill_and_zero(strict, dtype):
    a = torch.empty(4, 3, dtype=dtype, device="accel")
    a.fill_(complex(1.5, -2))
    same(a, torch.full((4, 3), complex(1.5, -2), dtype=dtype), exact=True)
    a[:, 1].zero_()
    expected = torch.full((4, 3), complex(1.5, -2), dtype=dtype)
    expected[:, 1] = 0
    same(a, expected, exact=True)
    a.fill_(3)  # a real value: imaginary part 0
    same(a, torch.full((4, 3), 3, dtype=dtype), exact=True)
    same(torch.full((2, 2), 1j, device="accel", dtype=dtype), torch.full((2, 2), 1j, dtype=dtype))
    same(torch.zeros(3, dtype=dtype, device="accel"), torch.zeros(3, dtype=dtype))
    same(torch.ones(3, dtype=dtype, device="accel"), torch.ones(3, dtype=dtype))


def test_conj_views_resolve_on_device(strict):
    x = csample(torch.complex64)
    xa = x.to("accel")
    same(xa.conj().resolve_conj(), x.conj().resolve_conj(), exact=True)
    same(xa.conj().clone(), x.conj().clone(), exact=True)
    same(xa.conj() + xa, x.conj() + x, exact=True)
    same(torch.conj_physical(xa), torch.conj_physical(x), exact=True)
    same(xa.conj().imag.clone(), x.conj().imag.clone(), exact=True)
    y = xa.clone()
    y.conj_physical_()
    same(y, x.conj_physical(), exact=True)


# --- binary arithmetic -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary(strict, dtype, op):
    f = getattr(torch, op)
    exact = op in ("add", "sub")
    a, b = csample(dtype, seed=1), csample(dtype, seed=2)
    if op == "mul":
        same(a.to("accel") * b.to("accel"), mul_formula(a, b))
        same(a.to("accel") * b[0].to("accel"), mul_formula(a, b[0]))
    for (ca, aa), (cb, ab) in zip(layouts(a), layouts(b)):
        same(f(aa, ab), f(ca, cb), exact)
    # broadcast, a Python complex, a real and an integer scalar
    same(f(a.to("accel"), b[0].to("accel")), f(a, b[0]), exact)
    for s in (complex(0.5, -1.25), 2.5, 3):
        same(f(a.to("accel"), s), f(a, s), exact)
    if op in ("add", "sub"):
        # alpha * b is a complex product: within an ulp of CPU's (see EXACT)
        same(f(a.to("accel"), b.to("accel"), alpha=2), f(a, b, alpha=2))
        same(f(a.to("accel"), b.to("accel"), alpha=1 - 2j), f(a, b, alpha=1 - 2j))
    # in-place and out=
    aa = a.to("accel")
    getattr(aa, op + "_")(b.to("accel"))
    same(aa, f(a, b), exact)
    out = torch.empty(0, dtype=dtype, device="accel")
    f(a.to("accel"), b.to("accel"), out=out)
    same(out, f(a, b), exact)


@pytest.mark.parametrize(
    "ta,tb",
    [
        (torch.complex64, torch.float32),
        (torch.float64, torch.complex64),
        (torch.complex64, torch.complex128),
        (torch.complex64, torch.int64),
        (torch.uint8, torch.complex128),
        (torch.complex64, torch.bool),
        (torch.complex32, torch.complex64),
    ],
)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_type_promotion(strict, ta, tb, op):
    f = getattr(torch, op)
    a = (torch.randn(5, 4, dtype=torch.complex128) * 3).to(ta)
    b = (torch.randn(5, 4, dtype=torch.complex128) * 3 + 0.5).to(tb)
    if op == "sub" and torch.bool in (ta, tb):
        b = b.to(torch.int64) if tb == torch.bool else b
        a = a.to(torch.int64) if ta == torch.bool else a
    same(f(a.to("accel"), b.to("accel")), f(a, b), exact=op in ("add", "sub"))


def test_real_tensor_with_complex_scalar(strict):
    x = torch.randn(7)
    for s in (1j, complex(2, -1)):
        same(x.to("accel") * s, x * s, exact=True)
        same(x.to("accel") + s, x + s, exact=True)
        same(s - x.to("accel"), s - x, exact=True)
    same(torch.arange(5, device="accel") * 1j, torch.arange(5) * 1j, exact=True)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_special_values_arithmetic(strict, dtype):
    x = special(dtype)
    y = x.flip(0)
    for op in ("add", "sub"):
        f = getattr(torch, op)
        same(f(x.to("accel"), y.to("accel")), f(x, y), exact=True)
    same(x.to("accel") * y.to("accel"), mul_formula(x, y), exact=True)
    # division: where CPU's vectorised and scalar paths agree (finite divisors)
    finite = torch.isfinite(y) & (y != 0)
    q = x.to("accel") / y.to("accel")
    torch.testing.assert_close(q.cpu()[finite], (x / y)[finite], equal_nan=True, **TOL[dtype])


def test_complex32_arithmetic(strict):
    a = csample(torch.complex64).to(torch.complex32)
    b = csample(torch.complex64, seed=3).to(torch.complex32)
    for op in ("add", "sub", "mul"):
        f = getattr(torch, op)
        got = f(a.to("accel"), b.to("accel"))
        assert got.dtype == torch.complex32
        torch.testing.assert_close(
            got.cpu().to(torch.complex64), f(a, b).to(torch.complex64), rtol=2e-3, atol=2e-3
        )
    same(-a.to("accel"), -a, exact=True)
    same(a.to("accel") == b.to("accel"), a == b, exact=True)


# --- comparisons -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_compare(strict, dtype):
    x = special(dtype)
    y = x.clone()
    y[::3] = 1 + 1j
    xa, ya = x.to("accel"), y.to("accel")
    for op in ("eq", "ne", "logical_and", "logical_or", "logical_xor"):
        f = getattr(torch, op)
        same(f(xa, ya), f(x, y), exact=True)
    same(xa == (1 + 1j), x == (1 + 1j), exact=True)
    same(xa != 0, x != 0, exact=True)
    same(xa == xa.to(torch.complex128), x == x.to(torch.complex128), exact=True)
    same(xa.real.contiguous() == xa, x.real.contiguous() == x, exact=True)
    # in-place into a complex self, and out= of another dtype
    z = xa.clone()
    z.eq_(ya)
    same(z, x.clone().eq_(y), exact=True)
    out = torch.empty(x.shape, dtype=torch.float32, device="accel")
    torch.eq(xa, ya, out=out)
    same(out, torch.eq(x, y, out=torch.empty(x.shape, dtype=torch.float32)), exact=True)


def test_ordering_falls_back_to_cpus_error():
    """Complex numbers have no order: the call reaches the fallback, which raises CPU's error."""
    x = torch.ones(3, dtype=torch.complex64)
    for f in (torch.lt, torch.ge, torch.maximum):
        with pytest.raises(Exception) as cpu:
            f(x, x)
        with pytest.raises(type(cpu.value), match=str(cpu.value)):
            f(x.to("accel"), x.to("accel"))


# --- unary -----------------------------------------------------------------------------------

UNARY = [
    "neg",
    "conj_physical",
    "sgn",
    "reciprocal",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "sigmoid",
    "abs",
    "angle",
]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", UNARY)
def test_unary(strict, dtype, op):
    f = getattr(torch, op)
    exact = op in ("neg", "conj_physical")
    x = csample(dtype)
    for cpu, acc in layouts(x):
        same(f(acc), f(cpu), exact)
    out = torch.empty(0, dtype=f(x).dtype, device="accel")
    f(x.to("accel"), out=out)
    same(out, f(x), exact)
    if op not in ("abs", "angle", "conj_physical"):
        y = x.to("accel")
        getattr(y, op + "_")()
        same(y, f(x), exact)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_unary_special_values(strict, dtype):
    x = special(dtype)
    xa = x.to("accel")
    for op in ("neg", "conj_physical", "isnan", "isinf", "isfinite", "abs"):
        f = getattr(torch, op)
        same(f(xa), f(x), exact=op != "abs")
    # zero: sgn and sqrt of 0 are 0, exp of a real value stays real
    z = torch.tensor(
        [0j, complex(-0.0, 0.0), 4 + 0j, complex(-INF, 0.0), complex(INF, 0.0)], dtype=dtype
    )
    za = z.to("accel")
    same(za.sgn()[:2], z.sgn()[:2], exact=True)
    same(za.sqrt()[:3], z.sqrt()[:3])
    same(za.exp(), z.exp())


@pytest.mark.parametrize("dtype", COMPLEX)
def test_silu_and_rsub(strict, dtype):
    x, y = csample(dtype), csample(dtype, seed=7)
    same(torch.nn.functional.silu(x.to("accel")), torch.nn.functional.silu(x))
    same(torch.rsub(x.to("accel"), y.to("accel")), torch.rsub(x, y), exact=True)
    same(torch.rsub(x.to("accel"), y.to("accel"), alpha=2), torch.rsub(x, y, alpha=2))
    same(1j - x.to("accel"), 1j - x, exact=True)
    same(torch.rsub(x.to("accel"), 2.5), torch.rsub(x, 2.5), exact=True)


def test_abs_in_place_refused_as_on_cpu(strict):
    x = torch.ones(3, dtype=torch.complex64, device="accel")
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
        x.abs_()


def test_pow_and_square(strict):
    x = csample(torch.complex64)
    xa = x.to("accel")
    same(torch.square(xa), mul_formula(x, x))
    same(xa**2, x**2)
    y = xa.clone()
    y.pow_(2)
    same(y, x**2)


def test_ldexp_noncontiguous_matches_contiguous():
    # PyTorch's test_noncontiguous_samples: values and gradients of non-contiguous inputs equal
    # the contiguous ones (to complex64's default tolerance), and CPU's. ldexp takes a pow
    # that is not native for complex yet, hence no strict mode.
    x, e = csample(torch.complex64, (5, 10, 5)) / 3, csample(torch.complex64, (10, 5), seed=3) / 3
    g = csample(torch.complex64, (5, 10, 5), seed=5)

    def run(x, e, g):
        x, e = x.detach().requires_grad_(), e.detach().requires_grad_()
        r = torch.ldexp(x, e)
        return (r, *torch.autograd.grad(r, (x, e), g))

    def strided(t):  # t's values in every other element of a larger buffer
        return torch.repeat_interleave(t, 2, dim=-1)[..., ::2]

    want = run(x, e, g)
    dense = run(x.to("accel"), e.to("accel"), g.to("accel"))
    sparse = run(*(strided(t.to("accel")) for t in (x, e, g)))
    for w, d, s in zip(want, dense, sparse):
        torch.testing.assert_close(s.cpu(), d.cpu())
        torch.testing.assert_close(d.cpu(), w, rtol=1e-5, atol=1e-4)


# --- where, reductions -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_where(strict, dtype):
    a, b = csample(dtype, seed=4), csample(dtype, seed=5)
    cond = a.real > 0
    same(torch.where(cond.to("accel"), a.to("accel"), b.to("accel")), torch.where(cond, a, b), True)
    same(torch.where(cond.to("accel"), a.to("accel"), 0j), torch.where(cond, a, 0j), True)
    same(
        torch.where(cond.to("accel"), a.to("accel"), b.real.to("accel")),
        torch.where(cond, a, b.real),
        True,
    )


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sum_mean(strict, dtype):
    x = csample(dtype, shape=(7, 6, 5))
    xa = x.to("accel")
    same(xa.sum(), x.sum())
    same(xa.mean(), x.mean())
    for dim in (0, 1, 2, (0, 2)):
        same(xa.sum(dim), x.sum(dim))
        same(xa.mean(dim, keepdim=True), x.mean(dim, keepdim=True))
    same(xa.transpose(0, 2).sum(1), x.transpose(0, 2).sum(1))
    same(xa[:, ::2].sum(0), x[:, ::2].sum(0))
    if dtype == torch.complex64:
        same(xa.sum(0, dtype=torch.complex128), x.sum(0, dtype=torch.complex128))
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.sum(xa, 1, out=out)
    same(out, x.sum(1))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_vector_norm(strict, dtype):
    # The norm of the magnitudes, real-valued, over dims, in a wider dtype, out=.
    x = csample(dtype, shape=(5, 4, 3))
    xa = x.to("accel")
    for ord in (2, 1, 3.5, float("inf"), 0):
        same(torch.linalg.vector_norm(xa, ord), torch.linalg.vector_norm(x, ord))
        same(
            torch.linalg.vector_norm(xa.transpose(0, 2), ord, dim=(0, 1), keepdim=True),
            torch.linalg.vector_norm(x.transpose(0, 2), ord, dim=(0, 1), keepdim=True),
        )
    same(xa.norm(dim=1), x.norm(dim=1))
    same(torch.norm(xa, 3, dim=(0, 2)), torch.norm(x, 3, dim=(0, 2)))
    if dtype == torch.complex64:
        same(
            torch.linalg.vector_norm(xa, dim=0, dtype=torch.complex128),
            torch.linalg.vector_norm(x, dim=0, dtype=torch.complex128),
        )
    out = torch.empty(0, dtype=x.real.dtype, device="accel")
    torch.linalg.vector_norm(xa, 2, dim=-1, out=out)
    same(out, torch.linalg.vector_norm(x, 2, dim=-1))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_copies_masked_fill_and_parts(strict, dtype):
    # cat, flip, roll, masked_fill_ (a real or complex value), complex() and polar() into out=.
    x, y = csample(dtype, seed=6), csample(dtype, seed=7)
    xa, ya = x.to("accel"), y.to("accel")
    same(torch.cat([xa, ya.t().t()], 0), torch.cat([x, y], 0), True)
    same(torch.cat([xa, ya.real], 1), torch.cat([x, y.real], 1), True)
    same(torch.flip(xa[:, ::2], (0, 1)), torch.flip(x[:, ::2], (0, 1)), True)
    same(torch.roll(xa, 2, 1), torch.roll(x, 2, 1), True)
    same(torch.roll(xa, (1, -3), (0, 1)), torch.roll(x, (1, -3), (0, 1)), True)
    mask = x.real > 0
    for value in (2.5, 1 - 3j):
        same(
            xa.clone().masked_fill_(mask.to("accel"), value),
            x.clone().masked_fill_(mask, value),
            True,
        )
    got = xa.t().clone().t()  # a transposed self
    got.masked_fill_(mask[0].to("accel"), -1j)
    same(got, x.clone().masked_fill_(mask[0], -1j), True)
    re, im = x.real.contiguous(), y.imag[:1].contiguous()  # broadcast parts
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.complex(re.to("accel"), im.to("accel"), out=out)
    same(out, torch.complex(re, im), True)
    same(torch.complex(re.to("accel"), im.to("accel")), torch.complex(re, im), True)
    absval = re.abs()
    same(torch.polar(absval.to("accel"), im.to("accel")), torch.polar(absval, im))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_nonzero(strict, dtype):
    # an element is nonzero when either part is (a zero real part with a nonzero imaginary
    # one, a signed zero, a nan part), on a strided view and into out=
    x = special(dtype).view(7, 7)
    xa = x.to("accel")
    same(xa.nonzero(), x.nonzero(), True)
    same(xa.t().nonzero(), x.t().nonzero(), True)
    same(torch.nonzero(xa.conj()), torch.nonzero(x.conj()), True)
    out = torch.empty(0, dtype=torch.long, device="accel")
    torch.nonzero(xa[::2], out=out)
    same(out, torch.nonzero(x[::2]), True)
    same(torch.zeros(3, 0, dtype=dtype, device="accel").nonzero(), torch.zeros(0, 2).long(), True)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_index_select_and_gather(strict, dtype):
    # both parts move together: strided, conjugated, 0-dim and out= forms
    x = csample(dtype, (5, 6), seed=8)
    xa = x.to("accel")
    idx = torch.tensor([4, 0, 0, 2])
    for dim in (0, 1):
        same(xa.index_select(dim, idx.to("accel")), x.index_select(dim, idx), True)
        same(xa.t().index_select(dim, idx.to("accel")), x.t().index_select(dim, idx), True)
    same(xa.conj().index_select(1, idx.to("accel")), x.conj().index_select(1, idx), True)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.index_select(xa[:, ::2], 1, idx[1:].to("accel"), out=out)
    same(out, x[:, ::2].index_select(1, idx[1:]), True)
    same(xa[0, 0].index_select(0, idx[1:2].to("accel")), x[0, 0].index_select(0, idx[1:2]), True)
    g = torch.tensor([[1, 0, 4], [3, 3, 2]])
    for dim in (0, 1):
        same(torch.gather(xa, dim, g.to("accel")), torch.gather(x, dim, g), True)
        same(torch.gather(xa.t(), dim, g.to("accel")), torch.gather(x.t(), dim, g), True)
    same(torch.gather(xa.conj(), 1, g.to("accel")), torch.gather(x.conj(), 1, g), True)
    out = torch.empty(2, 3, dtype=dtype, device="accel")
    torch.gather(xa, 0, g.to("accel"), out=out)
    same(out, torch.gather(x, 0, g), True)
    with pytest.raises(RuntimeError, match="index"):
        torch.gather(xa, 0, torch.tensor([[9]], device="accel"))
    assert xa.index_select(0, idx.to("accel")).cpu().shape == (4, 6)  # still usable


def test_complex_parts_refused_as_on_cpu():
    a, b = torch.ones(3, device="accel"), torch.ones(3, device="accel", dtype=torch.float64)
    with pytest.raises(RuntimeError):
        torch.complex(a, b)
    with pytest.raises(RuntimeError):
        torch.complex(a.long(), a.long())


# --- what torch.testing needs ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_assert_close_and_isclose_run_native(strict, dtype):
    x = special(dtype)
    xa = x.to("accel")
    torch.testing.assert_close(xa, xa.clone(), equal_nan=True)
    torch.testing.assert_close(xa.conj(), xa.conj().clone(), equal_nan=True)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(xa, xa + 1, equal_nan=True)
    y = x + 1e-3
    same(
        torch.isclose(xa, y.to("accel"), equal_nan=True),
        torch.isclose(x, y, equal_nan=True),
        exact=True,
    )
    same(
        torch.isclose(xa, y.to("accel"), rtol=0, atol=1e-2),
        torch.isclose(x, y, rtol=0, atol=1e-2),
        exact=True,
    )
    assert torch.equal(xa[:5], xa[:5].clone())
    assert not torch.equal(xa, xa.clone())  # nan != nan
    assert not torch.equal(xa[:5], xa[1:6])


# --- integer and bool dtypes: native or the fallback, never refused --------------------------

INT_OPS = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a == b,
    lambda a, b: a != b,
    lambda a, b: a < b,
    lambda a, b: a >= b,
    lambda a, b: torch.maximum(a, b),
    lambda a, b: torch.where(a == b, a, b),
    lambda a, b: a & b,
    lambda a, b: a | b,
    lambda a, b: torch.logical_and(a, b),
    lambda a, b: a.abs(),
    lambda a, b: torch.relu(a),
    lambda a, b: a.sign(),
    lambda a, b: torch.equal(a, b) and torch.equal(a, a.clone()),
    lambda a, b: ~a,
    lambda a, b: a.sum(),
    lambda a, b: a.to(torch.complex64),
]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("k", range(len(INT_OPS)))
def test_integer_and_bool_dtypes(dtype, k):
    g = torch.Generator().manual_seed(k)
    a = torch.randint(0, 5, (6, 4), generator=g).to(dtype)
    b = torch.randint(0, 5, (6, 4), generator=g).to(dtype)
    f = INT_OPS[k]
    try:
        expected = f(a, b)
    except RuntimeError as e:
        with pytest.raises(type(e)):
            f(a.to("accel"), b.to("accel"))
        return
    got = f(a.to("accel"), b.to("accel"))
    if isinstance(expected, bool):
        assert got == expected
    else:
        same(got, expected, exact=True)


def test_isposinf_refuses_complex_as_on_cpu():
    x = torch.ones(3, dtype=torch.complex64)
    for f in (torch.isposinf, torch.isneginf):
        with pytest.raises(RuntimeError, match="does not support complex inputs"):
            f(x)
        with pytest.raises(RuntimeError, match="does not support complex inputs"):
            f(x.to("accel"))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_addcmul_addcdiv_and_trace_match_cpu(dtype):
    # addcmul / addcdiv as CPU's kernel writes them (self + value * t1 * t2, or / t2) from the
    # native complex products and sum; trace sums the complex diagonal.
    g = torch.Generator().manual_seed(0)
    s = torch.randn(3, 4, dtype=dtype, generator=g)
    t1 = torch.randn(3, 1, dtype=dtype, generator=g)
    t2 = torch.randn(1, 4, dtype=dtype, generator=g) + 2
    cases = {
        "addcmul, complex value": lambda a, b, c: torch.addcmul(a, b, c, value=0.5 - 2j),
        "addcdiv, real value": lambda a, b, c: torch.addcdiv(a, b, c, value=3),
        "addcmul_": lambda a, b, c: a.clone().addcmul_(b, c),
        "addcdiv out=": lambda a, b, c: torch.addcdiv(
            a, b, c, value=-1j, out=torch.empty(0, dtype=dtype, device=a.device)
        ),
        "addcmul, self broadcast": lambda a, b, c: torch.addcmul(a[0], b, c),
        "trace": lambda a, b, c: torch.trace(a),
    }
    torch_accel.reset_fallback_counts()
    for name, fn in cases.items():
        expected = fn(s, t1, t2)
        got = fn(s.to("accel"), t1.to("accel"), t2.to("accel"))
        assert got.device.type == "accel" and got.dtype == expected.dtype, name
        torch.testing.assert_close(got.cpu(), expected, msg=name)
    assert torch_accel.fallback_counts() == {}
    with pytest.raises(RuntimeError):  # an in-place self cannot take the broadcast shape
        s.to("accel")[0].clone().addcmul_(t1.to("accel"), t2.to("accel"))
