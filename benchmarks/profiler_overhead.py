"""What profiling costs: the LoRA training step of examples/lora_finetune.py on accel, timed
unprofiled, under torch.profiler (CPU + PrivateUse1 device activities) and under the legacy
torch.autograd.profiler.profile(use_device="accel"), interleaved in one run. Reports the median
step time of each and the ratios to the unprofiled step (goal: at most 1.5x), plus what one
profiling session costs to start, stop and post-process.

    python benchmarks/profiler_overhead.py [--out DIR] [--steps N] [--rounds R]
"""

import argparse
import os
import statistics
import sys
import time

# OpenMP threads that spin after each parallel region (CPU BLAS) starve the host driver's
# stream workers on a loaded machine, which makes step times jump by 10x from one step to the
# next; waiting passively keeps this comparison about the profilers. Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from torch.autograd.profiler import profile as legacy_profile  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import torch_accel  # noqa: E402
from common import write_result  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import lora_finetune as lf  # noqa: E402


def make_step():
    args = lf.parse_args([])
    tokenizer, data = lf.permutation_task(args.seq_len, 8 * args.batch_size, args.seed)
    device = torch.device("accel")
    model = lf.build_model(args, tokenizer.vocab_size).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr)
    batch = data[: args.batch_size].to(device)

    def step():
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.accel.synchronize()

    return step


def timed_steps(step, n: int) -> list:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


SESSIONS = {
    "none": None,
    "torch.profiler": lambda: profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]
    ),
    "legacy use_device=accel": lambda: legacy_profile(use_device="accel"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--steps", type=int, default=5, help="steps per session")
    parser.add_argument("--rounds", type=int, default=5, help="sessions of each kind")
    args = parser.parse_args()
    step = make_step()
    for _ in range(3):
        step()  # warm-up
    steps = {name: [] for name in SESSIONS}
    session_s = {name: [] for name in SESSIONS if SESSIONS[name]}
    device_events = 0
    for _ in range(args.rounds):  # interleaved, so load changes hit every kind alike
        for name, make in SESSIONS.items():
            if make is None:
                steps[name] += timed_steps(step, args.steps)
                continue
            t0 = time.perf_counter()
            with make() as prof:
                times = timed_steps(step, args.steps)
            events = prof.events() if hasattr(prof, "events") else prof.function_events
            if name == "torch.profiler":
                device_events = sum(
                    e.device_type == torch.autograd.DeviceType.PrivateUse1 for e in events
                )
            steps[name] += times
            session_s[name].append(time.perf_counter() - t0 - sum(times))
    base = statistics.median(steps["none"])
    result = {
        "benchmark": "profiling overhead, LoRA training step on accel",
        "driver": torch_accel.driver(),
        "steps_per_session": args.steps,
        "rounds": args.rounds,
        "unprofiled_step_ms": base * 1e3,
        "device_events_per_session": device_events,
        "goal": "profiled/unprofiled <= 1.5",
        "omp_wait_policy": os.environ["OMP_WAIT_POLICY"],
    }
    for name in session_s:
        t = statistics.median(steps[name])
        key = name.split()[0].replace(".", "_")
        result[f"{key}_step_ms"] = t * 1e3
        result[f"{key}_over_unprofiled"] = t / base
        result[f"{key}_session_overhead_ms"] = statistics.median(session_s[name]) * 1e3
        print(
            f"{name:<26} step {t * 1e3:7.2f} ms  ({t / base:.2f}x unprofiled "
            f"{base * 1e3:.2f} ms); start+stop+processing "
            f"{statistics.median(session_s[name]) * 1e3:.0f} ms per session"
        )
    write_result(args.out, "profiler_overhead", result)


if __name__ == "__main__":
    main()
