"""Greedy generation with the KV cache gives exactly CPU's tokens (decoder-only zoo models)."""

import pytest
import torch
from zoo import VOCAB, build

import torch_accel

NEW_TOKENS = 12
# The ops greedy generate still runs through the CPU fallback on accel.
GENERATE_FALLBACK = {"aten::isin.Tensor_Tensor_out"}


def greedy(model, prompt, device):
    model = model.to(device)
    with torch.no_grad():
        out = model.generate(
            input_ids=prompt.to(device),
            attention_mask=torch.ones_like(prompt).to(device),
            max_new_tokens=NEW_TOKENS,
            min_new_tokens=NEW_TOKENS,  # eos (token 0) must not end one run early
            do_sample=False,
            use_cache=True,
        )
    return out.cpu()


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_greedy_generate_matches_cpu(name):
    model = build(name).eval()
    prompt = torch.randint(1, VOCAB, (2, 5), generator=torch.Generator().manual_seed(2))
    want = greedy(model, prompt, "cpu")
    torch_accel.reset_fallback_counts()
    saved = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("silent")
    try:
        got = greedy(model, prompt, "accel")
    finally:
        torch_accel.set_fallback_mode(saved)
    assert got.shape == (2, 5 + NEW_TOKENS)
    assert torch.equal(got, want)
    assert set(torch_accel.fallback_counts()) <= GENERATE_FALLBACK, torch_accel.fallback_counts()
