"""Native unary, binary, comparison, pointwise, activation, foreach, AdamW and AMP ops
against CPU: dtypes, broadcasting, non-contiguous inputs, in-place and out= forms."""

import pytest
import torch

import torch_accel

FLOATS = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
}


def close(got, expected, dtype=None):
    assert got.device.type == "accel"
    assert got.dtype == expected.dtype
    tol = TOL.get(dtype or expected.dtype, dict(rtol=0, atol=0))
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True, **tol)


def no_fallback():
    assert torch_accel.fallback_counts() == {}


UNARY_FLOAT = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tanh",
    "sinh",
    "cosh",
    "tan",
    "log10",
    "sigmoid",
    "erf",
    "floor",
    "ceil",
    "round",
    "trunc",
    "neg",
    "abs",
    "sign",
]


def sample(dtype, shape=(6, 5), positive=False):
    x = torch.randn(shape) * 3
    if positive:
        x = x.abs() + 0.1
    return x.to(dtype)


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float(name, dtype):
    positive = name in ("log", "log1p", "log2", "log10", "sqrt", "rsqrt")
    x = sample(dtype, positive=positive)
    fn = getattr(torch, name)
    close(fn(x.to("accel")), fn(x), dtype)
    # in-place on a non-contiguous view, and out=
    a = x.to("accel")
    getattr(a.t(), name + "_")()
    close(a, fn(x), dtype)
    out = torch.empty(0, dtype=dtype, device="accel")
    fn(x.to("accel")[:, ::2], out=out)
    close(out, fn(x[:, ::2]), dtype)
    no_fallback()


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_and_cos_within_an_ulp_over_the_float_range(name):
    # Float sin and cos take a vectorizing path up to |x| = 1.6e6 (kernels/vector_math.h) and
    # the C library beyond it, for inf and for NaN; a run mixing both goes element by element.
    g = torch.Generator().manual_seed(7)
    parts = [
        torch.empty(20000).uniform_(-10, 10, generator=g),
        torch.empty(20000).uniform_(-1e4, 1e4, generator=g),
        torch.empty(20000).uniform_(1.5e6, 1.7e6, generator=g),  # across the limit
        torch.tensor([0.0, -0.0, 1e10, -3e20, 1e38, float("inf"), -float("inf"), float("nan")]),
        torch.arange(-64, 65) * (torch.pi / 4),  # near the quadrant edges
    ]
    x = torch.cat(parts)
    fn = getattr(torch, name)
    got = fn(x.to("accel")).cpu()
    exact = fn(x.double())
    # Within an ulp of 1 of the exact value (the outputs lie in [-1, 1]); CPU's alike.
    torch.testing.assert_close(got.double(), exact, rtol=0, atol=1.2e-7, equal_nan=True)
    torch.testing.assert_close(got, fn(x), rtol=0, atol=2.4e-7, equal_nan=True)
    assert torch.equal(got[60000:60002].signbit(), fn(x[60000:60002]).signbit())  # sin(-0): -0
    # In place on a transposed view, half and bfloat16 (computed in float), and a short
    # contiguous run of only fast elements.
    a = x[:20000].view(100, 200).to("accel")
    getattr(a.t(), name + "_")()
    torch.testing.assert_close(a.cpu(), fn(x[:20000].view(100, 200)), rtol=0, atol=2.4e-7)
    for dtype in (torch.float16, torch.bfloat16):
        close(fn(x[:40000].to(dtype).to("accel")), fn(x[:40000].to(dtype)), dtype)
    no_fallback()


# The floating unary ops beyond UNARY_FLOAT, each on inputs inside its domain (low, high):
# the inverse trigonometric and hyperbolic functions, gamma functions, Bessel functions and
# their kin. NO_REDUCED: CPU has them in float and double only (their half and bfloat16
# calls reach the fallback, which raises CPU's error).
SPECIAL_UNARY = {
    "acos": (-1, 1),
    "asin": (-1, 1),
    "atan": (-8, 8),
    "acosh": (1, 9),
    "asinh": (-8, 8),
    "atanh": (-1, 1),
    "erfc": (-4, 4),
    "erfinv": (-1, 1),
    "lgamma": (-6, 9),
    "digamma": (-6, 9),
    "i0": (-9, 9),
    "frac": (-9, 9),
    "sinc": (-4, 4),
    "logit": (0, 1),
    "angle": (-3, 3),
    "special.i0e": (-40, 40),
    "special.i1": (-9, 9),
    "special.i1e": (-40, 40),
    "special.entr": (-1, 4),
}
NO_REDUCED = {
    "special.bessel_j0": (-20, 20),
    "special.bessel_j1": (-20, 20),
    "special.bessel_y0": (0, 20),
    "special.bessel_y1": (0.1, 20),
    "special.modified_bessel_i0": (-9, 9),
    "special.modified_bessel_i1": (-9, 9),
    "special.spherical_bessel_j0": (-9, 9),
    "special.erfcx": (-3, 40),
    "special.log_ndtr": (-40, 6),
}


def torch_fn(name):
    fn = torch
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


@pytest.mark.parametrize("name", list(SPECIAL_UNARY) + list(NO_REDUCED))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_special(name, dtype):
    low, high = SPECIAL_UNARY.get(name) or NO_REDUCED[name]
    x = torch.empty(6, 5).uniform_(low, high, generator=torch.Generator().manual_seed(1))
    x = x.to(dtype)
    fn = torch_fn(name)
    if name in NO_REDUCED and dtype in (torch.bfloat16, torch.float16):
        with pytest.raises(NotImplementedError):
            fn(x.to("accel"))
        return
    # CPU's float64 bessel_j0/j1/y0/y1 use their float32 approximations (about 1e-7 absolute).
    tol_dtype = torch.float32 if "bessel_" in name and dtype == torch.float64 else dtype
    close(fn(x.to("accel")), fn(x), tol_dtype)
    out = torch.empty(0, dtype=dtype, device="accel")
    fn(x.to("accel")[:, ::2], out=out)  # out= from a strided input
    close(out, fn(x[:, ::2]), tol_dtype)
    if hasattr(torch.Tensor, name + "_"):
        a = x.to("accel")
        getattr(a.t(), name + "_")()
        close(a, fn(x), dtype)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool])
