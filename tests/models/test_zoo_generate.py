"""Generation on decoder-only zoo models (learned, rotary and ALiBi positions, a linear-attention
recurrent state), with no op through the CPU fallback: greedy and beam search (KV cache) give
exactly CPU's tokens; sampling (top-k/top-p/temperature) runs."""

import pytest
import torch
from zoo import VOCAB, FallbackMode, build

import torch_accel

NEW_TOKENS = 12
MODELS = ["gpt2", "llama", "bloom", "qwen3_next"]


def generate(model, prompt, device, **kwargs):
    model = model.to(device)
    with torch.no_grad():
        out = model.generate(
            input_ids=prompt.to(device),
            attention_mask=torch.ones_like(prompt).to(device),
            max_new_tokens=NEW_TOKENS,
            min_new_tokens=NEW_TOKENS,  # eos (token 0) must not end one run early
            use_cache=True,
            **kwargs,
        )
    return out.cpu()


def prompt():
    return torch.randint(1, VOCAB, (2, 5), generator=torch.Generator().manual_seed(2))


@pytest.mark.parametrize(
    "mode", [dict(do_sample=False), dict(do_sample=False, num_beams=3)], ids=["greedy", "beam"]
)
@pytest.mark.parametrize("name", MODELS)
def test_generate_matches_cpu(name, mode):
    model = build(name).eval()
    want = generate(model, prompt(), "cpu", **mode)
    torch_accel.reset_fallback_counts()
    with FallbackMode("error"):
        got = generate(model, prompt(), "accel", **mode)
    assert got.shape == (2, 5 + NEW_TOKENS)
    assert torch.equal(got, want)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("name", MODELS)
def test_sampling_runs(name):
    model = build(name).eval()
    torch_accel.reset_fallback_counts()
    with FallbackMode("error"):
        # top_k=1 leaves one candidate per step: sampling must then give greedy's tokens.
        one = generate(model, prompt(), "accel", do_sample=True, top_k=1)
        torch.manual_seed(0)
        mixed = generate(
            model, prompt(), "accel", do_sample=True, top_k=10, top_p=0.9, temperature=0.8
        )
    assert torch.equal(one, generate(model, prompt(), "cpu", do_sample=False))
    assert mixed.shape == (2, 5 + NEW_TOKENS)
    assert torch.equal(mixed[:, :5], prompt())
    assert int(mixed.min()) >= 0 and int(mixed.max()) < VOCAB
    assert torch_accel.fallback_counts() == {}


def test_static_cache_generation_with_reduce_overhead_replays_graphs_and_matches_cpu():
    from torch_accel._inductor import graph_trees

    if not graph_trees.routed():
        pytest.skip("this torch's Inductor lacks what accel graphs replace")
    model = build("llama").eval()
    want = generate(model, prompt(), "cpu", do_sample=False)
    model = model.to("accel")
    model.forward = torch.compile(model.forward, mode="reduce-overhead")
    before = graph_trees.stats()
    with FallbackMode("error"):
        for _ in range(2):  # the second generation replays the first one's recordings
            got = generate(model, prompt(), "accel", do_sample=False, cache_implementation="static")
            assert torch.equal(got, want)
    counts = {k: v - before[k] for k, v in graph_trees.stats().items()}
    # One recording per forward signature (the prompt's, a decoding step's); every later
    # decoding step replays.
    assert counts["recorded"] <= 2 and counts["replayed"] >= NEW_TOKENS
