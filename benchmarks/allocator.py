"""Allocator: median malloc+free pair, cached vs TORCH_ACCEL_NO_CACHING=1, 512 B to 64 MiB.

Runs the C++ bench_allocator (built with the extension) twice, side by side.
    python benchmarks/allocator.py [--out DIR]
"""

import argparse
import json
import os
import subprocess

from common import write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(no_caching: bool) -> dict:
    exe = os.path.join(ROOT, "build", "cmake", "bench_allocator")
    env = dict(os.environ, TORCH_ACCEL_NO_CACHING="1" if no_caching else "0")
    out = subprocess.run([exe], capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out)["median_ns"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    cached, uncached = run(False), run(True)
    rows = {
        size: {
            "cached_ns": cached[size],
            "uncached_ns": uncached[size],
            "speedup": uncached[size] / cached[size],
        }
        for size in cached
    }
    for size, r in rows.items():
        print(
            f"{int(size):>10} B  cached {r['cached_ns']:>9.1f} ns  "
            f"uncached {r['uncached_ns']:>12.1f} ns  x{r['speedup']:.1f}"
        )
    write_result(
        args.out,
        "allocator",
        {"benchmark": "allocator malloc+free pair", "sizes": rows, "goal": "cached < 200 ns"},
    )


if __name__ == "__main__":
    main()