def test_unary_special_of_integers_promotes(dtype):
    x = torch.arange(-3, 9).reshape(3, 4).to(dtype)
    names = [
        "acos",
        "atan",
        "asinh",
        "erfc",
        "erfinv",
        "lgamma",
        "digamma",
        "i0",
        "sinc",
        "angle",
        "special.i1e",
        "special.bessel_j0",
        "special.erfcx",
    ]
    for name in names + ([] if dtype == torch.bool else ["signbit"]):
        fn = torch_fn(name)
        close(fn(x.to("accel")), fn(x))
    close(torch.polygamma(2, x.to("accel")), torch.polygamma(2, x))
    no_fallback()
    for name in ["frac"]:  # CPU has no integer kernel: its error, through the fallback
        with pytest.raises(NotImplementedError):
            torch_fn(name)(x.to("accel"))


def test_unary_special_edges():
    # Poles, domain edges, infinities and NaN, as CPU.
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([0.0, -0.0, -1.0, -2.5, 1.0, -1.0, 2.0, inf, -inf, nan, 1e-30, 50.0, 800.0])
    a = x.to("accel")
    for name in [
        "lgamma",
        "digamma",
        "erfinv",
        "i0",
        "special.i0e",
        "special.i1",
        "special.i1e",
        "special.erfcx",
        "special.log_ndtr",
        "special.entr",
        "sinc",
        "special.bessel_y0",
        "special.bessel_y1",
        "special.spherical_bessel_j0",
        "signbit",
        "angle",
        "atanh",
        "acosh",
        "frac",
    ]:
        fn = torch_fn(name)
        close(fn(a), fn(x))
    for eps in [None, 0.1]:
        close(torch.logit(a, eps), torch.logit(x, eps))
    no_fallback()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("eps", [None, 1e-3, 0.0, 0.2])
def test_logit_gradient(dtype, eps):
    # Inputs across [0, 1] and beyond it, its ends, and eps itself: inside [eps, 1 - eps] the
    # gradient is g / (x (1 - x)), outside it 0 (NaN without eps), at 0 and 1 infinite.
    g = torch.Generator().manual_seed(2)
    x = (torch.rand(999, generator=g) * 1.4 - 0.2).to(dtype)
    x[:4] = torch.tensor([0.0, 1.0, 0.2, 0.8])
    dy = torch.randn(999, generator=g).to(dtype)
    grads = []
    for device in ("accel", "cpu"):
        xd = x.to(device).requires_grad_()
        (torch.logit(xd, eps) * dy.to(device)).sum().backward()
        grads.append(xd.grad)
    close(grads[0], grads[1], dtype)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.ops.aten.logit_backward.grad_input(dy.to("accel"), x.to("accel"), eps, grad_input=out)
    close(out, grads[1], dtype)
    # A NaN input gives a NaN gradient, and a NaN eps bounds nothing, as in CUDA's kernel and
    # CPU's scalar one (CPU's vector lanes give 0 for both).
    nan = torch.full((3,), float("nan"), dtype=dtype, device="accel")
    assert torch.ops.aten.logit_backward(torch.ones_like(nan), nan, eps).isnan().all()
    x = torch.tensor([0.5, 1.5], dtype=dtype, device="accel")
    got = torch.ops.aten.logit_backward(torch.ones_like(x), x, float("nan"))
    close(got, torch.tensor([4.0, -4 / 3], dtype=dtype), dtype)
    no_fallback()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dtype", FLOATS)
def test_polygamma(n, dtype):
    g = torch.Generator().manual_seed(n)
    x = torch.empty(5, 4).uniform_(0.2 if n else -4.5, 6, generator=g).to(dtype)
    # CPU's float64 trigamma (n = 1) is a short series, good to about 5e-10.
    tol = dict(rtol=1e-8, atol=1e-8) if dtype == torch.float64 else TOL[dtype]

    def check(got, expected):
        assert got.device.type == "accel" and got.dtype == expected.dtype
        torch.testing.assert_close(got.cpu(), expected, equal_nan=True, **tol)

    check(torch.polygamma(n, x.to("accel")), torch.polygamma(n, x))
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.polygamma(n, x.to("accel").t(), out=out)
    check(out, torch.polygamma(n, x.t()))
    check(x.to("accel").polygamma_(n), x.clone().polygamma_(n))
    no_fallback()


def test_polygamma_float32_near_the_poles_is_within_a_rounding_of_the_exact_value():
    # The kernel evaluates in double and rounds once, so near the poles it stays within float32's
    # rounding, where CPU's float evaluation of trigamma's reflection loses digits (1e-3 off on
    # these points with torch 2.13): never farther than CPU.
    x = torch.linspace(-5.5, -0.05, 2001)
    exact = torch.polygamma(1, x.double())

    def worst(v):
        return ((v.double() - exact).abs() / exact.abs()).max().item()

    accel = worst(torch.polygamma(1, x.to("accel")).cpu())
    assert accel < 2e-7
    assert accel <= worst(torch.polygamma(1, x))
    no_fallback()


def test_digamma_gradient_is_native():
    # digamma's derivative is polygamma(1, x): Gamma, Beta and Dirichlet KL terms train natively.
    x = torch.empty(40).uniform_(0.1, 6, generator=torch.Generator().manual_seed(3))
    xc, xa = x.clone().requires_grad_(), x.to("accel").requires_grad_()
    (torch.digamma(xc) * x).sum().backward()
    (torch.digamma(xa) * x.to("accel")).sum().backward()
    torch.testing.assert_close(xa.grad.cpu(), xc.grad, **TOL[torch.float32])
    no_fallback()


