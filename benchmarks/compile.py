"""torch.compile vs eager on accel, same run: a 4M-element pointwise chain, an RMSNorm + SwiGLU
MLP block (forward + backward) and the LoRA training step of examples/lora_finetune.py.
Medians; the ratio is eager time / compiled time (above 1: compiled is faster).

    python benchmarks/compile.py [--out DIR] [--repeats N] [--no-lora]
"""
import argparse
import os
import sys
import time

import torch
import torch._inductor.config as inductor_config

import torch_accel
from common import median_seconds, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))


def pointwise_chain(x, y):
    return ((x * 2 + 1).sin() * y - x) * 0.5 + y


class RMSNormSwiGLU(torch.nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


def timed_pair(name, eager, compiled, repeats):
    """Compiles (first call, timed once), then medians of eager and compiled."""
    t0 = time.perf_counter()
    compiled()
    torch.accel.synchronize()
    compile_s = time.perf_counter() - t0
    torch_accel.reset_fallback_counts()
    t_eager = median_seconds(eager, repeats, sync=torch.accel.synchronize)
    eager_fallback = sum(torch_accel.fallback_counts().values())
    torch_accel.reset_fallback_counts()
    t_comp = median_seconds(compiled, repeats, sync=torch.accel.synchronize)
    comp_fallback = sum(torch_accel.fallback_counts().values())
    print(f"{name}: eager {t_eager * 1e3:.2f} ms, compiled {t_comp * 1e3:.2f} ms "
          f"-> {t_eager / t_comp:.2f}x (compile {compile_s:.1f} s; fallback calls "
          f"eager {eager_fallback}, compiled {comp_fallback})")
    return {"eager_ms": t_eager * 1e3, "compiled_ms": t_comp * 1e3, "speedup": t_eager / t_comp,
            "compile_s": compile_s, "eager_fallback_calls": eager_fallback,
            "compiled_fallback_calls": comp_fallback}


def bench_pointwise(repeats):
    x = torch.randn(4 << 20, device="accel")
    y = torch.randn(4 << 20, device="accel")
    compiled = torch.compile(pointwise_chain)
    return timed_pair("pointwise chain, 4M float32", lambda: pointwise_chain(x, y),
                      lambda: compiled(x, y), repeats)


def bench_block(repeats):
    torch.manual_seed(0)
    block = RMSNormSwiGLU(256, 688).to("accel")
    compiled_block = torch.compile(block)
    x = torch.randn(8, 128, 256, device="accel", requires_grad=True)

    def step(module):
        def run():
            module(x).sum().backward()
            x.grad = None
            block.zero_grad(set_to_none=True)
        return run

    return timed_pair("RMSNorm + SwiGLU block fwd+bwd (8x128x256, ffn 688)", step(block),
                      step(compiled_block), repeats)


def bench_lora(repeats):
    import lora_finetune as lf

    args = lf.parse_args([])
    tokenizer, data = lf.permutation_task(args.seq_len, 8 * args.batch_size, args.seed)
    model = lf.build_model(args, tokenizer.vocab_size).to("accel")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr)
    batch = data[: args.batch_size].to("accel")
    compiled_model = torch.compile(model)

    def step(m):
        def run():
            loss = m(input_ids=batch, labels=batch).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return run

    return timed_pair("LoRA training step (lora_finetune.py defaults)", step(model),
                      step(compiled_model), repeats)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-lora", action="store_true")
    args = parser.parse_args()
    inductor_config.fx_graph_cache = False  # measure a real compile
    torch_accel.set_fallback_mode("silent")
    result = {"benchmark": "torch.compile vs eager on accel", "driver": torch_accel.driver(),
              "pointwise_4M": bench_pointwise(args.repeats),
              "rmsnorm_swiglu_fwd_bwd": bench_block(args.repeats)}
    if not args.no_lora:
        result["lora_step"] = bench_lora(max(3, args.repeats // 3))
    write_result(args.out, "compile", result)


if __name__ == "__main__":
    main()
