"""Graph replay vs eager on accel, side by side in one run (CPU eager as the reference):

- a chain of 200 tiny ops (16 elements): launch-bound, so a replay's saving is the dispatch
  of every op (goal: graphed >= 5x accel eager);
- the LoRA training step of examples/lora_finetune.py (forward, backward, gradient clipping,
  AdamW) captured whole (goal on the host driver: >= 2x accel eager, and at or under CPU
  eager's step time), with the example's defaults (batch 16 x 32 tokens) and with the
  smaller batch of the issue's measurement (4 x 64); and the same step with the model and
  AdamW's step compiled by torch.compile (default mode) and then captured, which replays
  Inductor's fused kernels instead of eager's.

    python benchmarks/graphs.py [--out DIR] [--steps N] [--ops N]
"""

import argparse
import copy
import os
import statistics
import sys
import time

import torch

import torch_accel
from common import median_seconds, medians_in_blocks, medians_in_turns, write_result

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
)
import lora_finetune as lf  # noqa: E402


def chain(x, ops):
    for i in range(ops // 4):
        x = ((x + 1.0) * 0.5).sin() - 0.1 * i
    return x


def capture(fn):
    g = torch.accel.Graph()
    side = torch.accel.Stream()
    side.wait_stream(torch.accel.current_stream())
    with torch.accel.stream(side):
        fn()  # warm-up: lazy initialisation stays out of the capture
    torch.accel.current_stream().wait_stream(side)
    with torch.accel.graph(g):
        out = fn()
    return g, out


def bench_chain(ops: int) -> dict:
    cpu = torch.rand(16)
    acc = cpu.to("accel")
    g, out = capture(lambda: chain(acc, ops))
    sync = torch.accel.synchronize
    t_cpu = median_seconds(lambda: chain(cpu, ops), repeats=15, inner=20)
    t_eager = median_seconds(lambda: chain(acc, ops), repeats=15, inner=20, sync=sync)
    t_graph = median_seconds(g.replay, repeats=15, inner=20, sync=sync)
    torch.testing.assert_close(out.cpu(), chain(cpu, ops))
    print(
        f"{ops}-op chain: cpu eager {t_cpu * 1e6:.0f} us, accel eager {t_eager * 1e6:.0f} us, "
        f"accel graph {t_graph * 1e6:.0f} us: graph {t_eager / t_graph:.1f}x accel eager"
    )
    return {
        "ops": ops,
        "elements": 16,
        "cpu_eager_us": t_cpu * 1e6,
        "accel_eager_us": t_eager * 1e6,
        "accel_graph_us": t_graph * 1e6,
        "graph_speedup_vs_accel_eager": t_eager / t_graph,
        "graph_speedup_vs_cpu_eager": t_cpu / t_graph,
        "goal": "graph_speedup_vs_accel_eager >= 5",
    }


def lora_setup(device, capturable, argv=(), compiled=False):
    args = lf.parse_args(list(argv))
    tokenizer, data = lf.permutation_task(args.seq_len, 8 * args.batch_size, args.seed)
    torch.manual_seed(0)
    model = lf.build_model(args, tokenizer.vocab_size).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, capturable=capturable)
    batches = [data[i * args.batch_size : (i + 1) * args.batch_size] for i in range(8)]
    static = batches[0].to(device)
    forward = lambda ids: model(input_ids=ids, labels=ids).loss  # noqa: E731
    opt_step = opt.step
    if compiled:
        mode = compiled if isinstance(compiled, str) else "default"
        forward = torch.compile(forward, mode=mode)
        opt_step = torch.compile(opt.step, mode=mode)

    def step():
        loss = forward(static)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt_step()
        opt.zero_grad(set_to_none=False)  # the graph keeps the gradient buffers
        return loss

    return step, static, batches