@pytest.mark.parametrize("decimals", [0, 2, 3, -1, -3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_round_decimals(decimals, dtype):
    x = (torch.randn(6, 5, generator=torch.Generator().manual_seed(2)) * 400).to(dtype)
    close(torch.round(x.to("accel"), decimals=decimals), torch.round(x, decimals=decimals), dtype)
    a = x.to("accel")
    a.t().round_(decimals=decimals)
    close(a, torch.round(x, decimals=decimals), dtype)
    out = torch.empty(0, dtype=dtype, device="accel")
    torch.round(x.to("accel")[::2], decimals=decimals, out=out)
    close(out, torch.round(x[::2], decimals=decimals), dtype)
    no_fallback()
    with pytest.raises(NotImplementedError):
        torch.round(torch.arange(3, device="accel"), decimals=1)


@pytest.mark.parametrize("name", ["exp", "sqrt", "sigmoid", "floor", "neg", "abs", "sign"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_unary_int(name, dtype):
    x = torch.arange(0, 12).reshape(3, 4).to(dtype)
    if dtype == torch.uint8 and name == "neg":
        pytest.skip("uint8 negation wraps")
    fn = getattr(torch, name)
    close(fn(x.to("accel")), fn(x), fn(x).dtype)
    no_fallback()


def test_logical_bitwise_nan_to_num():
    b = torch.tensor([True, False, True])
    i = torch.tensor([0, 3, -7], dtype=torch.int32)
    close(torch.logical_not(b.to("accel")), torch.logical_not(b))
    close(torch.logical_not(i.to("accel")), torch.logical_not(i))
    close(torch.bitwise_not(i.to("accel")), torch.bitwise_not(i))
    close(~b.to("accel"), ~b)
    f = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    close(torch.isnan(f.to("accel")), torch.isnan(f))
    close(torch.isfinite(f.to("accel")), torch.isfinite(f))
    close(torch.nan_to_num(f.to("accel")), torch.nan_to_num(f))
    close(torch.nan_to_num(f.to("accel"), 1.0, 2.0, -3.0), torch.nan_to_num(f, 1.0, 2.0, -3.0))
    no_fallback()


BINARY = ["pow", "maximum", "minimum", "remainder", "fmod", "atan2", "hypot", "xlogy"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32])
def test_binary_broadcast(name, dtype):
    if name in ("atan2", "hypot") and not dtype.is_floating_point:
        pytest.skip(f"{name} has no integer kernel")
    x = sample(dtype, (4, 1, 5))
    y = sample(dtype, (3, 5))
    if name == "pow":
        x = x.abs() if dtype.is_floating_point else x.abs() % 4
        y = (y.abs() % 3) if not dtype.is_floating_point else y
    if name in ("remainder", "fmod") and not dtype.is_floating_point:
        y = torch.where(y == 0, torch.ones_like(y), y)
    fn = getattr(torch, name)
    close(fn(x.to("accel"), y.to("accel")), fn(x, y), dtype)
    close(
        fn(x.to("accel").expand(4, 3, 5).transpose(0, 1), y.to("accel")[:, None, :]),
        fn(x.expand(4, 3, 5).transpose(0, 1), y[:, None, :]),
        dtype,
    )
    no_fallback()


def test_hypot_forms_and_integer_error():
    x, y = torch.randn(6, 5) * 3, torch.randn(6, 5)
    a, b = x.to("accel"), y.to("accel")
    out = torch.empty(6, 5, device="accel")
    torch.hypot(a, b, out=out)
    close(out, torch.hypot(x, y))
    a.hypot_(b)
    close(a, torch.hypot(x, y))
    close(torch.hypot(b.half(), b.t().t().float()), torch.hypot(y.half(), y))
    no_fallback()
    for t in (torch.arange(3), torch.arange(3).to("accel")):
        with pytest.raises(NotImplementedError, match="hypot"):
            torch.hypot(t, t)


def test_xlogy_zeros_nans_scalars_and_forms():
    # 0 * log(0) = 0 and 0 * log(nan) = nan, as CPU; the scalar forms; out=, in place.
    x = torch.tensor([0.0, 0.0, 0.0, 2.0, -1.0, float("nan"), 3.0])
    y = torch.tensor([0.0, float("nan"), -1.0, 0.0, 2.0, 1.0, float("inf")])
    a, b = x.to("accel"), y.to("accel")
    close(torch.xlogy(a, b), torch.xlogy(x, y))
    close(torch.special.xlogy(a, b), torch.special.xlogy(x, y))
    close(torch.xlogy(a, 2.5), torch.xlogy(x, 2.5))
    close(torch.xlogy(0.0, b), torch.xlogy(0.0, y))
    close(torch.xlogy(3, b), torch.xlogy(3, y))
    out = torch.empty(0, device="accel")
    torch.xlogy(a, b, out=out)
    close(out, torch.xlogy(x, y))
    torch.xlogy(2.0, b, out=out)
    close(out, torch.xlogy(2.0, y))
    torch.xlogy(a, 0.0, out=out)
    close(out, torch.xlogy(x, 0.0))
    close(a.clone().xlogy_(b), x.clone().xlogy_(y))
    close(a.clone().xlogy_(4), x.clone().xlogy_(4))
    no_fallback()


# Binary ops with their dtype rules: name -> the dtypes CPU defines them on.
INTS = [torch.int64, torch.int32, torch.uint8]
NEW_BINARY = {
    "copysign": FLOATS + [torch.int64],
    "fmax": FLOATS + INTS + [torch.bool],
    "fmin": FLOATS + INTS + [torch.bool],
    "heaviside": FLOATS + INTS + [torch.bool],
    "logaddexp": FLOATS,
    "logaddexp2": FLOATS,
    "nextafter": [torch.float32, torch.float64],
    "special.xlog1py": FLOATS + [torch.int64],
    "special.zeta": [torch.float32, torch.float64, torch.int64],
    "gcd": INTS,
    "lcm": INTS,
    "bitwise_left_shift": INTS,
    "bitwise_right_shift": INTS,
}
POLYNOMIALS = [
    f"special.{kind}_polynomial_{letter}"
    for kind, letters in [
        ("chebyshev", "tuvw"),
        ("shifted_chebyshev", "tuvw"),
        ("hermite", ["h", "he"]),
        ("laguerre", "l"),
        ("legendre", "p"),
    ]
    for letter in letters
]
NEW_BINARY.update({name: [torch.float32, torch.float64, torch.int64] for name in POLYNOMIALS})


def binary_sample(name, dtype, shape, seed):
    g = torch.Generator().manual_seed(seed)
    if name in POLYNOMIALS:  # x (with the exact +-1 and 0 the closed forms take), then n
        if seed:
            return torch.randint(-1, 12, shape, generator=g).to(dtype)
        if not dtype.is_floating_point:
            return torch.randint(-3, 4, shape, generator=g).to(dtype)
        x = torch.randn(shape, generator=g) * 1.2
        x.view(-1)[:3] = torch.tensor([1.0, -1.0, 0.0])
        return x.to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not dtype.is_floating_point:
        low, high = (
            (0, 70) if "shift" in name else ((1, 12) if name == "special.zeta" else (-30, 30))
        )
        if dtype == torch.uint8:
            low = max(low, 0)
        return torch.randint(low, high, shape, generator=g).to(dtype)
    x = torch.randn(shape, generator=g) * 4
    if name == "special.zeta":
        x = x.abs() + (1.5 if seed == 0 else 0.1)
    if name in ("fmax", "fmin"):
        x[0] = float("nan")
    if name == "heaviside":
        x[..., 0] = 0
    if name == "special.xlog1py":
        x = x.abs() - 0.9 if seed else torch.where(x > 1, 0.0, x)
    return x.to(dtype)


@pytest.mark.parametrize("name,dtype", [(n, d) for n, dtypes in NEW_BINARY.items() for d in dtypes])
def test_binary_new_ops(name, dtype):
    x = binary_sample(name, dtype, (4, 1, 5), 0)
    y = binary_sample(name, dtype, (3, 5), 1)
    fn = torch_fn(name)
    tol_dtype = fn(x, y).dtype  # integers promote to float for some
    close(fn(x.to("accel"), y.to("accel")), fn(x, y), tol_dtype)
    # strided operands, out=, in place where the op has it
    xt, yt = x.expand(4, 3, 5).transpose(0, 1), y[:, None, :]
    out = torch.empty(0, dtype=fn(x, y).dtype, device="accel")
    fn(xt.to("accel"), yt.to("accel"), out=out)
    close(out, fn(xt, yt), tol_dtype)
    method = name.split(".")[-1] + "_"
    if hasattr(torch.Tensor, method) and fn(x, y).dtype == dtype:
        a = x.expand(4, 3, 5).contiguous()
        c = a.to("accel")
        getattr(c, method)(y.to("accel"))
        close(c, getattr(a.clone(), method)(y), dtype)
    if not (name == "special.hermite_polynomial_h" and dtype == torch.float32):
        no_fallback()  # float32 H_n keeps CPU's kernel (see aten/binary_math_ops.cpp)


def test_binary_new_ops_edges_and_errors():
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([inf, -inf, nan, 1.0, inf, -0.0, 0.0, 3.0])
    y = torch.tensor([inf, -inf, 1.0, 2.0, -inf, 0.0, -0.0, nan])
    a, b = x.to("accel"), y.to("accel")
    for name in ["logaddexp", "logaddexp2", "copysign", "fmax", "fmin", "nextafter"]:
        close(torch_fn(name)(a, b), torch_fn(name)(x, y))
    close(torch.copysign(a, -0.0), torch.copysign(x, -0.0))
    s, q = torch.tensor([1.5, 2.0, 3.0, 2.5, 0.5, 1.0]), torch.tensor([2.0, -1.5, -2.0, -0.5, 1, 3])
    close(torch.special.zeta(s.to("accel"), q.to("accel")), torch.special.zeta(s, q))
    close(torch.special.zeta(s.to("accel"), 2.0), torch.special.zeta(s, 2.0))
    i = torch.tensor([0, -4, 6, -(2**63), 7, 0])
    j = torch.tensor([0, 6, -4, 2, -21, 5])
    close(torch.gcd(i.to("accel"), j.to("accel")), torch.gcd(i, j))
    close(
        torch.lcm(i[[0, 1, 2, 4, 5]].to("accel"), j[[0, 1, 2, 4, 5]].to("accel")),
        torch.lcm(i[[0, 1, 2, 4, 5]], j[[0, 1, 2, 4, 5]]),
    )
    s = torch.tensor([-1, 0, 1, 63, 64, 70])
    v = torch.tensor([-8, 8, 1, -1, 5, -3])
    close(v.to("accel") << s.to("accel"), v << s)
    close(v.to("accel") >> s.to("accel"), v >> s)
    close(v.to("accel") << 3, v << 3)
    close(v.to("accel") >> 70, v >> 70)
    c = v.to("accel")
    c <<= s.to("accel")
    c >>= 2
    close(c, (v << s) >> 2)
    no_fallback()
    # CPU's errors, through the fallback.
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(a, torch.ones(8, dtype=torch.float64, device="accel"))
    with pytest.raises(NotImplementedError):
        torch.logaddexp(i.to("accel"), j.to("accel"))
    with pytest.raises(NotImplementedError):
        torch.gcd(a, b)


def test_binary_scalars_and_modes():
    x = torch.randn(5, 4) * 4
    y = torch.randn(5, 4) * 2 + 0.5
    a, b = x.to("accel"), y.to("accel")
    for mode in ["floor", "trunc"]:
        close(torch.div(a, b, rounding_mode=mode), torch.div(x, y, rounding_mode=mode))
        close(torch.div(a, 3, rounding_mode=mode), torch.div(x, 3, rounding_mode=mode))
        xi, yi = (x * 3).long(), torch.tensor([3, -2, 5, -7])
        close(
            torch.div(xi.to("accel"), yi.to("accel"), rounding_mode=mode),
            torch.div(xi, yi, rounding_mode=mode),
        )
    # A half/bfloat16 quotient is rounded to its dtype before truncating: 24.75 / -0.2275 is
    # -108.77 in float, -109 in bfloat16, so trunc gives -109, not -108.
    pairs = {
        torch.bfloat16: ([24.75, 46.0, 7.0], [-0.2275390625, 0.333984375, 2.0]),
        torch.half: ([-27.0625, -25.28125, 7.0], [0.0692138671875, 0.74365234375, 2.0]),
    }
    for dt, (num, den) in pairs.items():
        num, den = torch.tensor(num, dtype=dt), torch.tensor(den, dtype=dt)
        got = torch.div(num.to("accel"), den.to("accel"), rounding_mode="trunc")
        same = torch.div(num, den, rounding_mode="trunc")
        torch.testing.assert_close(got.cpu(), same, rtol=0, atol=0)
    close(a // b, x // y)
    close(a**2, x**2)
    close(2**a, 2**x)
    close(a.abs() ** 0.5, x.abs() ** 0.5)
    close(torch.tensor([2, 3, -2]).to("accel") ** 3, torch.tensor([2, 3, -2]) ** 3)
    close(a % 1.5, x % 1.5)
    c = a.clone()
    c.pow_(2)
    close(c, x.pow(2))
    i, j = torch.tensor([12, 5, 7]), torch.tensor([10, 3, 1])
    for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        close(getattr(torch, op)(i.to("accel"), j.to("accel")), getattr(torch, op)(i, j))
    close(i.to("accel") & 6, i & 6)
    no_fallback()


@pytest.mark.parametrize("dtype", FLOATS + [torch.float64, torch.int64, torch.uint8])
def test_square_is_bit_identical_to_cpu(dtype):
    # x ** 2 is computed as x * x (as CPU does), in every form, with CPU's result dtype.
    x = (torch.randn(257) * 9).to(dtype)
    for exponent in (2, 2.0):
        got = x.to("accel") ** exponent
        assert got.dtype == (x**exponent).dtype
        assert torch.equal(got.cpu(), x**exponent)
    y = x.to("accel")[::2]
    y.pow_(2)
    assert torch.equal(y.cpu(), x[::2].pow(2))
    out = torch.empty(257, dtype=torch.float64, device="accel")
    torch.pow(x.to("accel"), 2, out=out)
    assert torch.equal(out.cpu(), torch.pow(x, 2, out=torch.empty(257, dtype=torch.float64)))
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_pow_exponents_without_pow_match_cpu(dtype):
    # 1, 3, -2 and -1 are a copy, products and a reciprocal, as on CPU: the same bits (half
    # keeps pow for 3 and -2, as CPU). 0.5 and -0.5 are sqrt and rsqrt, which are correctly
    # rounded here and may differ from CPU's vectorised ones in the last bit.
    x = (torch.rand(257, dtype=torch.float64) * 4 + 0.01).to(dtype)
    x[0] = 0.0
    for exponent in (1, 3, -2, -1, 1.0, 3.0):
        got = x.to("accel") ** exponent
        assert torch.equal(got.cpu(), x**exponent), exponent
    for exponent in (0.5, -0.5):
        torch.testing.assert_close((x.to("accel") ** exponent).cpu(), x**exponent)
    y = x.to("accel")[::2]
    y.pow_(3)
    assert torch.equal(y.cpu(), x[::2].pow(3))
    z = x.to("accel")
    assert z.pow_(1) is z and torch.equal(z.cpu(), x)
    out = torch.empty(3, dtype=torch.float64, device="accel")
    with pytest.warns(UserWarning, match="resized"):
        torch.pow(x.to("accel"), 1, out=out)
    assert torch.equal(out.cpu(), x.double())
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.pow(x.to("accel"), 1, out=torch.empty(257, dtype=torch.int64, device="accel"))
    no_fallback()


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_compare(op, dtype):
    x = (torch.randn(4, 1, 3) * 2).round().to(dtype)
    y = (torch.randn(2, 3) * 2).round().to(dtype)
    fn = getattr(torch, op)
    close(fn(x.to("accel"), y.to("accel")), fn(x, y))
    close(fn(x.to("accel"), 0.5), fn(x, 0.5))
    close(fn(x.to("accel"), y.float().to("accel")), fn(x, y.float()))  # promotion
    a = x.float().to("accel")
    getattr(a, op + "_")(y.float().to("accel")[0])
    close(a, getattr(x.float(), op)(y.float()[0]).float())
    out = torch.empty(0, dtype=torch.bool, device="accel")
    fn(x.to("accel"), y.to("accel"), out=out)
    close(out, fn(x, y))
    no_fallback()


def test_logical_binary():
    x = torch.tensor([0.0, 1.0, 2.0, 0.0])
    y = torch.tensor([1, 0, 3, 0])
    for op in ["logical_and", "logical_or", "logical_xor"]:
        fn = getattr(torch, op)
        close(fn(x.to("accel"), y.to("accel")), fn(x, y))
    no_fallback()


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
def test_where_masked_fill_clamp(dtype):
    x, y = sample(dtype, (4, 5)), sample(dtype, (5,))
    cond = torch.randn(4, 1) > 0
    close(
        torch.where(cond.to("accel"), x.to("accel"), y.to("accel")), torch.where(cond, x, y), dtype
    )
    close(torch.where(cond.to("accel"), x.to("accel"), 0.0), torch.where(cond, x, 0.0), dtype)
    a = x.to("accel")
    a.masked_fill_(cond.to("accel"), -1)
    close(a, x.masked_fill(cond, -1), dtype)
    a = x.to("accel")
    a.masked_fill_(cond[0].to("accel"), torch.tensor(5, dtype=dtype).to("accel"))
    close(a, x.masked_fill(cond[0], torch.tensor(5, dtype=dtype)), dtype)
    close(x.to("accel").clamp(-1, 2), x.clamp(-1, 2), dtype)
    close(x.to("accel").clamp(min=0.5), x.clamp(min=0.5), dtype)
    close(x.to("accel").clamp_max(1), x.clamp_max(1), dtype)
    lo, hi = -y.abs(), y.abs()
    close(x.to("accel").clamp(lo.to("accel"), hi.to("accel")), x.clamp(lo, hi), dtype)
    close(torch.clamp_min(x.to("accel"), lo.to("accel")), torch.clamp_min(x, lo), dtype)
    no_fallback()


@pytest.mark.parametrize("dtype", FLOATS)
def test_lerp_addcmul_addcdiv(dtype):
    a, b, c = sample(dtype, (3, 4)), sample(dtype, (3, 4)), sample(dtype, (4,), positive=True)
    A, B, C = a.to("accel"), b.to("accel"), c.to("accel")
    close(torch.lerp(A, B, 0.3), torch.lerp(a, b, 0.3), dtype)
    w = torch.rand(3, 4).to(dtype)
    close(torch.lerp(A, B, w.to("accel")), torch.lerp(a, b, w), dtype)
    close(torch.addcmul(A, B, C, value=0.5), torch.addcmul(a, b, c, value=0.5), dtype)
    close(torch.addcdiv(A, B, C, value=-2), torch.addcdiv(a, b, c, value=-2), dtype)
    A.addcdiv_(B, C)
    close(A, a.addcdiv(b, c), dtype)
    no_fallback()


@pytest.mark.parametrize("dtype", FLOATS)
def test_activations_and_backward(dtype):
    torch.manual_seed(0)
    x = sample(dtype, (6, 7))
    for fn in [
        torch.nn.functional.relu,
        torch.nn.functional.silu,
        torch.sigmoid,
        torch.tanh,
        lambda t: torch.nn.functional.gelu(t),
        lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
    ]:
        xc = x.clone().float().requires_grad_()
        xa = x.to("accel").float().requires_grad_()
        g = torch.randn(6, 7)
        yc, ya = fn(xc), fn(xa)
        yc.backward(g)
        ya.backward(g.to("accel"))
        close(ya.detach(), yc.detach())
        close(xa.grad, xc.grad)
        close(fn(x.to("accel")), fn(x), dtype)
    sp = torch.nn.functional.softplus
    close(sp(x.to("accel"), beta=2, threshold=3), sp(x, beta=2, threshold=3), dtype)
    a = x.to("accel")
    torch.nn.functional.relu_(a)
    close(a, torch.relu(x), dtype)
    no_fallback()


def test_foreach_ops():
    xs = [torch.randn(3, 4), torch.randn(5)]
    ys = [torch.randn(3, 4), torch.randn(5).abs() + 0.5]
    A, B = [t.to("accel") for t in xs], [t.to("accel") for t in ys]
    for got, exp in zip(torch._foreach_add(A, B, alpha=2), torch._foreach_add(xs, ys, alpha=2)):
        close(got, exp)
    for got, exp in zip(torch._foreach_mul(A, 3.0), torch._foreach_mul(xs, 3.0)):
        close(got, exp)
    torch._foreach_mul_(A, torch.tensor(0.5).to("accel"))
    torch._foreach_div_(A, [2.0, 4.0])
    torch._foreach_addcmul_(A, B, B, 0.1)
    torch._foreach_addcdiv_(A, B, B, [0.2, 0.3])
    torch._foreach_lerp_(A, B, 0.25)
    expected = [x * 0.5 for x in xs]
    expected = [e / s for e, s in zip(expected, [2.0, 4.0])]
    expected = [e.addcmul(y, y, value=0.1) for e, y in zip(expected, ys)]
    expected = [e.addcdiv(y, y, value=s) for e, y, s in zip(expected, ys, [0.2, 0.3])]
    expected = [e.lerp(y, 0.25) for e, y in zip(expected, ys)]
    for got, exp in zip(A, expected):
        close(got, exp)
    for got, exp in zip(
        torch._foreach_sub(B, A, alpha=0.5), torch._foreach_sub(ys, expected, alpha=0.5)
    ):
        close(got, exp)
    torch._foreach_maximum_(A, B)
    for got, exp in zip(A, torch._foreach_maximum(expected, ys)):
        close(got, exp)
    torch._foreach_copy_(A, B)
    torch._foreach_zero_(B)
    for a, b, y in zip(A, B, ys):
        close(a, y)
        close(b, torch.zeros_like(y))
    B = [t.to("accel") for t in ys]
    for got, exp in zip(torch._foreach_sqrt(B), torch._foreach_sqrt(ys)):
        close(got, exp)
    for got, exp in zip(torch._foreach_neg(B), torch._foreach_neg(ys)):
        close(got, exp)
    no_fallback()


# Each case: the foreach op over lists p, a, b (w: a scalar per tensor), and the tensor op it
# applies to each tensor i.
FOREACH_CASES = {
    "mul_.Scalar": (lambda p, a, b, w: torch._foreach_mul_(p, 0.9), lambda p, a, b, w: p.mul_(0.9)),
    "add_.Scalar": (lambda p, a, b, w: torch._foreach_add_(p, 1.5), lambda p, a, b, w: p.add_(1.5)),
    "sub_.Scalar": (lambda p, a, b, w: torch._foreach_sub_(p, 2), lambda p, a, b, w: p.sub_(2)),
    "div_.ScalarList": (lambda p, a, b, w: torch._foreach_div_(p, w), lambda p, a, b, w: p.div_(w)),
    "add_.List": (
        lambda p, a, b, w: torch._foreach_add_(p, a, alpha=0.3),
        lambda p, a, b, w: p.add_(a, alpha=0.3),
    ),
    "mul_.List": (lambda p, a, b, w: torch._foreach_mul_(p, a), lambda p, a, b, w: p.mul_(a)),
    "lerp_.Scalar": (
        lambda p, a, b, w: torch._foreach_lerp_(p, a, 0.1),
        lambda p, a, b, w: p.lerp_(a, 0.1),
    ),
    "addcmul_.Scalar": (
        lambda p, a, b, w: torch._foreach_addcmul_(p, a, b, 0.2),
        lambda p, a, b, w: p.addcmul_(a, b, value=0.2),
    ),
    "addcdiv_.ScalarList": (
        lambda p, a, b, w: torch._foreach_addcdiv_(p, a, b, w),
        lambda p, a, b, w: p.addcdiv_(a, b, value=w),
    ),
    "sqrt_": (lambda p, a, b, w: torch._foreach_sqrt_(b), lambda p, a, b, w: b.sqrt_()),
    "sqrt": (
        lambda p, a, b, w: [t.copy_(r) for t, r in zip(p, torch._foreach_sqrt(b))],
        lambda p, a, b, w: p.copy_(b.sqrt()),
    ),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("case", list(FOREACH_CASES))
def test_foreach_dense_path_matches_per_tensor_ops(case, dtype):
    """Lists of contiguous tensors of one dtype launch each tensor's kernel straight from a dense
    descriptor (csrc/aten/foreach_ops.cpp): the numbers of the same op tensor by tensor, bit for
    bit, and CPU's within tolerance; a non-contiguous member sends the call the per-tensor way."""
    g = torch.Generator().manual_seed(0)
    shapes = [(3, 5), (7,), (2, 3, 4), (0,)]
    w = [1.5, 2.5, 3.5, 4.5]
    op, tensor_op = FOREACH_CASES[case]
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else {}
    for transposed in (False, True):
        cpu = [[torch.randn(s, generator=g) for s in shapes] for _ in range(2)]
        cpu.append([torch.rand(s, generator=g) + 0.5 for s in shapes])
        if transposed:  # the per-tensor path, for the whole call
            cpu[0][0] = cpu[0][0].t().contiguous().t()
        acc = [[t.to("accel", dtype) for t in ts] for ts in cpu]
        one_by_one = [[t.clone() for t in ts] for ts in acc]
        cpu = [[t.to(dtype) for t in ts] for ts in cpu]
        op(*cpu, w)
        op(*acc, w)
        for i in range(len(shapes)):
            tensor_op(*(ts[i] for ts in one_by_one), w[i])
        for got, one, want in zip(acc[0] + acc[2], one_by_one[0] + one_by_one[2], cpu[0] + cpu[2]):
            assert torch.equal(got.cpu(), one.cpu())
            torch.testing.assert_close(got.cpu(), want, **tol)
    no_fallback()


def test_foreach_dense_path_keeps_pytorch_errors():
    v = torch.arange(8.0, device="accel")
    with pytest.raises(RuntimeError, match="single memory location"):
        torch._foreach_add_([v[0:4]], [v[1:5]])
    with pytest.raises(RuntimeError):
        torch._foreach_add_([torch.ones(3, device="accel")], [torch.ones(4, device="accel")])


def _linear_pair():
    torch.manual_seed(1)
    cpu = torch.nn.Linear(8, 4)
    acc = torch.nn.Linear(8, 4).to("accel")
    acc.load_state_dict(cpu.state_dict())
    return cpu, acc


@pytest.mark.parametrize("mode", ["foreach", "fused"])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("optim", [torch.optim.AdamW, torch.optim.Adam])
def test_adamw_step_matches_cpu(mode, amsgrad, maximize, optim):
    cpu, acc = _linear_pair()
    kw = dict(lr=1e-2, weight_decay=0.1, betas=(0.9, 0.99), amsgrad=amsgrad, maximize=maximize)
    oc = optim(cpu.parameters(), foreach=(mode == "foreach"), fused=(mode == "fused") or None, **kw)
    oa = optim(acc.parameters(), foreach=(mode == "foreach"), fused=(mode == "fused") or None, **kw)
    for _ in range(3):
        x = torch.randn(16, 8)
        for model, opt, inp in [(cpu, oc, x), (acc, oa, x.to("accel"))]:
            opt.zero_grad()
            model(inp).pow(2).sum().backward()
            opt.step()
    for pc, pa in zip(cpu.parameters(), acc.parameters()):
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)
    for name in [
        "aten::_fused_adamw_",
        "aten::_fused_adam_",
        "aten::_foreach_add_.Scalar",
        "aten::_foreach_lerp_.Scalar",
        "aten::_foreach_addcdiv_.ScalarList",
    ]:
        assert name not in torch_accel.fallback_counts()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("tensor_lr", [False, True])
def test_fused_adamw_on_large_and_transposed_params_matches_cpu(dtype, tensor_lr):
    """The fused kernel runs chunks of elements: a parameter of several chunks and a ragged
    end, a transposed (non-contiguous) one whose state is staged, reduced and double
    precision, and a device lr (the .tensor_lr overload). The reference is CPU's foreach AdamW:
    CPU's fused kernel walks a transposed parameter and its contiguous grad in different
    orders (torch 2.13), which CUDA's and ours do not."""
    torch.manual_seed(5)
    shapes = [(3000,), (70, 40), (7,)]
    base = [torch.randn(s, dtype=torch.float64).to(dtype) for s in shapes]
    base[1] = base[1].t()  # a (40, 70) view of (70, 40) storage
    runs = []
    for dev in ("cpu", "accel"):
        params = [torch.nn.Parameter(b.to(dev)) for b in base]
        lr = torch.tensor(2e-2, device=dev) if tensor_lr and dev == "accel" else 2e-2
        kind = dict(foreach=True) if dev == "cpu" else dict(fused=True)
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.05, amsgrad=True, **kind)
        runs.append((params, opt, dev))
    assert not runs[1][0][1].is_contiguous()
    for _ in range(3):
        grads = [torch.randn(b.shape, dtype=torch.float64).to(dtype) for b in base]
        for params, opt, dev in runs:
            for p, g in zip(params, grads):
                p.grad = g.to(dev)
            opt.step()
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)
    for pc, pa in zip(runs[0][0], runs[1][0]):
        assert pa.stride() == pc.stride()
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), **tol)
    for pc, pa in zip(runs[0][0], runs[1][0]):
        sc, sa = runs[0][1].state[pc], runs[1][1].state[pa]
        for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            torch.testing.assert_close(sa[key].cpu(), sc[key], **tol)
    assert "aten::_fused_adamw_" not in torch_accel.fallback_counts()
    assert "aten::_fused_adamw_.tensor_lr" not in torch_accel.fallback_counts()


