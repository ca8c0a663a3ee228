"""Training step of each zoo model (tests/models/zoo.py: small transformers configs, random
init): median step time on accel and on CPU eager, the two timed in turns in one run.

    python benchmarks/zoo_step.py [--out DIR] [--steps N] [--models gpt2,resnet,...]
                                  [--optimizer foreach|fused]

fused is AdamW(fused=True), HF Trainer's default optimizer ("adamw_torch_fused").
"""

import argparse
import copy
import os
import statistics
import sys

import torch

import torch_accel
from common import medians_in_turns, write_result

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "models")
)
import zoo  # noqa: E402


def stepper(name: str, model: torch.nn.Module, device: str, optimizer: str = "foreach"):
    """One AdamW training step of a copy of ``model`` on ``device``, synchronised."""
    model = copy.deepcopy(model).to(device)
    batch = {k: v.to(device) for k, v in zoo.ZOO[name].batch().items()}
    kind = {"foreach": dict(foreach=True), "fused": dict(fused=True)}[optimizer]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, **kind)
    sync = torch.accel.synchronize if device == "accel" else (lambda: None)

    def step():
        model(**batch).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--models", default=",".join(sorted(zoo.ZOO)))
    parser.add_argument("--optimizer", choices=["foreach", "fused"], default="foreach")
    args = parser.parse_args()
    torch_accel.reset_fallback_counts()
    rows = {}
    for name in args.models.split(","):
        model = zoo.build(name)
        t = medians_in_turns(
            {d: stepper(name, model, d, args.optimizer) for d in ("accel", "cpu")},
            args.steps,
            warmup=3,
        )
        a, c = t["accel"], t["cpu"]
        rows[name] = {"accel_ms": a * 1e3, "cpu_ms": c * 1e3, "accel_time_vs_cpu": a / c}
    result = {
        "benchmark": "zoo training step (tests/models/zoo.py), accel vs CPU eager",
        "optimizer": f"AdamW ({args.optimizer})",
        "driver": torch_accel.driver(),
        "models": rows,
        "median_accel_time_vs_cpu": statistics.median(
            r["accel_time_vs_cpu"] for r in rows.values()
        ),
        "accel_fallback_calls": sum(torch_accel.fallback_counts().values()),
    }
    write_result(args.out, "zoo_step", result)


if __name__ == "__main__":
    main()
