"""Native kernels vs CPU ATen on the host driver, same threads, same run (medians):
softmax / layer_norm / rms_norm at a transformer shape, amax / argmax along its rows and
softmax along its outer dimension, GEMM at 1024^3 and 4096x4096x1024, and
the chunked scan and compaction (cumsum of 2^24 float32, nonzero of 2^24 bool); elementwise ops
have benchmarks/elementwise.py. Speed = CPU time / accel time, each side timed in settled
alternating blocks (common.medians_in_blocks).

    python benchmarks/ops_host.py [--out DIR] [--no-gemm]
"""

import argparse

import torch
import torch.nn.functional as F

import torch_accel
from common import medians_in_blocks, write_result

GOALS = {"norm": 0.8, "reduce": 0.8, "gemm": 0.95, "scan": 0.7}


def compare(name, group, fn, make_inputs, repeats=7):
    cpu_in = make_inputs()
    acc_in = [t.to("accel") for t in cpu_in]
    torch_accel.reset_fallback_counts()

    def accel():
        fn(*acc_in)
        torch.accel.synchronize()

    # In settled blocks: an accel call timed right after a CPU one shares the cores with CPU's
    # still-spinning OpenMP threads (common.medians_in_blocks).
    times = medians_in_blocks({"cpu": lambda: fn(*cpu_in), "accel": accel}, repeats)
    t_cpu, t_acc = times["cpu"], times["accel"]
    fallback = sum(torch_accel.fallback_counts().values())
    speed = t_cpu / t_acc
    print(
        f"{name:<34} cpu {t_cpu * 1e3:8.2f} ms  accel {t_acc * 1e3:8.2f} ms  speed {speed:5.2f}"
        f"  (goal >= {GOALS[group]}){'  FALLBACK' if fallback else ''}"
    )
    return {
        "group": group,
        "cpu_ms": t_cpu * 1e3,
        "accel_ms": t_acc * 1e3,
        "speed": speed,
        "goal": GOALS[group],
        "fallback_calls": fallback,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--no-gemm", action="store_true", help="the normalization ops only")
    args = parser.parse_args()
    rows, hidden = 2048, 4096
    results = {"threads": torch.get_num_threads()}
    for dtype in (torch.float32, torch.bfloat16):
        tag = str(dtype).split(".")[-1]

        def mat():
            return [torch.randn(rows, hidden).to(dtype), torch.randn(hidden).to(dtype)]

        results[f"softmax_{tag}"] = compare(
            f"softmax {tag} {rows}x{hidden}", "norm", lambda x, w: torch.softmax(x, -1), mat
        )
        results[f"layer_norm_{tag}"] = compare(
            f"layer_norm {tag} {rows}x{hidden}",
            "norm",
            lambda x, w: F.layer_norm(x, (hidden,), w, w),
            mat,
        )
        results[f"rms_norm_{tag}"] = compare(
            f"rms_norm {tag} {rows}x{hidden}", "norm", lambda x, w: F.rms_norm(x, (hidden,), w), mat
        )
        # Row extremes (generation's argmax over the vocabulary) and a softmax along an outer
        # dimension.
        results[f"amax_{tag}"] = compare(
            f"amax(-1) {tag} {rows}x{hidden}", "reduce", lambda x, w: x.amax(-1), mat
        )
        results[f"argmax_{tag}"] = compare(
            f"argmax(-1) {tag} {rows}x{hidden}", "reduce", lambda x, w: x.argmax(-1), mat
        )
        results[f"softmax_dim0_{tag}"] = compare(
            f"softmax(dim=0) {tag} {rows}x{hidden}", "norm", lambda x, w: torch.softmax(x, 0), mat
        )
    n = 1 << 24
    results["cumsum_float32_2e24"] = compare(
        "cumsum fp32 2^24", "scan", lambda x: torch.cumsum(x, 0), lambda: [torch.randn(n)]
    )
    results["nonzero_bool_2e24"] = compare(
        "nonzero bool 2^24 (half set)", "scan", torch.nonzero, lambda: [torch.rand(n) > 0.5]
    )
    for m, k, nn in () if args.no_gemm else ((1024, 1024, 1024), (4096, 1024, 4096)):
        mats = lambda: [torch.randn(m, k), torch.randn(k, nn)]  # noqa: E731
        results[f"gemm_{m}x{k}x{nn}"] = compare(
            f"gemm fp32 {m}x{k}x{nn}", "gemm", torch.mm, mats, repeats=5
        )
    write_result(
        args.out,
        "ops_host",
        {"benchmark": "native ops vs CPU ATen (host driver)", "results": results},
    )


if __name__ == "__main__":
    main()