SGD_CASES = [
    dict(momentum=0.0),
    dict(momentum=0.9, dampening=0.1, weight_decay=0.05),
    dict(momentum=0.9, nesterov=True, maximize=True),
]
ADAGRAD_CASES = [dict(), dict(lr_decay=0.01, weight_decay=0.05, maximize=True)]


@pytest.mark.parametrize(
    "optim,kw",
    [(torch.optim.SGD, k) for k in SGD_CASES] + [(torch.optim.Adagrad, k) for k in ADAGRAD_CASES],
    ids=[f"sgd{i}" for i in range(len(SGD_CASES))]
    + [f"adagrad{i}" for i in range(len(ADAGRAD_CASES))],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("tensor_lr", [False, True])
def test_fused_sgd_and_adagrad_match_cpu(optim, kw, dtype, tensor_lr):
    """SGD(fused=True) and Adagrad(fused=True): parameters of several host chunks with a
    ragged end, a transposed one (its state staged), several steps (SGD's momentum buffer
    starts as the first gradient), and a device lr. The reference is CPU's foreach optimizer:
    CPU's fused kernels walk a transposed parameter and its contiguous grad in different orders
    (torch 2.13), which CUDA's and ours do not."""
    torch.manual_seed(6)
    shapes = [(3000,), (40, 70), (7,)]
    base = [torch.randn(s, dtype=torch.float64).to(dtype) for s in shapes]
    base[1] = base[1].t()
    runs = []
    for dev in ("cpu", "accel"):
        params = [torch.nn.Parameter(b.to(dev)) for b in base]
        lr = torch.tensor(0.05, device=dev) if tensor_lr and dev == "accel" else 0.05
        kind = dict(foreach=True) if dev == "cpu" else dict(fused=True)
        runs.append((params, optim(params, lr=lr, **kind, **kw), dev))
    for _ in range(3):
        grads = [torch.randn(b.shape, dtype=torch.float64).to(dtype) for b in base]
        for params, opt, dev in runs:
            for p, g in zip(params, grads):
                p.grad = g.to(dev)
            opt.step()
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)
    for pc, pa in zip(runs[0][0], runs[1][0]):
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), **tol)
        for key, value in runs[0][1].state[pc].items():
            torch.testing.assert_close(runs[1][1].state[pa][key].cpu(), value, **tol)
    assert not [k for k in torch_accel.fallback_counts() if "_fused_" in k]


