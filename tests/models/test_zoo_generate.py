"""Greedy generation with the KV cache gives exactly CPU's tokens (decoder-only zoo models),
with no op through the CPU fallback."""

import pytest
import torch
from zoo import VOCAB, FallbackMode, build

import torch_accel

NEW_TOKENS = 12


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
    with FallbackMode("error"):
        got = greedy(model, prompt, "accel")
    assert got.shape == (2, 5 + NEW_TOKENS)
    assert torch.equal(got, want)
    assert torch_accel.fallback_counts() == {}
