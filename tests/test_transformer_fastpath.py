"""PyTorch's transformer fast path on accel, against CPU: nn.MultiheadAttention (self-attention,
eval, no grad) and nn.TransformerEncoderLayer / nn.TransformerEncoder in eval mode, which call
the fused ops _native_multi_head_attention and _transformer_encoder_layer_fwd on PrivateUse1
as on CUDA; the encoder with a padding mask runs its layers on nested tensors. All native:
no CPU fallback. Also nested tensors themselves on accel (made, moved, padded; their math
through the counted fallback)."""

import copy

import pytest
import torch
import torch.nn as nn

import torch_accel

B, T, D, HEADS = 3, 10, 32, 4
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.bfloat16: dict(rtol=3e-2, atol=3e-2),
}


def batch(dtype=torch.float32):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(B, T, D, generator=g).to(dtype)
    padding = torch.zeros(B, T, dtype=torch.bool)
    padding[1, 7:] = True
    padding[2, 3:] = True
    return x, padding


def on_accel(v):
    return v.to("accel") if isinstance(v, torch.Tensor) else v


MASKS = {
    "none": lambda p: {},
    "padding": lambda p: {"src_key_padding_mask": p},
    "causal float": lambda p: {"src_mask": nn.Transformer.generate_square_subsequent_mask(T)},
    "causal bool": lambda p: {"src_mask": torch.triu(torch.ones(T, T, dtype=torch.bool), 1)},
}


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("mask", list(MASKS))
def test_encoder_layer_matches_cpu(strict, norm_first, activation, mask):
    x, padding = batch()
    layer = nn.TransformerEncoderLayer(
        D, HEADS, 64, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    kw = MASKS[mask](padding)
    with torch.no_grad():
        want = layer(x, **kw)
        got = copy.deepcopy(layer).to("accel")(
            x.to("accel"), **{k: on_accel(v) for k, v in kw.items()}
        )
    torch.testing.assert_close(got.cpu(), want, **TOL[torch.float32])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_with_padding_runs_its_layers_on_nested_tensors(strict, dtype, norm_first):
    x, padding = batch(dtype)
    layer = nn.TransformerEncoderLayer(
        D, HEADS, 64, dropout=0.0, batch_first=True, norm_first=norm_first
    )
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=not norm_first).to(dtype).eval()
    with torch.no_grad():
        want = encoder(x, src_key_padding_mask=padding)
        got = copy.deepcopy(encoder).to("accel")(
            x.to("accel"), src_key_padding_mask=padding.to("accel")
        )
    # Padded positions come back as zeros on both sides.
    torch.testing.assert_close(got.cpu(), want, **TOL[dtype])
    assert (got.cpu()[padding] == 0).all() == (want[padding] == 0).all()


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"key_padding_mask": True},
        {"attn_mask": "bool"},
        {"attn_mask": "float"},
        {"need_weights": True},
        {"need_weights": True, "average_attn_weights": False, "key_padding_mask": True},
    ],
    ids=["plain", "padding", "bool mask", "float mask", "weights", "per-head weights"],
)
def test_multihead_self_attention_fast_path_matches_cpu(strict, kw):
    x, padding = batch()
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    args = dict(kw)
    args.setdefault("need_weights", False)
    if args.pop("key_padding_mask", False):
        args["key_padding_mask"] = padding
    if "attn_mask" in args:
        args["attn_mask"] = causal if args["attn_mask"] == "bool" else causal.float() * -1e9
    mha = nn.MultiheadAttention(D, HEADS, batch_first=True).eval()
    with torch.no_grad():
        want = mha(x, x, x, **args)
        xa = x.to("accel")
        on = {k: on_accel(v) for k, v in args.items()}
        got = copy.deepcopy(mha).to("accel")(xa, xa, xa, **on)
    torch.testing.assert_close(got[0].cpu(), want[0], **TOL[torch.float32])
    if args["need_weights"]:
        torch.testing.assert_close(got[1].cpu(), want[1], **TOL[torch.float32])
    else:
        assert got[1] is None and want[1] is None


