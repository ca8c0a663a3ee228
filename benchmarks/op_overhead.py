"""Per-op overhead of a tiny op (x + 1 on one element): accel vs CPU eager, same run.

python benchmarks/op_overhead.py [--out DIR]
"""

import argparse

import torch

import torch_accel  # noqa: F401
from common import median_seconds, write_result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    inner = 2000
    cpu = torch.ones(1)
    acc = torch.ones(1, device="accel")
    # Launches are asynchronous: the synchronize at the end of each batch makes the time honest.
    t_cpu = median_seconds(lambda: cpu + 1, repeats=21, inner=inner)
    t_acc = median_seconds(lambda: acc + 1, repeats=21, inner=inner, sync=torch.accel.synchronize)
    result = {
        "benchmark": "tiny op overhead (x + 1, 1 element)",
        "cpu_us": t_cpu * 1e6,
        "accel_us": t_acc * 1e6,
        "accel_over_cpu": t_acc / t_cpu,
        "goal": "accel_over_cpu <= 1.5",
    }
    print(f"cpu {t_cpu * 1e6:.2f} us  accel {t_acc * 1e6:.2f} us  ratio {t_acc / t_cpu:.2f}")
    write_result(args.out, "op_overhead", result)


if __name__ == "__main__":
    main()