@pytest.mark.parametrize("optim", [torch.optim.SGD, torch.optim.Adagrad])
def test_fused_sgd_and_adagrad_under_grad_scaler(optim):
    """GradScaler hands the fused kernels its scale and found_inf: unscaled gradients, and a
    skipped step when a gradient overflowed, as on CPU."""
    runs = []
    for dev in ("cpu", "accel"):
        cpu, _ = _linear_pair()
        model = cpu.to(dev)
        kw = dict(momentum=0.9) if optim is torch.optim.SGD else {}
        runs.append(
            (
                model,
                optim(model.parameters(), lr=0.1, fused=True, **kw),
                torch.amp.GradScaler(dev, init_scale=1024.0),
                dev,
            )
        )
    for step in range(3):
        x = torch.randn(16, 8)
        for model, opt, scaler, dev in runs:
            opt.zero_grad()
            loss = model(x.to(dev)).pow(2).sum() * (float("inf") if step == 1 else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    (mc, _, sc, _), (ma, _, sa, _) = runs
    assert sa.get_scale() == sc.get_scale()
    for pc, pa in zip(mc.parameters(), ma.parameters()):
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), rtol=1e-5, atol=1e-6)
    assert not [k for k in torch_accel.fallback_counts() if "_fused_" in k]


def test_grad_scaler_skips_step_on_inf():
    cpu, acc = _linear_pair()
    scaler = torch.amp.GradScaler("accel", init_scale=1024.0)
    opt = torch.optim.SGD(acc.parameters(), lr=0.1)
    before = [p.detach().cpu().clone() for p in acc.parameters()]
    loss = acc(torch.randn(4, 8).to("accel")).sum()
    scaler.scale(loss).backward()
    acc.weight.grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.update()
    for b, p in zip(before, acc.parameters()):
        torch.testing.assert_close(p.detach().cpu(), b)  # step skipped
    assert scaler.get_scale() == 512.0  # backed off
    # A clean step unscales the grads and applies them.
    opt.zero_grad()
    x = torch.randn(4, 8)
    scaler.scale(acc(x.to("accel")).sum()).backward()
    scaler.unscale_(opt)
    cpu.zero_grad()
    cpu(x).sum().backward()
    torch.testing.assert_close(acc.weight.grad.cpu(), cpu.weight.grad, rtol=1e-5, atol=1e-5)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 512.0
    for name in ["aten::_amp_foreach_non_finite_check_and_unscale_", "aten::_amp_update_scale_"]:
        assert name not in torch_accel.fallback_counts()


