"""Shared helpers: median timing, JSON output, the reproduce line."""

import json
import os
import statistics
import sys
import time


def median_seconds(fn, repeats: int = 15, inner: int = 1, sync=None) -> float:
    """Median over `repeats` runs of `inner` calls of fn, per call; `sync` runs inside the timing
    (so asynchronous accel work is counted)."""
    return median_wall_and_cpu_seconds(fn, repeats, inner, sync)[0]


def median_wall_and_cpu_seconds(fn, repeats: int = 15, inner: int = 1, sync=None):
    """(wall, CPU) medians per call, as median_seconds. CPU is this process's time, all threads,
    user and system: on a loaded machine it varies far less than the wall time."""
    fn()
    if sync:
        sync()
    wall, cpu = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(inner):
            fn()
        if sync:
            sync()
        wall.append((time.perf_counter() - t0) / inner)
        cpu.append((time.process_time() - c0) / inner)
    return statistics.median(wall), statistics.median(cpu)


def wall_and_cpu_in_turns(steps: dict, repeats: int, inner: int = 1) -> dict:
    """{name: (wall, CPU) medians per call} of several steps, each a (fn, sync) pair timed as
    median_wall_and_cpu_seconds times one, in turns (`inner` calls of each per round), so that
    all of them see the same machine load."""
    for fn, sync in steps.values():
        fn()
        if sync:
            sync()
    samples = {name: ([], []) for name in steps}
    for _ in range(repeats):
        for name, (fn, sync) in steps.items():
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(inner):
                fn()
            if sync:
                sync()
            samples[name][0].append((time.perf_counter() - t0) / inner)
            samples[name][1].append((time.process_time() - c0) / inner)
    return {name: (statistics.median(w), statistics.median(c)) for name, (w, c) in samples.items()}


def medians_in_turns(steps: dict, repeats: int, warmup: int = 2) -> dict:
    """Median seconds of each of several step functions, timed in turns (one call of each per
    round), so that all of them see the same machine load."""
    for _ in range(warmup):
        for fn in steps.values():
            fn()
    samples = {name: [] for name in steps}
    for _ in range(repeats):
        for name, fn in steps.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(v) for name, v in samples.items()}


def write_result(out_dir: str | None, name: str, result: dict) -> None:
    result["command"] = " ".join([os.path.basename(sys.executable)] + sys.argv)
    print(json.dumps(result, indent=2))
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            json.dump(result, f, indent=2)
