"""A GPU cost estimate, not a measurement: for the benchmark shapes, each kernel's planned
parallelism (the CUDA build's own launch plans, read through torch_accel._C on any machine)
and the bytes it moves, turned into a time at an H200's bandwidth and compared with the
torch.cuda figures we hold. It checks that no family is planned to run on a fraction of the
machine; it says nothing about how well each kernel's loop runs.

    python benchmarks/gpu_cost_estimate.py [--sms 132] [--out DIR]

The model, per kernel launch (pass):
- it moves `bytes` through HBM at 4.8 TB/s times its occupancy, min(1, threads with work /
  (SMs * 1024)): a streaming kernel needs about half an SM's 2048 resident threads on every SM
  to keep enough loads in flight (Little's law at ~0.6 us of latency);
- plus 3 us of launch overhead.
"Machine use" is the bandwidth-bound time over the estimated time with overheads left out: the
share of the machine the plan can use. "vs copy" compares the whole estimate with the time
torch.cuda's measured copy bandwidth (4.3 TB/s) gives the op's unavoidable bytes. GEMMs run
cuBLAS, the same call torch.cuda makes: their roofline is the measured 769-798 TFLOP/s.
"""

import argparse

import torch_accel
from common import write_result

HBM_BYTES_PER_S = 4.8e12
COPY_BYTES_PER_S = 4.3e12  # torch.cuda's measured copy on the H200
GEMM_FLOPS = (769e12, 798e12)  # torch.cuda's measured bf16 GEMM at 8192^3
THREADS_TO_SATURATE_PER_SM = 1024
LAUNCH_S = 3e-6
GOAL = 0.5  # the share of the bandwidth roofline below which a plan is a defect
# Below this many bytes an op takes a few microseconds on any plan: launches and latency, not
# bandwidth, set its time (torch.cuda's too), so the goal does not apply.
LATENCY_BOUND_BYTES = 64 << 20


def plan(family, sizes, sms):
    return torch_accel._C._cuda_launch_plan(family, list(sizes), sms)


def estimate(name, family, sizes, pass_bytes, min_bytes, sms):
    """pass_bytes(passes) -> the bytes each planned pass moves."""
    passes = plan(family, sizes, sms)
    bound = est = 0.0
    rows = []
    for p, nbytes in zip(passes, pass_bytes(passes), strict=True):
        occupancy = min(1.0, p["work"] / (sms * THREADS_TO_SATURATE_PER_SM))
        t = nbytes / (HBM_BYTES_PER_S * occupancy)
        bound += nbytes / HBM_BYTES_PER_S
        est += t
        rows.append(dict(p, bytes=nbytes, occupancy=occupancy, seconds=t + LAUNCH_S))
    total = est + LAUNCH_S * len(passes)
    return {
        "name": name,
        "family": family,
        "passes": rows,
        "seconds": total,
        "machine_use": bound / est if est else 1.0,
        "vs_copy": (min_bytes / COPY_BYTES_PER_S) / total,
        "latency_bound": min_bytes < LATENCY_BOUND_BYTES,
    }


def fixed(*nbytes):
    return lambda passes: list(nbytes)


def column_bytes(data_bytes, acc=4):
    """A column family's passes: the first reads `data_bytes` (and writes a float partial per
    worker when merge passes follow); each merge pass reads the last pass's partials and writes
    one per worker (the last writes the outputs)."""

    def f(passes):
        out, written = [], 0
        for i, p in enumerate(passes):
            merged = i + 1 < len(passes) and passes[i + 1]["kernel"] == "columnMerge"
            if p["kernel"] == "columnMerge":
                out.append(acc * (written + p["work"]))
                written = p["work"]
            elif merged:
                out.append(data_bytes + acc * p["work"])
                written = p["work"]
            else:
                out.append(data_bytes)
        return out

    return f