def test_fused_adamw_with_grad_scaler_matches_cpu():
    """scaler.step hands grad_scale and found_inf to _fused_adamw_: an inf step changes nothing,
    a clean one matches CPU's fused AdamW under its own GradScaler."""
    cpu, acc = _linear_pair()
    runs = []
    for model, dev in [(cpu, "cpu"), (acc, "accel")]:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, fused=True)
        scaler = torch.amp.GradScaler(dev, init_scale=256.0, growth_interval=1)
        runs.append((model, opt, scaler, dev))
    torch.manual_seed(3)
    inputs = [torch.randn(4, 8) for _ in range(3)]
    for step, x in enumerate(inputs):
        for model, opt, scaler, dev in runs:
            opt.zero_grad()
            scaler.scale(model(x.to(dev)).pow(2).sum()).backward()
            if step == 1:
                model.bias.grad[0] = float("nan")
            scaler.step(opt)
            scaler.update()
    for pc, pa in zip(cpu.parameters(), acc.parameters()):
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)
    assert runs[0][2].get_scale() == runs[1][2].get_scale()
    for name in [
        "aten::_fused_adamw_",
        "aten::_amp_foreach_non_finite_check_and_unscale_",
        "aten::_amp_update_scale_",
    ]:
        assert name not in torch_accel.fallback_counts()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.complex64])
