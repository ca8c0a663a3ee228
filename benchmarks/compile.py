"""torch.compile vs eager on accel, same run: a 4M-element pointwise chain, an RMSNorm + SwiGLU
MLP block (forward + backward) and the LoRA training step of examples/lora_finetune.py, each
compiled with Inductor's Python wrapper (the default) and with cpp_wrapper=True (host driver).
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


def compile_with(wrapper: str, fn):
    """torch.compile(fn) with Inductor's Python or C++ wrapper (distinct backends, so Dynamo
    keeps a cache entry for each)."""
    return torch.compile(fn, options={"cpp_wrapper": wrapper == "cpp"})


def timed(name, eager, compiled: dict, repeats):
    """Compiles each variant (first call, timed once), then medians of eager and each."""
    result = {}
    for key, fn in compiled.items():
        t0 = time.perf_counter()
        fn()
        torch.accel.synchronize()
        result[f"{key}_compile_s"] = time.perf_counter() - t0
    timings = {"eager": eager, **compiled}
    line = []
    for key, fn in timings.items():
        torch_accel.reset_fallback_counts()
        seconds = median_seconds(fn, repeats, sync=torch.accel.synchronize)
        result[f"{key}_ms"] = seconds * 1e3
        result[f"{key}_fallback_calls"] = sum(torch_accel.fallback_counts().values())
        if key != "eager":
            result[f"{key}_speedup"] = result["eager_ms"] / result[f"{key}_ms"]
            line.append(
                f"{key} {result[f'{key}_ms']:.2f} ms -> {result[f'{key}_speedup']:.2f}x "
                f"(compile {result[f'{key}_compile_s']:.1f} s)"
            )
    print(f"{name}: eager {result['eager_ms']:.2f} ms; " + "; ".join(line))
    return result


def bench_pointwise(repeats):
    x = torch.randn(4 << 20, device="accel")
    y = torch.randn(4 << 20, device="accel")
    compiled = {w: compile_with(w, pointwise_chain) for w in WRAPPERS}
    return timed(
        "pointwise chain, 4M float32",
        lambda: pointwise_chain(x, y),
        {k: (lambda f=f: f(x, y)) for k, f in _named(compiled).items()},
        repeats,
    )


def bench_block(repeats):
    torch.manual_seed(0)
    block = RMSNormSwiGLU(256, 688).to("accel")
    x = torch.randn(8, 128, 256, device="accel", requires_grad=True)

    def step(module):
        def run():
            module(x).sum().backward()
            x.grad = None
            block.zero_grad(set_to_none=True)

        return run

    compiled = {w: step(compile_with(w, block)) for w in WRAPPERS}
    return timed(
        "RMSNorm + SwiGLU block fwd+bwd (8x128x256, ffn 688)",
        step(block),
        _named(compiled),
        repeats,
    )


def bench_lora(repeats):
    import lora_finetune as lf

    args = lf.parse_args([])
    tokenizer, data = lf.permutation_task(args.seq_len, 8 * args.batch_size, args.seed)
    model = lf.build_model(args, tokenizer.vocab_size).to("accel")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr)
    batch = data[: args.batch_size].to("accel")

    def step(m, optimizer_step):
        def run():
            loss = m(batch, batch).loss
            loss.backward()
            optimizer_step()
            opt.zero_grad(set_to_none=True)

        return run

    # Compiled: the model (forward and backward graphs) and AdamW's step, as PyTorch's
    # training recipe compiles them.
    forward = lambda ids, labels: model(input_ids=ids, labels=labels)  # noqa: E731
    compiled = {w: step(compile_with(w, forward), compile_with(w, opt.step)) for w in WRAPPERS}
    return timed(
        "LoRA training step (lora_finetune.py defaults; model + AdamW step)",
        step(forward, opt.step),
        _named(compiled),
        repeats,
    )


# cpp_wrapper=True is the host driver's (the CUDA driver compiles Triton with the Python one)
WRAPPERS = ["python", "cpp"] if torch_accel.driver() == "host" else ["python"]


def _named(by_wrapper: dict) -> dict:
    return {"compiled" if w == "python" else "cpp_wrapper": f for w, f in by_wrapper.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-lora", action="store_true")
    args = parser.parse_args()
    inductor_config.fx_graph_cache = False  # measure a real compile
    torch_accel.set_fallback_mode("silent")
    result = {
        "benchmark": "torch.compile vs eager on accel",
        "driver": torch_accel.driver(),
        "pointwise_4M": bench_pointwise(args.repeats),
        "rmsnorm_swiglu_fwd_bwd": bench_block(args.repeats),
    }
    if not args.no_lora:
        result["lora_step"] = bench_lora(max(3, args.repeats // 3))
    write_result(args.out, "compile", result)


if __name__ == "__main__":
    main()
