"""Elementwise ops at 16M elements (float32 and bfloat16): accel next to CPU ATen in the same
run. The ratio is CPU time over accel time (>= 1: accel is as fast or faster).

    python benchmarks/elementwise.py [--out DIR]
"""

import argparse

import torch
import torch.nn.functional as F

import torch_accel  # noqa: F401
from common import median_seconds, write_result

OPS = {
    "add": lambda a, b: a + b,
    "mul_scalar": lambda a, b: a * 0.5,
    "exp": lambda a, b: torch.exp(a),
    "sigmoid": lambda a, b: torch.sigmoid(a),
    "gelu": lambda a, b: F.gelu(a),
    "silu": lambda a, b: F.silu(a),
    "gt": lambda a, b: a > b,
    "where": lambda a, b: torch.where(a > 0, a, b),
    "addcmul_": lambda a, b: a.addcmul_(b, b, value=1e-9),
    "lerp_": lambda a, b: a.lerp_(b, 1e-9),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--numel", type=int, default=1 << 24)
    args = parser.parse_args()
    rows = {}
    sync = torch.accel.synchronize
    for dtype in [torch.float32, torch.bfloat16]:
        a, b = torch.randn(args.numel).to(dtype), torch.randn(args.numel).to(dtype)
        da, db = a.to("accel"), b.to("accel")
        for name, fn in OPS.items():
            t_cpu = median_seconds(lambda: fn(a, b), repeats=7)
            t_acc = median_seconds(lambda: fn(da, db), repeats=7, sync=sync)
            key = f"{name}/{str(dtype).replace('torch.', '')}"
            rows[key] = {
                "cpu_ms": t_cpu * 1e3,
                "accel_ms": t_acc * 1e3,
                "cpu_over_accel": t_cpu / t_acc,
            }
            print(
                f"{key:22s} cpu {t_cpu * 1e3:8.2f} ms  accel {t_acc * 1e3:8.2f} ms  "
                f"ratio {t_cpu / t_acc:5.2f}"
            )
    write_result(
        args.out,
        "elementwise",
        {
            "benchmark": "elementwise ops",
            "numel": args.numel,
            "driver": torch_accel.driver(),
            "ops": rows,
        },
    )


if __name__ == "__main__":
    main()
