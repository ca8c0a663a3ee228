"""scaled_dot_product_attention on accel: the fused forward that inference with few query rows
(decoding, short prompts) takes through the overrideable backend, against CPU in float64; which
backend each call gets; the math path for everything else; bad input to the fused op."""

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

MATH, OVERRIDEABLE = SDPBackend.MATH.value, SDPBackend.OVERRIDEABLE.value
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
}


def qkv(b, hq, hkv, lq, lk, d, dv=None, dtype=torch.float32, q_rows_outer=False):
    """Query [b, hq, lq, d] (transposed from [b, lq, hq, d], as a model's projections give it,
    when q_rows_outer), key and value [b, hkv, lk, d / dv]."""
    g = torch.Generator().manual_seed(b * 1000 + hq * 100 + lq * 10 + lk)
    if q_rows_outer:
        q = torch.randn(b, lq, hq, d, generator=g, dtype=dtype).transpose(1, 2)
    else:
        q = torch.randn(b, hq, lq, d, generator=g, dtype=dtype)
    k = torch.randn(b, hkv, lk, d, generator=g, dtype=dtype)
    v = torch.randn(b, hkv, lk, dv or d, generator=g, dtype=dtype)
    return q, k, v


def reference(q, k, v, mask=None, **kw):
    """CPU's math path in float64."""
    if mask is not None and mask.dtype != torch.bool:
        mask = mask.double()
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask, **kw)


def on_accel(*ts):
    return [None if t is None else t.to("accel") for t in ts]


