"""Native isin against CPU: dtypes, invert, out=, non-contiguous and empty inputs."""

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
