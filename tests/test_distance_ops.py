"""torch.cdist and F.pdist on accel against CPU: every p kind (0, < 1, 1, < 2, 2, > 2, inf),
both of cdist's p = 2 methods (the norms of the differences, and the matrix-product form CPU
uses for more than 25 rows), batch broadcasting, zero distances, gradients, and CPU's errors.
All native: no CPU fallback."""

import pytest
import torch
import torch.nn.functional as F

P = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-9, atol=1e-10)}


pytestmark = pytest.mark.usefixtures("strict")


def both(fn, *inputs):
    """fn's result and its inputs' gradients for a random upstream gradient, on CPU and accel."""
    out = []
    for dev in ("cpu", "accel"):
        leaves = [t.detach().to(dev).requires_grad_() for t in inputs]
        y = fn(*leaves)
        grad = torch.randn(y.shape, generator=torch.Generator().manual_seed(9), dtype=y.dtype)
        y.backward(grad.to(dev))
        out.append([y.detach().cpu()] + [t.grad.cpu() for t in leaves])
    return out


@pytest.mark.parametrize("p", P)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "shapes,mode",
    [
        (((5, 4), (6, 4)), None),
        (((2, 30, 3), (40, 3)), None),  # p = 2 takes the matrix product here
        (((2, 1, 7, 3), (3, 5, 3)), "use_mm_for_euclid_dist"),
        (((30, 3), (28, 3)), "donot_use_mm_for_euclid_dist"),
    ],
    ids=["small", "mm", "broadcast", "no mm"],
)
def test_cdist_matches_cpu(p, dtype, shapes, mode):
    g = torch.Generator().manual_seed(1)
    x1, x2 = (torch.randn(s, generator=g, dtype=dtype) for s in shapes)
    x2.view(-1, x2.shape[-1])[1] = x1.reshape(-1, x1.shape[-1])[1]  # a zero distance
    kw = {} if mode is None else {"compute_mode": mode}
    cpu, acc = both(lambda a, b: torch.cdist(a, b, p, **kw), x1, x2)
    tol = [dict(TOL[dtype]) for _ in acc]
    many_rows = max(x1.shape[-2], x2.shape[-2]) > 25
    if p == 2.0 and (mode == "use_mm_for_euclid_dist" or (mode is None and many_rows)):
        # The matrix-product form computes |a|^2 + |b|^2 - 2ab, whose rounding (eps * |a|^2)
        # survives the square root as sqrt(eps) * |a|: a zero distance comes out as about 1e-8
        # in float64, or exactly 0 when the GEMM happens to add in the order of the norms.
        # CPU differentiates that form (x1 * sum(g / d) - (g / d) @ x2, terms of |x| sum|g / d|
        # that cancel), accel the distances' own formula: the gradients part by that rounding.
        eps = torch.finfo(dtype).eps
        norm = max(x1.norm(dim=-1).max(), x2.norm(dim=-1).max()).item()
        tol[0]["atol"] = 4 * eps**0.5 * norm
        g = torch.randn(cpu[0].shape, generator=torch.Generator().manual_seed(9), dtype=dtype)
        d = cpu[0].clamp_min(4 * eps**0.5 * norm)  # the distances resolved, as above
        cancelled = 8 * eps * norm * (g.abs() / d).sum((-1, -2)).max().item()
        for t in tol[1:]:
            t["atol"] = max(t["atol"], cancelled)
    for a, c, t in zip(acc, cpu, tol):
        torch.testing.assert_close(a, c, **t)


@pytest.mark.parametrize("p", P)
def test_pdist_matches_cpu(p):
    x = torch.randn(7, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    x[4] = x[1]  # a zero distance
    cpu, acc = both(lambda a: F.pdist(a, p), x)
    for a, c in zip(acc, cpu):
        torch.testing.assert_close(a, c, **TOL[torch.float64])
    for rows in (torch.randn(1, 3), torch.randn(0, 3), torch.randn(4, 0)):
        torch.testing.assert_close(F.pdist(rows.to("accel"), p).cpu(), F.pdist(rows, p))


def test_empty_inputs_match_cpu():
    for a, b in (((0, 3), (4, 3)), ((3, 0), (4, 0)), ((2, 0, 3), (5, 3))):
        x1, x2 = torch.randn(a), torch.randn(b)
        torch.testing.assert_close(
            torch.cdist(x1.to("accel"), x2.to("accel")).cpu(), torch.cdist(x1, x2)
        )


@pytest.mark.parametrize(
    "args",
    [
        (torch.randn(4), torch.randn(3, 4), 2.0, None),
        (torch.randn(3, 4), torch.randn(3, 5), 2.0, None),
        (torch.randn(3, 4), torch.randn(3, 4), -1.0, None),
        (torch.randn(3, 4), torch.randn(3, 4), 2.0, 3),
        (torch.randn(3, 4).double(), torch.randn(3, 4), 2.0, None),
    ],
    ids=["1-d", "columns", "negative p", "mode", "dtypes"],
)
def test_cdist_bad_input_raises_cpus_error(args):
    with pytest.raises(RuntimeError) as cpu:
        torch.ops.aten._cdist_forward(*args)
    acc_args = [a.to("accel") if isinstance(a, torch.Tensor) else a for a in args]
    with pytest.raises(RuntimeError) as acc:
        torch.ops.aten._cdist_forward(*acc_args)
    assert str(acc.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    assert (torch.ones(2, device="accel") + 1).cpu().tolist() == [2.0, 2.0]
