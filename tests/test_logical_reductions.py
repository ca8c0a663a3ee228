"""all / any / isposinf / isneginf on accel vs CPU (native: no fallback)."""

import pytest
import torch

import torch_accel

INF = float("inf")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_all_any_every_form(dtype):
    x = torch.tensor([[1, 0, 3], [2, 5, 7]]).to(dtype)
    a = x.to("accel")
    forms = [
        lambda t: t.all(),
        lambda t: t.any(),
        lambda t: t.all(1),
        lambda t: t.any(0),
        lambda t: t.all(0, keepdim=True),
        lambda t: t.any(dim=(0, 1)),
        lambda t: torch.zeros_like(t).any(),
        lambda t: torch.ones_like(t).all(1),
    ]
    for form in forms:
        assert torch.equal(form(a).cpu(), form(x))
    out = torch.empty(0, dtype=torch.bool, device="accel")
    torch.all(a, 1, out=out)
    assert torch.equal(out.cpu(), x.all(1))
    assert torch_accel.fallback_counts() == {}


def names_distinct_dims(dim, ndim):
    """Whether `dim` (None, an int or a tuple) names distinct dims of an ndim-d tensor (a 0-d
    one takes 0 and -1)."""
    dims = () if dim is None else dim if isinstance(dim, tuple) else (dim,)
    n = max(ndim, 1)
    return all(-n <= d < n for d in dims) and len({d % n for d in dims}) == len(dims)


@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.uint8, torch.int32, torch.float32, torch.float16, torch.complex64]
)
def test_all_any_edge_cases_match_cpu(dtype):
    """NaN counts as true; uint8 keeps its dtype as on CPU; empty reductions give any's False and
    all's True; 0-d inputs; strided inputs; every dim form."""
    g = torch.Generator().manual_seed(0)
    x = (torch.rand(4, 6, 5, generator=g) > 0.6).to(dtype)
    if dtype.is_floating_point or dtype.is_complex:
        x[0, 0, 0] = float("nan")
    x[1] = 1  # a slice of all true
    cases = [x, x.transpose(0, 2), x[:, ::2], x[0, 0, 0], x[:, :0], torch.zeros(0, 3, dtype=dtype)]
    dims = [None, 0, -1, (0, 1), (), (-1, 0)]
    for t in cases:
        a = t.to("accel")
        for op in (torch.any, torch.all):
            for dim in filter(lambda d: names_distinct_dims(d, t.dim()), dims):
                for keepdim in (False, True):
                    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
                    want = op(t, **kw)
                    got = op(a, **kw)
                    assert got.dtype == want.dtype and torch.equal(got.cpu(), want), (op, dim)
    assert torch_accel.fallback_counts() == {}


def test_signed_infinities():
    x = torch.tensor([1.0, -INF, INF, float("nan"), 0.0])
    for f in (torch.isneginf, torch.isposinf):
        assert torch.equal(f(x.to("accel")).cpu(), f(x))
        assert torch.equal(f(x.to("accel", torch.bfloat16)).cpu(), f(x.bfloat16()))
    i = torch.arange(4)
    assert torch.equal(torch.isneginf(i.to("accel")).cpu(), torch.isneginf(i))
    assert torch_accel.fallback_counts() == {}
