"""Runs every benchmark and writes one JSON file each into --out (default bench-results)."""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = [
    "allocator.py",
    "op_overhead.py",
    "copy_bandwidth.py",
    "elementwise.py",
    "ops_host.py",
    "lora_step.py",
    "zoo_step.py",
    "conv_block.py",
    "mid_size_ops.py",
    "op_sweep.py",
    "linalg.py",
    "rnn_step.py",
    "graphs.py",
    "attention.py",
    "profiler_overhead.py",
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="bench-results")
    args = parser.parse_args()
    failed = []
    for name in BENCHMARKS:
        print(f"== {name}", flush=True)
        if subprocess.call([sys.executable, os.path.join(HERE, name), "--out", args.out]) != 0:
            failed.append(name)
    if failed:
        sys.exit(f"benchmarks failed: {failed}")


if __name__ == "__main__":
    main()