CASES = {
    "decode": dict(shape=(2, 8, 8, 1, 40, 32)),
    "decode, grouped heads": dict(shape=(2, 8, 2, 1, 40, 32), enable_gqa=True),
    "bool mask, grouped heads": dict(shape=(2, 8, 2, 3, 40, 64), mask="bool", enable_gqa=True),
    "float mask broadcast, value dim": dict(shape=(2, 4, 4, 5, 7, 16), dv=24, mask="float"),
    "causal, square": dict(shape=(2, 4, 4, 6, 6, 16), is_causal=True),
    "causal, more keys": dict(shape=(2, 4, 4, 6, 9, 16), is_causal=True),
    "causal, more queries": dict(shape=(1, 4, 4, 9, 6, 16), is_causal=True),
    "transposed query, scale": dict(shape=(2, 4, 4, 3, 10, 32), q_rows_outer=True, scale=0.3),
    "long keys": dict(shape=(1, 4, 2, 2, 300, 64), enable_gqa=True),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("case", list(CASES))
def test_fused_forward_matches_cpu(case, dtype, strict):
    c = dict(CASES[case])
    b, hq, hkv, lq, lk, d = c.pop("shape")
    q, k, v = qkv(b, hq, hkv, lq, lk, d, c.pop("dv", None), dtype, c.pop("q_rows_outer", False))
    kind = c.pop("mask", None)
    mask = None
    if kind == "bool":
        mask = torch.rand(b, 1, lq, lk, generator=torch.Generator().manual_seed(1)) > 0.3
    elif kind == "float":
        mask = torch.randn(lq, lk, generator=torch.Generator().manual_seed(2)).to(dtype)
    aq, ak, av, amask = on_accel(q, k, v, mask)
    with torch.no_grad():
        assert torch._fused_sdp_choice(aq, ak, av, amask, **c) == OVERRIDEABLE
        got = F.scaled_dot_product_attention(aq, ak, av, amask, **c)
    want = reference(q, k, v, mask, **c)
    torch.testing.assert_close(got.cpu().double(), want, **TOL[dtype])
    # The output keeps the query's layout, as alloc_with_matching_layout gives it.
    assert got.stride() == torch.empty_like(aq[..., :1].expand(*got.shape)).stride()


def test_rows_that_see_no_key_give_zeros_as_the_math_path(strict):
    q, k, v = qkv(2, 4, 4, 3, 10, 32)
    mask = torch.rand(2, 1, 3, 10, generator=torch.Generator().manual_seed(3)) > 0.5
    mask[0, :, 1] = False  # row 1 of batch 0 sees no key
    mask[1, :, :, 0] = True  # the rest see at least one
    aq, ak, av, amask = on_accel(q, k, v, mask)
    with torch.no_grad():
        got = F.scaled_dot_product_attention(aq, ak, av, amask).cpu()
    want = reference(q, k, v, mask)
    torch.testing.assert_close(got.double(), want, **TOL[torch.float32])
    assert torch.equal(got[0, :, 1], torch.zeros(4, 32))


def test_fused_op_returns_log_sum_exp():
    q, k, v = qkv(1, 2, 2, 3, 12, 16)
    scale = 16**-0.5
    out, lse, *_ = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(
        *on_accel(q, k, v), None, 0.0, True
    )
    scores = (q.double() @ k.double().transpose(-1, -2)) * scale
    scores = scores.masked_fill(~torch.ones(3, 12, dtype=torch.bool).tril(), float("-inf"))
    torch.testing.assert_close(lse.cpu().double(), scores.logsumexp(-1), rtol=1e-5, atol=1e-5)
    assert lse.dtype == torch.float32 and out.shape == (1, 2, 3, 16)


def test_choice_keeps_the_math_path_for_training_dropout_and_long_blocks():
    q, k, v = on_accel(*qkv(1, 4, 4, 1, 32, 16))
    with torch.no_grad():
        assert torch._fused_sdp_choice(q, k, v) == OVERRIDEABLE
        assert torch._fused_sdp_choice(q, k, v, dropout_p=0.1) == MATH
        long_q, long_k, long_v = on_accel(*qkv(1, 4, 4, 64, 64, 16))
        assert torch._fused_sdp_choice(long_q, long_k, long_v) == MATH
        with sdpa_kernel(SDPBackend.MATH):
            assert torch._fused_sdp_choice(q, k, v) == MATH
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # a torch.cuda user's restriction
            assert torch._fused_sdp_choice(q, k, v) == OVERRIDEABLE
    q.requires_grad_(True)
    assert torch._fused_sdp_choice(q, k, v) == MATH
    with torch.no_grad():
        assert torch._fused_sdp_choice(q, k, v) == OVERRIDEABLE
    gq, gk, gv = on_accel(*qkv(1, 8, 2, 1, 32, 16))
    with torch.no_grad():  # heads that differ need enable_gqa, as on CPU
        assert torch._fused_sdp_choice(gq, gk, gv) == MATH
        assert torch._fused_sdp_choice(gq, gk, gv, enable_gqa=True) == OVERRIDEABLE


def test_training_takes_the_math_path_with_cpu_gradients(strict):
    q, k, v = qkv(2, 4, 2, 1, 20, 16)
    grads = []
    for dev in ("cpu", "accel"):
        leaves = [t.detach().to(dev).requires_grad_(True) for t in (q, k, v)]
        out = F.scaled_dot_product_attention(*leaves, enable_gqa=True)
        (out * out).sum().backward()
        grads.append([t.grad.cpu() for t in leaves])
    for want, got in zip(*grads):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_grouped_heads_without_enable_gqa_raise_cpus_error():
    q, k, v = qkv(1, 8, 2, 1, 16, 16)
    with torch.no_grad():
        with pytest.raises(RuntimeError) as cpu_error:
            F.scaled_dot_product_attention(q, k, v)
        with pytest.raises(RuntimeError) as accel_error:
            F.scaled_dot_product_attention(*on_accel(q, k, v))
    assert str(accel_error.value).split("\n")[0] == str(cpu_error.value).split("\n")[0]


def test_bad_input_to_the_fused_op_raises_and_the_device_stays_usable():
    op = torch.ops.aten._scaled_dot_product_fused_attention_overrideable
    q, k, v = on_accel(*qkv(1, 4, 4, 2, 8, 16))
    with pytest.raises(NotImplementedError, match="no dropout"):
        op(q, k, v, None, 0.5)
    with pytest.raises(RuntimeError, match="multiple of key/value heads"):
        op(q, k[:, :3], v[:, :3])
    with pytest.raises(RuntimeError, match="does not broadcast"):
        op(q, k, v, torch.zeros(3, 8, device="accel"))
    with pytest.raises(RuntimeError, match="one floating dtype"):
        op(q, k.double(), v)
    out = op(q, k, v)[0]
    want = reference(*[t.cpu() for t in (q, k, v)])
    torch.testing.assert_close(out.cpu().double(), want, **TOL[torch.float32])


def test_compiled_inference_takes_the_math_path_that_inductor_fuses(strict):
    """Under torch.compile the choice sees fake tensors and answers math: Inductor fuses that
    path, and its C++ wrapper could not call the fused op (its integer outputs)."""
    from torch._inductor.utils import run_and_get_code

    q, k, v = qkv(2, 4, 2, 1, 24, 16)
    fn = torch.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True) * 2)
    with torch.no_grad():
        got, code = run_and_get_code(fn, *on_accel(q, k, v))
    assert "_scaled_dot_product_fused_attention_overrideable" not in "\n".join(code)
    want = 2 * reference(q, k, v, enable_gqa=True)
    torch.testing.assert_close(got.cpu().double(), want, **TOL[torch.float32])
