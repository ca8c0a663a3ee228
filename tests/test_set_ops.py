"""Native isin, unique and unique_consecutive against CPU: dtypes, invert, inverse and counts,
out=, non-contiguous and empty inputs."""

import pytest
import torch

import torch_accel


def no_fallback():
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_cpu(dtype, invert):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 20, (6, 7), generator=g).to(dtype)
    tests = torch.randint(0, 20, (5,), generator=g).to(dtype)
    got = torch.isin(x.to("accel"), tests.to("accel"), invert=invert)
    assert got.dtype == torch.bool and got.device.type == "accel"
    torch.testing.assert_close(got.cpu(), torch.isin(x, tests, invert=invert))
    no_fallback()


def test_isin_non_contiguous_empty_and_out():
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 9, (5, 8), generator=g).t()
    tests = torch.randint(0, 9, (3, 2), generator=g)[:, 0]
    assert not x.is_contiguous()
    torch.testing.assert_close(
        torch.isin(x.to("accel"), tests.to("accel")).cpu(), torch.isin(x, tests)
    )
    empty = torch.empty(0, dtype=torch.long)
    torch.testing.assert_close(
        torch.isin(x.to("accel"), empty.to("accel")).cpu(), torch.isin(x, empty)
    )
    torch.testing.assert_close(
        torch.isin(empty.to("accel"), tests.to("accel")).cpu(), torch.isin(empty, tests)
    )
    out = torch.empty(x.shape, dtype=torch.bool, device="accel")
    torch.isin(x.to("accel"), tests.to("accel"), out=out)
    torch.testing.assert_close(out.cpu(), torch.isin(x, tests))
    no_fallback()


def test_isin_mixed_dtypes_promote_like_cpu():
    x = torch.tensor([1, 2, 3, 4])
    tests = torch.tensor([2.0, 3.5, 4.0])
    torch.testing.assert_close(
        torch.isin(x.to("accel"), tests.to("accel")).cpu(), torch.isin(x, tests)
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("consecutive", [False, True])
def test_unique_inverse_and_counts(dtype, consecutive):
    g = torch.Generator().manual_seed(2)
    x = torch.randint(0, 6, (7, 5), generator=g)
    x = (x > 2 if dtype == torch.bool else x.to(dtype)).t()  # non-contiguous
    op = torch.unique_consecutive if consecutive else torch.unique
    for inverse, counts in [(False, False), (True, False), (False, True), (True, True)]:
        got = op(x.to("accel"), return_inverse=inverse, return_counts=counts)
        want = op(x, return_inverse=inverse, return_counts=counts)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert len(got) == len(want)
        for g_, w_ in zip(got, want):
            assert g_.device.type == "accel" and g_.dtype == w_.dtype
            torch.testing.assert_close(g_.cpu(), w_)
    no_fallback()


def test_unique_scalar_empty_and_sorted_false():
    for x in (torch.tensor(3.0), torch.empty(0), torch.tensor([2, 2, 1, 3, 1])):
        for op in (torch.unique, torch.unique_consecutive):
            got = op(x.to("accel"), return_inverse=True, return_counts=True)
            want = op(x, return_inverse=True, return_counts=True)
            for g_, w_ in zip(got, want):
                torch.testing.assert_close(g_.cpu(), w_)
    # sorted=False sorts anyway, as on CUDA: the same set of values.
    x = torch.tensor([5, 1, 5, 3])
    assert torch.unique(x.to("accel"), sorted=False).cpu().tolist() == [1, 3, 5]
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("consecutive", [False, True])
def test_unique_along_dim(dtype, consecutive):
    """unique / unique_consecutive with dim: slices compared whole, sorted lexicographically
    (ties between equal leading entries broken by the later ones), in CPU's output layout."""
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 2, (6, 3, 4), generator=g)
    x = torch.cat([x, x[:2]], 0)  # repeated slices along dim 0
    x = x > 0 if dtype == torch.bool else x.to(dtype)
    op = torch.unique_consecutive if consecutive else torch.unique
    for dim in (0, 1, -1):
        got = op(x.to("accel"), dim=dim, return_inverse=True, return_counts=True)
        want = op(x, dim=dim, return_inverse=True, return_counts=True)
        for g_, w_ in zip(got, want):
            assert g_.stride() == w_.stride()
            torch.testing.assert_close(g_.cpu(), w_)
    rows = torch.tensor([[1, 9], [0, 5], [1, 2], [0, 5], [1, 2]]).to(dtype)
    torch.testing.assert_close(
        torch.unique(rows.to("accel"), dim=0).cpu(), torch.unique(rows, dim=0)
    )
    no_fallback()


def test_unique_along_dim_nan_and_empty():
    nan = float("nan")
    x = torch.tensor([[1.0, nan], [1.0, nan], [0.0, 2.0], [0.0, 2.0]])
    got = torch.unique(x.to("accel"), dim=0, return_counts=True)
    want = torch.unique(x, dim=0, return_counts=True)
    for g_, w_ in zip(got, want):  # rows with NaN equal nothing
        torch.testing.assert_close(g_.cpu(), w_, equal_nan=True)
    assert torch.unique(torch.empty(0, 3).to("accel"), dim=0).shape == (0, 3)
    with pytest.raises(RuntimeError, match="0 sized dimensions, and they aren't selected"):
        torch.unique(torch.empty(0, 3).to("accel"), dim=1)
    with pytest.raises(RuntimeError, match="Number of zero sized dimensions is more than one"):
        torch.unique_consecutive(torch.empty(0, 0).to("accel"), dim=0)
    no_fallback()
