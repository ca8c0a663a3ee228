"""torch.sort on accel vs CPU ATen, same run, timed in turns (medians): one long 1-D float32
sort (2^22 keys) and many rows ([4096, 1024], along the last dimension). Speed = CPU time /
accel time (above 1: accel faster). On the host driver both sides use the same cores.

    python benchmarks/sort.py [--out DIR] [--repeats 7]
"""

import argparse

import torch

import torch_accel
from common import medians_in_turns, write_result

SHAPES = {"1d_2^22": (1 << 22,), "rows_4096x1024": (4096, 1024)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    results = {"threads": torch.get_num_threads(), "driver": torch_accel.driver()}
    torch_accel.reset_fallback_counts()
    for name, shape in SHAPES.items():
        x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
        xa = x.to("accel")

        def accel():
            torch.sort(xa, dim=-1)
            torch.accel.synchronize()

        t = medians_in_turns(
            {"cpu": lambda: torch.sort(x, dim=-1), "accel": accel}, repeats=args.repeats
        )
        speed = t["cpu"] / t["accel"]
        print(
            f"sort float32 {name:<16} cpu {t['cpu'] * 1e3:8.2f} ms  "
            f"accel {t['accel'] * 1e3:8.2f} ms  speed {speed:5.2f}"
        )
        results[name] = {"cpu_ms": t["cpu"] * 1e3, "accel_ms": t["accel"] * 1e3, "speed": speed}
    results["fallback_counts"] = torch_accel.fallback_counts()
    write_result(args.out, "sort", results)


if __name__ == "__main__":
    main()
