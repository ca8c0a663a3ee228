"""Mid-sized ops, the sizes a small model's training step is made of (16K to 1M elements, a
ResNet block's GEMM and batch-norm statistics): accel vs CPU eager on the host driver, timed in
turns in one run (medians of calls of 20 back to back, then synchronised). At these sizes the
host's thread hand-offs and cache locality, not the arithmetic, decide the time.
Ratio = accel time / CPU time (below 1: accel faster).

    python benchmarks/mid_size_ops.py [--out DIR] [--repeats N]
"""

import argparse
import statistics

import torch
import torch.nn.functional as F

import torch_accel
from common import medians_in_turns, write_result

CALLS = 20  # per timed sample: back to back, as in a training step


def cases():
    def vec(n):
        return lambda: [torch.randn(n), torch.randn(n)]

    out = {}
    for n in (16384, 65536, 262144, 1 << 20):
        out[f"add {n}"] = (lambda a, b: a + b, vec(n))
        out[f"sum {n}"] = (lambda a, b: a.sum(), vec(n))
    out["var_mean (0,2,3) of 8x32x16x16"] = (
        lambda x: torch.var_mean(x, (0, 2, 3)),
        lambda: [torch.randn(8, 32, 16, 16)],
    )
    out["sum (0,2,3) of 8x32x16x16"] = (
        lambda x: x.sum((0, 2, 3)),
        lambda: [torch.randn(8, 32, 16, 16)],
    )
    out["mm 32x288 @ 288x2048"] = (
        lambda a, b: a @ b,
        lambda: [torch.randn(32, 288), torch.randn(288, 2048)],
    )
    out["bmm 8x(32x288 @ 288x256)"] = (
        torch.bmm,
        lambda: [torch.randn(8, 32, 288), torch.randn(8, 288, 256)],
    )
    out["unfold 3x3 of 8x32x16x16"] = (
        lambda x: F.unfold(x, 3, padding=1),
        lambda: [torch.randn(8, 32, 16, 16)],
    )
    return out


def timed(fn, args, sync):
    def run():
        for _ in range(CALLS):
            fn(*args)
        sync()

    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch_accel.reset_fallback_counts()
    rows = {}
    for name, (fn, make) in cases().items():
        cpu_in = make()
        acc_in = [t.to("accel") for t in cpu_in]
        t = medians_in_turns(
            {
                "accel": timed(fn, acc_in, torch.accel.synchronize),
                "cpu": timed(fn, cpu_in, lambda: None),
            },
            args.repeats,
        )
        a, c = t["accel"] / CALLS, t["cpu"] / CALLS
        rows[name] = {"accel_us": a * 1e6, "cpu_us": c * 1e6, "accel_time_vs_cpu": a / c}
        print(f"{name:<34} accel {a * 1e6:8.1f} us  cpu {c * 1e6:8.1f} us  ratio {a / c:5.2f}")
    write_result(
        args.out,
        "mid_size_ops",
        {
            "benchmark": "mid-sized ops, accel vs CPU eager",
            "driver": torch_accel.driver(),
            "threads": torch.get_num_threads(),
            "ops": rows,
            "median_accel_time_vs_cpu": statistics.median(
                r["accel_time_vs_cpu"] for r in rows.values()
            ),
            "accel_fallback_calls": sum(torch_accel.fallback_counts().values()),
        },
    )


if __name__ == "__main__":
    main()
