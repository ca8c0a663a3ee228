"""Per-op overhead of a tiny op (x + 1 on one element): accel vs CPU eager, same run.
--busy N keeps N other processes spinning meanwhile (the machine shared with other work).

    python benchmarks/op_overhead.py [--out DIR] [--busy N]
"""

import argparse
import statistics
import subprocess
import sys

import torch

import torch_accel  # noqa: F401
from common import median_seconds, write_result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--busy", type=int, default=0, help="busy processes alongside")
    args = parser.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        measure(args)
    finally:
        for p in busy:
            p.kill()


def measure(args):
    inner = 2000
    cpu = torch.ones(1)
    acc = torch.ones(1, device="accel")
    # Batches of the two alternate, so both see the same machine. Launches are asynchronous:
    # the synchronize at the end of each accel batch makes its time honest.
    samples = {"cpu": [], "accel": []}
    sync = torch.accel.synchronize
    for _ in range(21):
        samples["cpu"].append(median_seconds(lambda: cpu + 1, repeats=1, inner=inner))
        samples["accel"].append(median_seconds(lambda: acc + 1, repeats=1, inner=inner, sync=sync))
    t_cpu, t_acc = statistics.median(samples["cpu"]), statistics.median(samples["accel"])
    result = {
        "benchmark": "tiny op overhead (x + 1, 1 element)",
        "cpu_us": t_cpu * 1e6,
        "accel_us": t_acc * 1e6,
        "accel_over_cpu": t_acc / t_cpu,
        "busy_processes": args.busy,
        "goal": "accel_over_cpu <= 1.5",
    }
    print(f"cpu {t_cpu * 1e6:.2f} us  accel {t_acc * 1e6:.2f} us  ratio {t_acc / t_cpu:.2f}")
    write_result(args.out, "op_overhead" + (f"_busy{args.busy}" if args.busy else ""), result)


if __name__ == "__main__":
    main()