def test_strided_operands_in_segments_match_cpu(dtype):
    # Rows of 20, 256 and 700 elements (under, at and over a segment), starting mid-row in
    # parallel chunks (over 32768 elements): transposed, sliced and broadcast operands, and
    # outputs that are transposed or written in place through a view.
    def make(*shape):
        return (torch.randn(*shape) * 4).to(dtype)

    def same(got, expected):  # complex mul may differ from CPU's by an ulp (a fused product)
        if dtype.is_complex:
            torch.testing.assert_close(got.cpu(), expected)
        else:
            assert torch.equal(got.cpu(), expected)

    for inner in (20, 256, 700):
        a = make(7, 61, inner)
        b = make(61, 7, inner).transpose(0, 1)  # dense along the row, transposed outside it
        row = make(7, 61, 1)  # broadcast along the row
        col = make(inner)  # broadcast over the outer dimensions
        sliced = make(7, 61, 2 * inner)[..., ::2]  # a row with a stride of two elements
        for x, y in ((a, b), (a, row), (b, col), (sliced, a), (row, sliced)):
            got = x.to("accel") * y.to("accel")
            same(got, x * y)
            same(x.to("accel") + y.to("accel"), x + y)
        c = torch.where(a.real > 0 if dtype.is_complex else a > 0, b, row)
        gc = torch.where(
            (a.real > 0 if dtype.is_complex else a > 0).to("accel"), b.to("accel"), row.to("accel")
        )
        same(gc, c)
        # A transposed output: the result is scattered back.
        out = torch.empty(inner, 61, 7, dtype=dtype, device="accel").permute(2, 1, 0)
        torch.mul(a.to("accel"), b.to("accel"), out=out)
        same(out, a * b)
        # In place through a strided view, on a copy that keeps the other half.
        base = make(7, 61, 2 * inner)
        acc = base.to("accel")
        acc[..., 1::2].mul_(row.to("accel"))
        base[..., 1::2].mul_(row)
        same(acc, base)
    no_fallback()


