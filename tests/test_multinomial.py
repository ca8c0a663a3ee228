"""Native multinomial (with and without replacement): shapes, the sampled frequencies against
the weights, zero weights never drawn, the generator's reproducibility, and CPU's errors on
bad weights."""

import pytest
import torch

import torch_accel


def no_fallback():
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_frequencies_follow_the_weights(dtype):
    w = torch.tensor([0.1, 0.0, 0.3, 0.6])
    rows = w.to(dtype).expand(20000, 4).to("accel")
    got = torch.multinomial(rows, 1)
    assert got.shape == (20000, 1) and got.dtype == torch.int64 and got.device.type == "accel"
    freq = torch.bincount(got.cpu().reshape(-1), minlength=4).double() / 20000
    assert freq[1] == 0  # a zero weight is never drawn
    # 20000 draws: the standard error of a frequency is at most 0.0035; 5 of them.
    torch.testing.assert_close(freq, w.double(), rtol=0, atol=0.018)
    no_fallback()


def test_without_replacement_draws_distinct_categories():
    g = torch.Generator("accel").manual_seed(3)
    w = torch.rand(50, 30, generator=torch.Generator().manual_seed(0)).t()  # non-contiguous
    got = torch.multinomial(w.to("accel"), 12, generator=g).cpu()
    assert got.shape == (30, 12)
    assert all(len(set(row.tolist())) == 12 for row in got)
    assert int(got.min()) >= 0 and int(got.max()) < 50
    again = torch.multinomial(w.to("accel"), 12, generator=torch.Generator("accel").manual_seed(3))
    assert torch.equal(again.cpu(), got)  # the same generator state, the same draws
    vec = torch.multinomial(torch.tensor([0.0, 1.0, 0.0], device="accel"), 1)
    assert vec.shape == (1,) and vec.item() == 1
    out = torch.empty(0, dtype=torch.long, device="accel")
    torch.multinomial(torch.tensor([0.0, 0.0, 2.0], device="accel"), 1, out=out)
    assert out.cpu().tolist() == [2]
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_with_replacement_frequencies_and_reproducibility(dtype):
    # Zero weights first, in the middle and last: none of them is ever drawn.
    w = torch.tensor([0.0, 0.2, 0.0, 0.5, 0.3, 0.0])
    rows = torch.stack([w, w.flip(0) * 7]).to(dtype).t().contiguous().t()  # non-contiguous
    g = torch.Generator("accel").manual_seed(11)
    got = torch.multinomial(rows.to("accel"), 20000, replacement=True, generator=g)
    assert got.shape == (2, 20000) and got.dtype == torch.int64 and got.device.type == "accel"
    for row, weights in zip(got.cpu(), (w, w.flip(0))):
        freq = torch.bincount(row, minlength=6).double() / 20000
        assert bool((freq[weights == 0] == 0).all())
        # The standard error of a frequency is at most 0.0035 here; 5 of them.
        torch.testing.assert_close(freq, weights.double(), rtol=0, atol=0.018)
    again = torch.multinomial(
        rows.to("accel"),
        20000,
        replacement=True,
        generator=torch.Generator("accel").manual_seed(11),
    )
    assert torch.equal(again.cpu(), got.cpu())
    out = torch.empty(0, dtype=torch.long, device="accel")
    torch.multinomial(torch.tensor([0.0, 3.0], device="accel"), 5, True, out=out)
    assert out.cpu().tolist() == [1] * 5
    no_fallback()


@pytest.mark.parametrize(
    "args",
    [
        (torch.tensor([0.5, -0.1]), 1),
        (torch.tensor([0.0, 0.0]), 1),
        (torch.tensor([1.0, float("nan")]), 1),
        (torch.tensor([1.0, float("inf")]), 1),
        (torch.tensor([1.0, 1.0]), 3),
        (torch.ones(2, 2, 2), 1),
        (torch.tensor([1.0, 1.0]), 0),
    ],
    ids=["negative", "all-zero", "nan", "inf", "too-many", "3-d", "zero-samples"],
)
def test_bad_weights_raise_like_cpu(args):
    w, n = args
    with pytest.raises(RuntimeError) as cpu_err:
        torch.multinomial(w, n)
    with pytest.raises(RuntimeError, match=str(cpu_err.value)[:20].replace("(", r"\(")):
        torch.multinomial(w.to("accel"), n)
    assert torch.multinomial(torch.tensor([0.0, 1.0], device="accel"), 1).item() == 1
