"""F.embedding_bag / nn.EmbeddingBag in modes sum, mean and max (csrc/aten/embedding_bag_ops.cpp)
against CPU: offsets with empty bags, include_last_offset, padding_idx, per_sample_weights,
scale_grad_by_freq, 2-D input, the output, max mode's indices and the gradients of weight and
per_sample_weights, float32 and bfloat16, with no fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}
INDICES = torch.tensor([1, 2, 4, 3, 4, 3, 2, 9, 3])
OFFSETS = torch.tensor([0, 4, 4, 6])  # bag 1 is empty


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize(
    "kw",
    [
        dict(mode="sum"),
        dict(mode="mean"),
        dict(mode="sum", padding_idx=3),
        dict(mode="mean", padding_idx=3, scale_grad_by_freq=True),
        dict(mode="sum", include_last_offset=True),
        dict(mode="sum", weighted=True),
        dict(mode="sum", weighted=True, padding_idx=4, scale_grad_by_freq=True),
        dict(mode="max"),
        dict(mode="max", padding_idx=3, include_last_offset=True),
    ],
    ids=str,
)
def test_embedding_bag_and_gradients_match_cpu(kw, dtype):
    kw = dict(kw)
    weighted = kw.pop("weighted", False)
    offsets = torch.cat([OFFSETS, torch.tensor([9])]) if kw.get("include_last_offset") else OFFSETS
    w = torch.randn(10, 5).to(dtype)
    psw = torch.randn(INDICES.numel()).to(dtype) if weighted else None
    wc, wa = w.clone().requires_grad_(), w.to("accel").requires_grad_()
    pc = psw.clone().requires_grad_() if weighted else None
    pa = psw.to("accel").requires_grad_() if weighted else None
    # CPU's scale_grad_by_freq divides by the wrong counts; the reference is what the docs say
    # and CUDA does: the unscaled gradient over each index's count in the batch.
    freq = kw.pop("scale_grad_by_freq", False)
    out_cpu = F.embedding_bag(INDICES, wc, offsets, per_sample_weights=pc, **kw)
    torch_accel.reset_fallback_counts()
    out = F.embedding_bag(
        INDICES.to("accel"),
        wa,
        offsets.to("accel"),
        per_sample_weights=pa,
        scale_grad_by_freq=freq,
        **kw,
    )
    g = torch.randn(out_cpu.shape).to(dtype)
    out_cpu.backward(g)
    out.backward(g.to("accel"))
    assert torch_accel.fallback_counts() == {}
    torch.testing.assert_close(out.detach().cpu(), out_cpu.detach(), **TOL[dtype])
    expected = wc.grad
    if freq:
        counted = INDICES[INDICES != kw.get("padding_idx", -1)]
        counts = torch.bincount(counted, minlength=10).clamp_min(1)
        expected = (wc.grad.float() / counts.unsqueeze(1)).to(dtype)
    torch.testing.assert_close(wa.grad.cpu(), expected, **TOL[dtype])
    if weighted:
        torch.testing.assert_close(pa.grad.cpu(), pc.grad, **TOL[dtype])


def test_embedding_bag_module_2d_input_int32_and_max_mode():
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(20, 6, mode="mean")
    acc = torch.nn.EmbeddingBag(20, 6, mode="mean").to("accel")
    acc.load_state_dict(bag.state_dict())
    x = torch.randint(0, 20, (4, 7), dtype=torch.int32)  # fixed-length bags, int32 indices
    torch_accel.reset_fallback_counts()
    torch.testing.assert_close(acc(x.to("accel")).cpu(), bag(x))
    assert torch_accel.fallback_counts() == {}
    # Mode max: the bags' maxima and which index reached them (0 for an empty bag, as CPU).
    w = torch.randn(10, 3)
    w[4, 1] = w[1, 1]  # a tie in bag 0: the first index wins
    for ids, off in (
        (INDICES, OFFSETS),
        (x.reshape(-1) % 10, torch.arange(0, 28, 7, dtype=torch.int32)),
    ):
        args = (False, 2, False, None, False, 3)  # scale_grad_by_freq, mode, ..., padding_idx
        got = torch._embedding_bag(w.to("accel"), ids.to("accel"), off.to("accel"), *args)
        want = torch._embedding_bag(w, ids, off, *args)
        for k in (0, 3):  # output, max_indices; offset2bag and bag_size may be int64 here
            torch.testing.assert_close(got[k].cpu(), want[k])
        for k in (1, 2):
            torch.testing.assert_close(got[k].cpu(), want[k], check_dtype=False)
    assert torch_accel.fallback_counts() == {}


def test_embedding_bag_bad_input():
    w = torch.randn(10, 3, device="accel")
    with pytest.raises(IndexError):
        F.embedding_bag(torch.tensor([1, 12], device="accel"), w, torch.tensor([0], device="accel"))
    with pytest.raises(RuntimeError, match="per_sample_weights"):
        torch.ops.aten._embedding_bag(
            w,
            INDICES.to("accel"),
            OFFSETS.to("accel"),
            False,
            1,
            False,
            torch.ones(9, device="accel"),
        )
    # The device stays usable.
    torch.testing.assert_close((w + 1).cpu(), w.cpu() + 1)