def cases(sms):
    f32, bf16 = 4, 2
    n = 1 << 28  # gpu_side_by_side.py's elementwise and reduction size
    rows, cols = n // 4096, 4096  # its softmax and layer_norm rows
    tokens, hidden = 4096, 768  # a LoRA step's activations (8 x 512 tokens, GPT-2 width)
    out = []

    def add(name, family, sizes, pass_bytes, min_bytes):
        out.append(estimate(name, family, sizes, pass_bytes, min_bytes, sms))

    add("add fp32 2^28", "elementwise", [n], fixed(3 * f32 * n), 3 * f32 * n)
    add("copy fp32 2^28", "elementwise", [n], fixed(2 * f32 * n), 2 * f32 * n)
    add("randn fp32 2^28", "randn", [n], fixed(f32 * n), f32 * n)
    add(
        "sum fp32 2^28",
        "reduce",
        [1, n],
        lambda ps: [f32 * n] + [8 * ps[0]["blocks"]] * (len(ps) - 1),
        f32 * n,
    )
    add(f"sum(-1) fp32 {rows}x{cols}", "reduce", [rows, cols], fixed(f32 * n), f32 * n)
    for label, r, c, dt in [
        (f"sum(0) fp32 {rows}x{cols}", rows, cols, f32),
        (f"bias grad bf16 {tokens}x{hidden}", tokens, hidden, bf16),
    ]:
        add(label, "reduce_columns", [c, c, r], column_bytes(dt * r * c), dt * r * c)
    add(f"softmax fp32 {rows}x{cols}", "softmax", [rows], fixed(2 * f32 * n), 2 * f32 * n)
    att = 8 * 12 * 512 * 512  # a LoRA step's attention probabilities (8 x 12 heads x 512^2)
    add(
        f"softmax fp32 {8 * 12 * 512}x512",
        "softmax",
        [8 * 12 * 512],
        fixed(2 * f32 * att),
        2 * f32 * att,
    )
    add(f"layer_norm fp32 {rows}x{cols}", "layer_norm", [rows], fixed(2 * f32 * n), 2 * f32 * n)
    for label, r, c, dt in [
        (f"layer_norm backward fp32 {rows}x{cols}", rows, cols, f32),
        (f"layer_norm backward bf16 {tokens}x{hidden}", tokens, hidden, bf16),
    ]:
        grad_input = 3 * dt * r * c  # reads dy and x, writes dx
        params = column_bytes(2 * dt * r * c)  # reads dy and x again
        add(
            label,
            "layer_norm_backward",
            [r, c],
            lambda ps, g=grad_input, f=params: [g] + f(ps[1:]),
            5 * dt * r * c,
        )
    m = 1 << 24  # gpu_side_by_side.py's cumsum and the scan and sort sizes
    state = 8  # a float32 cumsum's carry (a double) and a nonzero count (an int64)

    def carried(data):
        """Each pass's data bytes (by kernel) plus its carry states' bytes."""
        return lambda ps: [data.get(p["kernel"], 0) + state * p["states"] for p in ps]

    def scan_bytes(numel):
        one_pass, read, rewrite = 2 * f32 * numel, f32 * numel, 2 * f32 * numel
        return carried({"scanChunk": one_pass, "scanAggregate": read, "scanWrite": rewrite})

    add("cumsum fp32 2^24", "scan", [1, m, 1], scan_bytes(m), 2 * f32 * m)
    add(
        f"cumsum fp32 {tokens}x{hidden} dim 1",
        "scan",
        [tokens, hidden, 1],
        scan_bytes(tokens * hidden),
        2 * f32 * tokens * hidden,
    )
    add(  # a float32 input: 64 MiB, beyond the latency-bound sizes; half of it nonzero
        "nonzero fp32 2^24",
        "nonzero",
        [m],
        carried({"countFold": f32 * m, "nonzeroChunk": f32 * m + 8 * m // 2}),
        f32 * m,
    )
    kv = 4 + 8  # a float32 key and its int64 index
    for label, slices, n_ in [("sort fp32 2^24", 1, m), ("sort fp32 [16384, 1024]", 16384, 1024)]:
        add(
            label,
            "sort",
            [slices, n_],
            lambda ps, b=slices * n_: [2 * kv * b] * len(ps),
            (4 + kv) * slices * n_,
        )
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sms", type=int, default=132, help="SM count (an H200 has 132)")
    parser.add_argument("--out")
    args = parser.parse_args()
    results = cases(args.sms)
    print(
        f"{'kernel family at the benchmark shape':48} {'passes':>6} {'est us':>9} "
        f"{'machine use':>11} {'vs copy':>7}"
    )
    for r in results:
        print(
            f"{r['name']:48} {len(r['passes']):>6} {r['seconds'] * 1e6:>9.1f} "
            f"{r['machine_use']:>11.0%} {r['vs_copy']:>7.0%}"
            + ("  (latency-bound size)" if r["latency_bound"] else "")
        )
        for p in r["passes"]:
            print(
                f"    {p['kernel']:24} {p['blocks']:>7} x {p['threads']} threads, "
                f"{p['work']:>10} with work, occupancy {p['occupancy']:.0%}, "
                f"{p['bytes'] / 1e6:.1f} MB"
            )
    lo, hi = (f / 1e12 for f in GEMM_FLOPS)
    print(
        f"bf16 GEMM 8192^3: cuBLAS (cublasGemmStridedBatchedEx), as torch.cuda: "
        f"{2 * 8192**3 / GEMM_FLOPS[1] * 1e3:.2f}-{2 * 8192**3 / GEMM_FLOPS[0] * 1e3:.2f} ms "
        f"at the measured {lo:.0f}-{hi:.0f} TFLOP/s"
    )
    below = [r["name"] for r in results if r["machine_use"] < GOAL and not r["latency_bound"]]
    print("bandwidth-bound families below half the roofline:", ", ".join(below) or "none")
    write_result(
        args.out,
        "gpu_cost_estimate",
        {
            "sms": args.sms,
            "model": {
                "hbm_bytes_per_s": HBM_BYTES_PER_S,
                "threads_to_saturate_per_sm": THREADS_TO_SATURATE_PER_SM,
                "launch_s": LAUNCH_S,
            },
            "results": results,
            "below_goal": below,
        },
    )


if __name__ == "__main__":
    main()
