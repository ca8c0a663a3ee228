"""scaled_dot_product_attention at inference on accel: the fused forward (the overrideable
backend, chosen for few query rows) against the math path (forced with sdpa_kernel(MATH)) and
CPU, per call over shapes from decoding to short prefills, where the fused path's limits come
from; then greedy generation of a small grouped-query Llama, tokens per second with each path
and on CPU. Every side is timed in turns, in one run.

    python benchmarks/attention.py [--out DIR] [--repeats N] [--tokens N]
"""

import argparse
import copy

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import torch_accel
from common import medians_in_turns, write_result

# (batch, query heads, key/value heads, query rows, keys, head dim)
SHAPES = [
    (1, 8, 2, 1, 64, 32),
    (1, 8, 2, 1, 512, 32),
    (4, 8, 8, 1, 256, 64),
    (1, 8, 2, 4, 64, 32),
    (1, 8, 2, 8, 128, 32),
    (1, 8, 2, 16, 16, 32),
    (1, 8, 2, 32, 32, 32),
    (1, 8, 2, 64, 64, 32),
]
INNER = 10  # calls per timed sample


def calls_on_accel(fn, backend, inner):
    """`inner` calls under one sdpa_kernel context (whose entry costs as much as a call)."""

    def run():
        with sdpa_kernel(backend):
            for _ in range(inner):
                fn()
        torch.accel.synchronize()

    return run


def bench_shapes(repeats: int) -> list:
    rows = []
    for b, hq, hkv, lq, lk, d in SHAPES:
        g = torch.Generator().manual_seed(0)
        q, k, v = (
            torch.randn(b, h, n, d, generator=g) for h, n in ((hq, lq), (hkv, lk), (hkv, lk))
        )
        aq, ak, av = (t.to("accel") for t in (q, k, v))
        causal = lq == lk
        kw = dict(is_causal=causal, enable_gqa=True)
        with torch.no_grad():
            fused_chosen = (
                torch._fused_sdp_choice(aq, ak, av, **kw) == SDPBackend.OVERRIDEABLE.value
            )
            with sdpa_kernel(SDPBackend.OVERRIDEABLE):  # the fused forward, even past its limits
                fused = lambda: F.scaled_dot_product_attention(aq, ak, av, **kw)  # noqa: E731
                got = fused()
            want = F.scaled_dot_product_attention(q, k, v, **kw)
            torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
            cpu = lambda: F.scaled_dot_product_attention(q, k, v, **kw)  # noqa: E731
            t = medians_in_turns(
                {
                    "cpu": calls_on_accel(cpu, SDPBackend.FLASH_ATTENTION, INNER),
                    "fused": calls_on_accel(fused, SDPBackend.OVERRIDEABLE, INNER),
                    "math": calls_on_accel(fused, SDPBackend.MATH, INNER),
                },
                repeats,
            )
            t = {name: seconds / INNER for name, seconds in t.items()}
        row = {
            "shape": [b, hq, hkv, lq, lk, d],
            "causal": causal,
            "default_backend": "fused" if fused_chosen else "math",
            "cpu_us": t["cpu"] * 1e6,
            "accel_fused_us": t["fused"] * 1e6,
            "accel_math_us": t["math"] * 1e6,
            "fused_speedup_vs_math": t["math"] / t["fused"],
        }
        print(
            f"b{b} heads {hq}/{hkv} rows {lq} keys {lk} dim {d}: "
            f"fused {row['accel_fused_us']:.0f} us, math {row['accel_math_us']:.0f} us, "
            f"cpu {row['cpu_us']:.0f} us "
            f"(default: {row['default_backend']})"
        )
        rows.append(row)
    return rows


def bench_generation(repeats: int, tokens: int) -> dict:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=1000,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    cpu = LlamaForCausalLM(cfg).eval()
    accel = copy.deepcopy(cpu).to("accel")
    ids = torch.randint(0, cfg.vocab_size, (1, 16), generator=torch.Generator().manual_seed(0))
    outputs = {}

    def generate(model, device, name, backend=None):
        def run():
            with torch.no_grad():
                kw = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False)
                if backend is None:
                    out = model.generate(ids.to(device), **kw)
                else:
                    with sdpa_kernel(backend):
                        out = model.generate(ids.to(device), **kw)
            outputs[name] = out.cpu()

        return run

    t = medians_in_turns(
        {
            "cpu": generate(cpu, "cpu", "cpu"),
            "fused": generate(accel, "accel", "fused"),
            "math": generate(accel, "accel", "math", SDPBackend.MATH),
        },
        repeats,
        warmup=1,
    )
    assert torch.equal(outputs["fused"], outputs["cpu"]) and torch.equal(
        outputs["math"], outputs["cpu"]
    )
    result = {
        "model": "Llama, hidden 256, 4 layers, 8 query / 2 key-value heads, prompt 16, greedy",
        "new_tokens": tokens,
        "cpu_tokens_per_s": tokens / t["cpu"],
        "accel_fused_tokens_per_s": tokens / t["fused"],
        "accel_math_tokens_per_s": tokens / t["math"],
        "fused_speedup_vs_math": t["math"] / t["fused"],
        "accel_vs_cpu": t["cpu"] / t["fused"],
        "same_tokens_as_cpu": True,
    }
    print(
        f"generation: accel fused {result['accel_fused_tokens_per_s']:.0f} tok/s, math "
        f"{result['accel_math_tokens_per_s']:.0f}, cpu {result['cpu_tokens_per_s']:.0f}"
    )
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--tokens", type=int, default=48)
    args = parser.parse_args()
    result = {
        "benchmark": "scaled_dot_product_attention at inference: fused forward vs math path",
        "driver": torch_accel.driver(),
        "per_call": bench_shapes(args.repeats),
        "generation": bench_generation(max(3, args.repeats // 3), args.tokens),
    }
    write_result(args.out, "attention", result)


if __name__ == "__main__":
    main()
