"""LoRA training step of examples/lora_finetune.py: median step time and tokens/s on accel and
on the reference device (CPU eager; torch.cuda when a GPU is present), same model, same run.

    python benchmarks/lora_step.py [--out DIR] [--steps N] [--bf16]
"""

import argparse
import os
import statistics
import sys
import time

import torch

import torch_accel
from common import write_result

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
)
import lora_finetune as lf  # noqa: E402


def step_times(device: torch.device, argv, steps: int) -> list:
    args = lf.parse_args(argv)
    tokenizer, data = lf.permutation_task(args.seq_len, 8 * args.batch_size, args.seed)
    model = lf.build_model(args, tokenizer.vocab_size).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr)
    batch = data[: args.batch_size].to(device)
    dtype = lf.autocast_dtype(args)
    sync = {"accel": torch.accel.synchronize, "cuda": torch.cuda.synchronize}.get(
        device.type, lambda: None
    )
    times = []
    for i in range(steps + 3):  # 3 warm-up steps
        sync()
        t0 = time.perf_counter()
        with lf.autocast(device, dtype):
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        if i >= 3:
            times.append(time.perf_counter() - t0)
    return times, batch.numel()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print where an accel step spends its host time, by aten op",
    )
    args = parser.parse_args()
    argv = ["--bf16"] if args.bf16 else []
    reference = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    torch_accel.reset_fallback_counts()
    acc, tokens = step_times(torch.device("accel"), argv, args.steps)
    fallback = sum(torch_accel.fallback_counts().values())
    ref, _ = step_times(reference, argv, args.steps)
    t_acc, t_ref = statistics.median(acc), statistics.median(ref)
    result = {
        "benchmark": "LoRA training step (examples/lora_finetune.py defaults)",
        "driver": torch_accel.driver(),
        "reference": reference.type,
        "bf16": args.bf16,
        "accel_step_ms": t_acc * 1e3,
        "reference_step_ms": t_ref * 1e3,
        "accel_tokens_per_s": tokens / t_acc,
        "reference_tokens_per_s": tokens / t_ref,
        "accel_speed_vs_reference": t_ref / t_acc,
        "accel_fallback_calls": fallback,
    }
    print(
        f"step: accel {t_acc * 1e3:.1f} ms ({tokens / t_acc:,.0f} tok/s), {reference.type} "
        f"{t_ref * 1e3:.1f} ms ({tokens / t_ref:,.0f} tok/s): accel at {t_ref / t_acc:.2f}x; "
        f"fallback calls {fallback}"
    )
    if args.profile:
        result["profile"] = profile_step(argv)
    write_result(args.out, "lora_step" + ("_bf16" if args.bf16 else ""), result)


def profile_step(argv) -> dict:
    """Host time of one accel step by aten op (self time), with the share of the step spent
    waiting for the device (synchronising calls) and in allocation."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step_times(torch.device("accel"), argv, 3)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    top = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:12]
    rows = {e.key: round(100 * e.self_cpu_time_total / total, 1) for e in top}
    sync_ops = ("aten::_local_scalar_dense", "aten::item")

    def share(pred):
        return round(100 * sum(e.self_cpu_time_total for e in events if pred(e.key)) / total, 1)

    summary = {
        "top_ops_percent": rows,
        "synchronising_percent": share(lambda k: k in sync_ops),
        "allocation_percent": share(lambda k: k.startswith("aten::empty")),
        "aten_ops_percent": share(lambda k: k.startswith("aten::")),
    }
    print("host time by aten op (self, % of profiled time):")
    for name, pct in rows.items():
        print(f"  {name:<44} {pct:5.1f}%")
    print(
        f"synchronising {summary['synchronising_percent']}%, allocation "
        f"{summary['allocation_percent']}%, all aten ops {summary['aten_ops_percent']}%"
    )
    return summary


if __name__ == "__main__":
    main()
