"""The sort kernel (kernels/sort.h: a tile sort, then merge passes split into output tiles by a
merge-path search) against CPU's stable sort, at sizes around the host's tile (512 keys) and
over several merge passes, with ties, NaN, +-inf and signed zeros (the indices must be CPU's
stable ones), in every dtype; and the ops built on it: argsort, msort, topk, unique (and
unique_consecutive, which shares its code), searchsorted with a sorter from argsort, and
kthvalue, median, nanmedian and mode (a position of the sort)."""

import pytest
import torch

import torch_accel
from conftest import REAL_DTYPES

FLOATS = {torch.float32, torch.bfloat16, torch.float16, torch.float64}

# One tile or less, a tile and a key either side, several tiles (a multiple of the tile and
# not), up to 6 merge passes; and many slices, short and long.
SHAPES = [
    (1,),
    (2,),
    (17,),
    (511,),
    (512,),
    (513,),
    (1500,),
    (2048,),
    (5000,),
    (32771,),
    (64, 700),
    (1000, 33),
    (3, 4097),
]


def keys(shape, dtype, ties, seed=0):
    """Random keys; with `ties`, few distinct values (and for floats NaN, +-inf and +-0)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not ties:
        if dtype in FLOATS:
            return (torch.randn(shape, generator=g) * 100).to(dtype)
        hi = 256 if dtype == torch.uint8 else 1 << 30
        return torch.randint(0, hi, shape, generator=g).to(dtype)
    x = torch.randint(0, 6, shape, generator=g).to(torch.float64)
    if dtype in FLOATS:
        special = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 2.5])
        pick = torch.randint(0, 6, shape, generator=g)
        x = torch.where(torch.rand(shape, generator=g) < 0.4, special[pick].double(), x)
    return x.to(dtype)


def dev(t):
    return t.to("accel")


def assert_native():
    assert torch_accel.fallback_counts() == {}


def expect_sorted_like_cpu(x, dim, descending, stable):
    v, i = torch.sort(dev(x), dim=dim, descending=descending, stable=stable)
    ev, ei = torch.sort(x, dim=dim, descending=descending, stable=True)
    torch.testing.assert_close(v.cpu(), ev, equal_nan=True, rtol=0, atol=0)
    # Always stable (as CUDA's sort): the indices of ties are CPU's stable ones.
    torch.testing.assert_close(i.cpu(), ei, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_sort_matches_cpu_stable_sort(dtype, ties):
    for s, shape in enumerate(SHAPES):
        x = keys(shape, dtype, ties, seed=s)
        for descending in (False, True):
            expect_sorted_like_cpu(x, -1, descending, stable=True)
    x = keys((700, 64), dtype, ties, seed=99)  # along a dimension that is not the last
    expect_sorted_like_cpu(x, 0, True, stable=None)
    expect_sorted_like_cpu(x, 0, False, stable=False)
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8])
def test_argsort_and_msort(dtype):
    x = keys((1500, 3), dtype, ties=True, seed=3)
    for descending in (False, True):
        torch.testing.assert_close(
            torch.argsort(dev(x), dim=0, descending=descending, stable=True).cpu(),
            torch.argsort(x, dim=0, descending=descending, stable=True),
        )
    torch.testing.assert_close(torch.msort(dev(x)).cpu(), torch.msort(x), equal_nan=True)
    assert_native()


def test_topk_across_tiles():
    x = torch.randperm(3 * 5000, generator=torch.Generator().manual_seed(5)).reshape(3, 5000)
    for dtype in (torch.float32, torch.int64):
        y = x.to(dtype)
        for k in (1, 511, 512, 513, 5000):
            for largest in (True, False):
                v, i = torch.topk(dev(y), k, largest=largest)
                ev, ei = torch.topk(y, k, largest=largest)
                torch.testing.assert_close(v.cpu(), ev)
                torch.testing.assert_close(i.cpu(), ei)  # distinct keys: one answer
    # With ties and NaN the values are still CPU's, and the indices point at them.
    t = keys((4, 2000), torch.float32, ties=True, seed=6)
    v, i = torch.topk(dev(t), 700, largest=True)
    torch.testing.assert_close(v.cpu(), torch.topk(t, 700).values, equal_nan=True)
    torch.testing.assert_close(t.gather(1, i.cpu()), v.cpu(), equal_nan=True)
    assert_native()


# A small k of a long slice goes through the preselection of each tile's first k (kernels/
# sort.h TopkTileOp): the answer is the first k of the stable sort, ties to the lower index.
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8])
@pytest.mark.parametrize("ties", [False, True])
def test_topk_of_a_small_k_is_the_stable_sorts_first_k(dtype, ties):
    x = keys((3, 5000 + 37), dtype, ties=ties, seed=9)
    for k in (1, 50, 256):
        for largest in (True, False):
            ev, ei = torch.sort(x, dim=-1, descending=largest, stable=True)
            v, i = torch.topk(dev(x), k, largest=largest)
            assert torch.equal(i.cpu(), ei[:, :k])
            torch.testing.assert_close(v.cpu(), ev[:, :k], equal_nan=True, rtol=0, atol=0)
    # along a dimension that is not the last, and into out=
    t = dev(x.t())
    v = torch.empty(0, dtype=dtype, device="accel")
    i = torch.empty(0, dtype=torch.long, device="accel")
    torch.topk(t, 50, dim=0, out=(v, i))
    ev, ei = torch.sort(x.t(), dim=0, descending=True, stable=True)
    assert torch.equal(i.cpu(), ei[:50])
    torch.testing.assert_close(v.cpu(), ev[:50], equal_nan=True, rtol=0, atol=0)
    assert_native()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8, torch.bool])
def test_unique_across_tiles(dtype):
    g = torch.Generator().manual_seed(8)
    x = torch.randint(0, 300, (5003,), generator=g).to(dtype)
    got = torch.unique(dev(x), return_inverse=True, return_counts=True)
    for a, b in zip(got, torch.unique(x, return_inverse=True, return_counts=True)):
        torch.testing.assert_close(a.cpu(), b)
    runs = torch.repeat_interleave(x, 3)
    got = torch.unique_consecutive(dev(runs), return_inverse=True, return_counts=True)
    for a, b in zip(got, torch.unique_consecutive(runs, return_inverse=True, return_counts=True)):
        torch.testing.assert_close(a.cpu(), b)
    assert_native()


def test_searchsorted_with_an_argsort_sorter():
    g = torch.Generator().manual_seed(9)
    boundaries = torch.randint(0, 1000, (2, 3000), generator=g).float()
    values = torch.rand(2, 400, generator=g) * 1000
    sorter = torch.argsort(dev(boundaries), dim=-1, stable=True)
    for right in (False, True):
        torch.testing.assert_close(
            torch.searchsorted(dev(boundaries), dev(values), right=right, sorter=sorter).cpu(),
            torch.searchsorted(
                boundaries, values, right=right, sorter=boundaries.argsort(dim=-1, stable=True)
            ),
        )
    assert_native()


def expect_selected_like_cpu(got, expected, x, dim, keepdim):
    """Values exactly CPU's; the indices (free among equal values, as CPU's quickselect)
    select those values from x."""
    v, i = got[0].cpu(), got[1].cpu()
    torch.testing.assert_close(v, expected[0], equal_nan=True, rtol=0, atol=0)
    assert i.dtype == torch.int64 and i.shape == expected[1].shape
    if x.dim() == 0:
        assert i.item() == 0
        return
    if not keepdim:
        v, i = v.unsqueeze(dim), i.unsqueeze(dim)
    torch.testing.assert_close(x.gather(dim, i), v, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8])
def test_kthvalue_median_nanmedian(dtype):
    x = keys((7, 600), dtype, ties=True, seed=11)
    if dtype in FLOATS:
        x[2] = float("nan")  # a slice all NaN: median NaN, nanmedian NaN
        x[3, 1:] = float("nan")  # one number among NaNs
    for t, dim in [(x, 1), (x.t(), 0), (x[:, :9], -1), (x[:, 4], 0), (x[0, 0], 0)]:
        a = dev(t) if dim != 0 or t.dim() < 2 else dev(t.t().contiguous()).t()  # strided
        n = t.shape[dim] if t.dim() else 1
        for keepdim in (False, True):
            for k in sorted({1, (n + 1) // 2, n}):
                expect_selected_like_cpu(
                    torch.kthvalue(a, k, dim, keepdim),
                    torch.kthvalue(t, k, dim, keepdim),
                    t,
                    dim,
                    keepdim,
                )
            for op in (torch.median, torch.nanmedian):
                expect_selected_like_cpu(op(a, dim, keepdim), op(t, dim, keepdim), t, dim, keepdim)
        for op in (torch.median, torch.nanmedian):
            torch.testing.assert_close(op(a).cpu(), op(t), equal_nan=True, rtol=0, atol=0)
    v = torch.empty(0, dtype=dtype, device="accel")
    i = torch.empty(0, dtype=torch.int64, device="accel")
    torch.kthvalue(dev(x), 5, 1, out=(v, i))
    expect_selected_like_cpu((v, i), torch.kthvalue(x, 5, 1), x, 1, False)
    torch.median(dev(x), 0, True, out=(v, i))
    expect_selected_like_cpu((v, i), torch.median(x, 0, True), x, 0, True)
    torch.ops.aten.nanmedian.out(dev(x), out=v)
    torch.testing.assert_close(v.cpu(), torch.nanmedian(x), equal_nan=True, rtol=0, atol=0)
    assert_native()


def test_kthvalue_median_backward_and_bad_input():
    x = torch.randn(4, 9, generator=torch.Generator().manual_seed(12))  # distinct: one answer
    for op in (
        lambda t: torch.kthvalue(t, 3, 1).values,
        lambda t: torch.median(t, 0, keepdim=True).values,
        lambda t: torch.nanmedian(t, 1).values,
        torch.median,
    ):
        grads = []
        for d in (torch.clone, dev):
            a = d(x).requires_grad_()
            (op(a) * 3).sum().backward()
            grads.append(a.grad.cpu())
        torch.testing.assert_close(grads[1], grads[0])
    assert_native()
    a = dev(x)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        torch.kthvalue(a, 10, 1)
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        torch.median(a[:, :0], 1)
    assert torch.median(a[:0]).isnan().item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_mode(dtype):
    # Few distinct values: many ties in count; the smallest most frequent value wins, as on CPU
    # (no NaN: CPU's order of NaNs is its sort's).
    g = torch.Generator().manual_seed(13)
    x = torch.randint(0, 4, (6, 300), generator=g).to(dtype)
    x[1] = x[1, 0]  # one value only
    for t, dim in [(x, 1), (x.t(), 0), (x[:, :5], -1), (x[:, 7], 0), (x[0, 0], 0)]:
        a = dev(t) if t.dim() < 2 or dim != 0 else dev(t.t().contiguous()).t()
        for keepdim in (False, True):
            expect_selected_like_cpu(
                torch.mode(a, dim, keepdim), torch.mode(t, dim, keepdim), t, dim, keepdim
            )
    v = torch.empty(0, dtype=dtype, device="accel")
    i = torch.empty(0, dtype=torch.int64, device="accel")
    torch.mode(dev(x), 0, out=(v, i))
    expect_selected_like_cpu((v, i), torch.mode(x, 0), x, 0, False)
    assert_native()
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        torch.mode(dev(x)[:, :0], 1)
