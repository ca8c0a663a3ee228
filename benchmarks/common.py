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


def medians_in_blocks(
    steps: dict, repeats: int, block: int = 5, settle_s: float = 0.05, prep: dict | None = None
) -> dict:
    """Median seconds of each of several step functions, timed in alternating blocks of `block`
    calls, each block preceded by untimed calls for `settle_s`; prep[name](), when given, runs
    untimed before each call. Timed in strict turns, a step that follows a CPU eager step
    shares the cores with CPU's OpenMP threads, which spin for milliseconds after each
    parallel region (libgomp's GOMP_SPINCOUNT): the settling lets each side be timed as a
    program running only it would see it, while the alternation still spreads the machine's
    load over both."""
    prep = prep or {}
    samples = {name: [] for name in steps}

    def call(name, fn):
        if name in prep:
            prep[name]()
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    while min(len(v) for v in samples.values()) < repeats:
        for name, fn in steps.items():
            settled = 0.0
            while settled < settle_s:
                settled += call(name, fn)
            samples[name] += [call(name, fn) for _ in range(block)]
    return {name: statistics.median(v) for name, v in samples.items()}


def write_result(out_dir: str | None, name: str, result: dict) -> None:
    result["command"] = " ".join([os.path.basename(sys.executable)] + sys.argv)
    print(json.dumps(result, indent=2))
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            json.dump(result, f, indent=2)