@pytest.mark.parametrize("inner", [16, 17, 32, 100, 256])
@pytest.mark.parametrize("mid", [1, 3, 1000])
def test_rows_dense_along_the_last_dim_match_cpu_exactly(inner, mid):
    # Operands dense along their last dimension but strided beyond it (a rotary half, a
    # transposed head) take the host's back-to-back row loop: every row, range split and
    # broadcast along the rows must land exactly.
    g = torch.Generator().manual_seed(inner * 7 + mid)
    outer = 37
    w = torch.randn(outer, mid, 2 * inner, generator=g)[..., 3 : 3 + inner]
    over_outer = torch.randn(1, mid, inner, generator=g)
    over_mid = torch.randn(outer, 1, inner, generator=g)
    cases = {
        "mul": lambda t, u, v: t * u,
        "add": lambda t, u, v: t + v,
        "copy": lambda t, u, v: t.contiguous(),
        "neg": lambda t, u, v: -t,
    }
    args = (w, over_outer, over_mid)
    for name, fn in cases.items():
        got = fn(*(a.to("accel") for a in args)).cpu()
        assert torch.equal(got, fn(*args)), name
    out = torch.zeros(outer, mid, 2 * inner, device="accel")[..., :inner]
    out.copy_(w.to("accel") * 2)
    assert torch.equal(out.cpu(), w * 2)