@pytest.mark.parametrize("mask_type", [0, 1, 2, None])
@pytest.mark.parametrize("dim", [3, 2, None])
def test_masked_softmax_matches_cpu(strict, mask_type, dim):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 3, 5, 5, generator=g)
    mask = {
        0: torch.triu(torch.ones(5, 5, dtype=torch.bool), 1),
        1: torch.tensor([[False] * 3 + [True] * 2, [False] * 5]),
        2: torch.rand(2, 3, 5, 5, generator=g) > 0.7,
        None: torch.rand(2, 3, 5, 5, generator=g) > 0.7,
    }[mask_type]
    want = torch._masked_softmax(x, mask, dim, mask_type)
    got = torch._masked_softmax(x.to("accel"), mask.to("accel"), dim, mask_type)
    torch.testing.assert_close(got.cpu(), want, equal_nan=True)


@pytest.mark.parametrize(
    "case",
    [
        lambda x: (x, torch.zeros(2, 3, 5, 5)),  # not boolean
        lambda x: (x, torch.zeros(2, 3, 5, dtype=torch.bool)),  # type 2 of another shape
        lambda x: (x[0], torch.zeros(5, 5, dtype=torch.bool)),  # 3-D input: type 2
    ],
    ids=["float mask", "shape", "3-d input"],
)
def test_masked_softmax_bad_masks_raise_cpus_error(case):
    x = torch.randn(2, 3, 5, 5)
    inp, mask = case(x)
    with pytest.raises(RuntimeError) as cpu:
        torch._masked_softmax(inp, mask, 3, 2)
    with pytest.raises(RuntimeError) as acc:
        torch._masked_softmax(inp.to("accel"), mask.to("accel"), 3, 2)
    assert str(acc.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    assert (torch.ones(3, device="accel") * 2).cpu().tolist() == [2.0] * 3


def test_nested_tensor_from_mask_matches_cpu(strict):
    x, padding = batch()
    keep = padding.logical_not()
    want = torch._nested_tensor_from_mask(x, keep)
    got = torch._nested_tensor_from_mask(x.to("accel"), keep.to("accel"))
    assert got.is_nested and got.device.type == "accel"
    for g, w in zip(got.unbind(), want.unbind()):
        torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0)
    torch.testing.assert_close(got.to_padded_tensor(0.0).cpu(), want.to_padded_tensor(0.0))
    for m in (keep, torch.tensor([[True, False, True] + [False] * (T - 3)] * B)):
        assert torch._nested_tensor_from_mask_left_aligned(
            x.to("accel"), m.to("accel")
        ) == torch._nested_tensor_from_mask_left_aligned(x, m)


@pytest.mark.parametrize(
    "case",
    [
        lambda x, m: (x, m.float(), True),
        lambda x, m: (x, m[:, :-1], True),
        lambda x, m: (x[0], m, True),
        lambda x, m: (x, torch.tensor([[True, False, True] + [False] * (T - 3)] * B), True),
    ],
    ids=["float mask", "mask size", "2-d input", "not left-aligned"],
)
def test_nested_tensor_from_mask_bad_input_raises_cpus_error(case):
    x, padding = batch()
    inp, mask, check = case(x, padding.logical_not())
    with pytest.raises(RuntimeError) as cpu:
        torch._nested_tensor_from_mask(inp, mask, check)
    with pytest.raises(RuntimeError) as acc:
        torch._nested_tensor_from_mask(inp.to("accel"), mask.to("accel"), check)
    assert str(acc.value).splitlines()[0] == str(cpu.value).splitlines()[0]


def test_nested_tensors_move_and_compute_through_the_counted_fallback():
    parts = [torch.randn(2, 4), torch.randn(5, 4), torch.randn(1, 4)]
    cpu = torch.nested.nested_tensor(parts)
    acc = cpu.to("accel")
    assert acc.is_nested and acc.device.type == "accel"
    made = torch.nested.nested_tensor([p.to("accel") for p in parts])
    torch.testing.assert_close(made.to_padded_tensor(0.0).cpu(), cpu.to_padded_tensor(0.0))
    torch_accel.reset_fallback_counts()
    torch.testing.assert_close(acc.to_padded_tensor(-1.0).cpu(), cpu.to_padded_tensor(-1.0))
    assert torch_accel.fallback_counts() == {}  # padding is native
    for got, want in zip((acc * 2 + acc).unbind(), (cpu * 2 + cpu).unbind()):
        torch.testing.assert_close(got.cpu(), want)
    assert sum(torch_accel.fallback_counts().values()) > 0  # nested math: the CPU's kernels
    back = acc.cpu()
    assert back.is_nested and all(torch.equal(a, b) for a, b in zip(back.unbind(), parts))
