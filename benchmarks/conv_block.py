"""A ResNet basic block (conv-bn-relu-conv-bn + identity) forward and backward, accel vs CPU
eager in one run (medians), at a few batch/channel/size shapes. The goal is accel at least 0.8x
CPU's speed (accel_time_vs_cpu at most 1.25).

Each side is timed in alternating settled blocks (common.medians_in_blocks): timed in strict
turns, every accel step starts while CPU's OpenMP threads still spin after the CPU step, on a
2-core machine a core taken from it. Both are reported; the settled ratio is the one a program
that trains on accel alone sees.

    python benchmarks/conv_block.py [--out DIR] [--repeats N]
"""

import argparse
import copy
import statistics

import torch

import torch_accel
from common import medians_in_blocks, medians_in_turns, write_result

SHAPES = [(8, 16, 32), (8, 32, 16), (4, 64, 16)]  # batch, channels, height = width


class BasicBlock(torch.nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def stepper(block: torch.nn.Module, x: torch.Tensor, device: str):
    block = copy.deepcopy(block).to(device)
    x = x.detach().to(device).requires_grad_()  # a leaf of its own on CPU too
    sync = torch.accel.synchronize if device == "accel" else (lambda: None)

    def step():
        block(x).sum().backward()
        sync()

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=15, help="timed steps per side")
    args = parser.parse_args()
    torch_accel.reset_fallback_counts()
    rows = {}
    for batch, channels, size in SHAPES:
        torch.manual_seed(0)
        block = BasicBlock(channels)
        x = torch.randn(batch, channels, size, size)
        steps = {"accel": stepper(block, x, "accel"), "cpu": stepper(block, x, "cpu")}
        t = medians_in_blocks(steps, args.repeats)
        turns = medians_in_turns(steps, args.repeats, warmup=3)
        a, c = t["accel"], t["cpu"]
        rows[f"{batch}x{channels}x{size}x{size}"] = {
            "accel_ms": a * 1e3,
            "cpu_ms": c * 1e3,
            "accel_time_vs_cpu": a / c,
            "in_turns": {
                "accel_ms": turns["accel"] * 1e3,
                "cpu_ms": turns["cpu"] * 1e3,
                "accel_time_vs_cpu": turns["accel"] / turns["cpu"],
            },
        }
    result = {
        "benchmark": "ResNet basic block forward+backward, accel vs CPU eager",
        "driver": torch_accel.driver(),
        "threads": torch.get_num_threads(),
        "shapes": rows,
        "median_accel_time_vs_cpu": statistics.median(
            r["accel_time_vs_cpu"] for r in rows.values()
        ),
        "median_accel_time_vs_cpu_in_turns": statistics.median(
            r["in_turns"]["accel_time_vs_cpu"] for r in rows.values()
        ),
        "accel_fallback_calls": sum(torch_accel.fallback_counts().values()),
    }
    write_result(args.out, "conv_block", result)


if __name__ == "__main__":
    main()