def bench_lora(steps: int, argv=()) -> dict:
    """CPU eager, accel eager and the graph, in settled blocks (common.medians_in_blocks) and
    in strict turns (one step each per round), both in one run."""
    cpu_step, cpu_static, batches = lora_setup("cpu", False, argv)
    eager_step, eager_static, _ = lora_setup("accel", False, argv)
    graph_step, graph_static, _ = lora_setup("accel", True, argv)
    compiled_step, compiled_static, _ = lora_setup("accel", True, argv, compiled=True)
    for _ in range(3):
        cpu_step()
        eager_step()
    g, loss = capture(graph_step)
    gc, _ = capture(compiled_step)  # the capture's warm-up step compiles
    sync = torch.accel.synchronize
    runs = {
        "cpu": (cpu_step, cpu_static, lambda: None),
        "eager": (eager_step, eager_static, sync),
        "graph": (g.replay, graph_static, sync),
        "compiled_graph": (gc.replay, compiled_static, sync),
    }
    fed = {name: 0 for name in runs}

    def feeder(name):
        static, wait = runs[name][1], runs[name][2]

        def feed():  # a new batch, into the step's input
            static.copy_(batches[fed[name] % len(batches)])
            fed[name] += 1
            wait()

        return feed

    def timed(name):
        run, wait = runs[name][0], runs[name][2]
        return lambda: (run(), wait())

    steps_by_name = {name: timed(name) for name in runs}
    feeds = {name: feeder(name) for name in runs}
    blocks = medians_in_blocks(steps_by_name, steps, block=3, settle_s=0.1, prep=feeds)
    turns = {name: [] for name in runs}
    for _ in range(steps):
        for name in runs:
            feeds[name]()
            t0 = time.perf_counter()
            steps_by_name[name]()
            turns[name].append(time.perf_counter() - t0)
    names = ("cpu", "eager", "graph", "compiled_graph")
    t_cpu, t_eager, t_graph, t_cgraph = (blocks[n] for n in names)
    u_cpu, u_eager, u_graph, u_cgraph = (statistics.median(turns[n]) for n in names)
    tokens = graph_static.numel()
    print(
        f"LoRA step {' '.join(argv) or '(defaults)'}: cpu eager {t_cpu * 1e3:.1f} ms, "
        f"accel eager {t_eager * 1e3:.1f} ms, "
        f"accel graph {t_graph * 1e3:.1f} ms: graph {t_eager / t_graph:.2f}x accel eager, "
        f"{t_cpu / t_graph:.2f}x cpu eager; in turns {u_eager / u_graph:.2f}x / "
        f"{u_cpu / u_graph:.2f}x (loss {loss.item():.3f}); compiled graph "
        f"{t_cgraph * 1e3:.1f} ms: {t_eager / t_cgraph:.2f}x accel eager, in turns "
        f"{u_eager / u_cgraph:.2f}x"
    )
    return {
        "config": " ".join(argv) or "examples/lora_finetune.py defaults",
        "cpu_eager_ms": t_cpu * 1e3,
        "accel_eager_ms": t_eager * 1e3,
        "accel_graph_ms": t_graph * 1e3,
        "graph_speedup_vs_accel_eager": t_eager / t_graph,
        "graph_speedup_vs_cpu_eager": t_cpu / t_graph,
        "accel_compiled_graph_ms": t_cgraph * 1e3,
        "compiled_graph_speedup_vs_accel_eager": t_eager / t_cgraph,
        "compiled_graph_speedup_vs_cpu_eager": t_cpu / t_cgraph,
        "in_turns": {
            "cpu_eager_ms": u_cpu * 1e3,
            "accel_eager_ms": u_eager * 1e3,
            "accel_graph_ms": u_graph * 1e3,
            "accel_compiled_graph_ms": u_cgraph * 1e3,
            "graph_speedup_vs_accel_eager": u_eager / u_graph,
            "graph_speedup_vs_cpu_eager": u_cpu / u_graph,
            "compiled_graph_speedup_vs_accel_eager": u_eager / u_cgraph,
        },
        "tokens_per_step": tokens,
        "accel_graph_tokens_per_s": tokens / t_graph,
        "goal": "graph_speedup_vs_accel_eager >= 2 and accel_graph_ms <= cpu_eager_ms",
    }


def bench_reduce_overhead(steps: int) -> dict:
    """torch.compile(mode="reduce-overhead") against the default mode and eager, all on accel:
    a launch-bound stack (8 x Linear + GELU + LayerNorm on 16 x 64, inference), and the LoRA
    training step with its model and AdamW's step compiled."""
    from torch_accel._inductor import graph_trees

    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.LayerNorm(64)]
    cpu_stack = torch.nn.Sequential(*layers)
    stack = copy.deepcopy(cpu_stack).to("accel")
    x = torch.randn(16, 64)
    xa = x.to("accel")
    sync = torch.accel.synchronize
    before = graph_trees.stats()
    with torch.no_grad():
        fns = {
            "eager": stack,
            "default": torch.compile(stack),
            "reduce_overhead": torch.compile(stack, mode="reduce-overhead"),
        }
        for fn in fns.values():
            for _ in range(3):
                out = fn(xa)
            torch.testing.assert_close(out.cpu(), cpu_stack(x), rtol=1e-4, atol=1e-4)
        del out
        stack_us = {
            name: median_seconds(lambda fn=fn: fn(xa), repeats=15, inner=50, sync=sync) * 1e6
            for name, fn in fns.items()
        }

    losses, timed = {}, {}
    for mode in ("default", "reduce-overhead"):
        step, _, _ = lora_setup("accel", True, compiled=mode)
        losses[mode] = [step().item() for _ in range(3)]
        timed[mode] = lambda step=step: (step(), sync())
    # In turns, so that both modes see the same machine.
    lora = {k: v * 1e3 for k, v in medians_in_turns(timed, repeats=2 * steps).items()}
    torch.testing.assert_close(
        torch.tensor(losses["reduce-overhead"]), torch.tensor(losses["default"]), rtol=1e-4, atol=0
    )
    counts = {k: v - before[k] for k, v in graph_trees.stats().items()}
    print(
        f"reduce-overhead: 8-layer stack {stack_us['reduce_overhead']:.0f} us against default "
        f"{stack_us['default']:.0f} and eager {stack_us['eager']:.0f}; LoRA step "
        f"{lora['reduce-overhead']:.1f} ms against default {lora['default']:.1f} ms ({counts})"
    )
    return {
        "stack_us": stack_us,
        "stack_speedup_vs_default": stack_us["default"] / stack_us["reduce_overhead"],
        "stack_speedup_vs_eager": stack_us["eager"] / stack_us["reduce_overhead"],
        "lora_step_ms": lora,
        "lora_speedup_vs_default": lora["default"] / lora["reduce-overhead"],
        "graph_counts": counts,
    }


def load_note() -> str:
    try:
        load = os.getloadavg()
        return (
            f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores"
        )
    except OSError:
        return "unknown"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--ops", type=int, default=200)
    args = parser.parse_args()
    result = {
        "benchmark": "graph replay vs eager (torch.accel.graph)",
        "driver": torch_accel.driver(),
        "machine_load_at_start": load_note(),
        "chain": bench_chain(args.ops),
        "lora_step": bench_lora(args.steps),
        "lora_step_small_batch": bench_lora(args.steps, ["--batch-size", "4", "--seq-len", "64"]),
        "reduce_overhead": bench_reduce_overhead(args.steps),
    }
    result["machine_load_at_end"] = load_note()
    write_result(args.out, "graphs", result)


if __name__ == "__main__":
    main()
