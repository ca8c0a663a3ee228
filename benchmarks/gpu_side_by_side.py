"""accel next to torch.cuda on the same GPU, in the same run: a bf16 GEMM (8192^3), an
elementwise add (bandwidth), a sum (reduction), a column sum, a cumsum of 2^24, softmax and
layer_norm over rows of 4096, and float32 sorts (one long row; rows of 1024). On a machine with
no CUDA it says so and runs a scaled-down version against the CPU instead, so the script is
always runnable.

    python benchmarks/gpu_side_by_side.py [--out DIR]
"""

import argparse

import torch

import torch_accel
from common import median_seconds, write_result


def bench(name, fn_accel, fn_ref, sync_accel, sync_ref, flops=None, nbytes=None, repeats=10):
    row = {}
    for side, fn, sync in (("accel", fn_accel, sync_accel), ("reference", fn_ref, sync_ref)):
        try:
            t = median_seconds(fn, repeats=repeats, sync=sync)
        except Exception as e:  # an op with no kernel yet is reported, not fatal
            row[side] = {"error": f"{type(e).__name__}: {e}"[:300]}
            continue
        entry = {"seconds": t}
        if flops:
            entry["TFLOPs"] = flops / t / 1e12
        if nbytes:
            entry["GBps"] = nbytes / t / 1e9
        row[side] = entry
    if "seconds" in row.get("accel", {}) and "seconds" in row.get("reference", {}):
        row["accel_over_reference_time"] = row["accel"]["seconds"] / row["reference"]["seconds"]
    print(name, row)
    return row


def bench_gemm(n, ref, sync_a, sync_r, repeats):
    # Its operands are freed on return, before the elementwise benchmarks allocate theirs.
    a = torch.randn(n, n, dtype=torch.bfloat16)
    b = torch.randn(n, n, dtype=torch.bfloat16)
    aa, ba = a.to("accel"), b.to("accel")
    ar, br = a.to(ref), b.to(ref)
    return bench(
        "gemm", lambda: aa @ ba, lambda: ar @ br, sync_a, sync_r, flops=2 * n**3, repeats=repeats
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    ref = "cuda" if cuda else "cpu"
    if not cuda:
        print("no CUDA: comparing accel with the CPU at reduced sizes")
    n_gemm = 8192 if cuda else 512
    n_elem = (1 << 28) if cuda else (1 << 22)
    sync_a = torch.accel.synchronize
    sync_r = torch.cuda.synchronize if cuda else None
    torch_accel.reset_fallback_counts()
    rows = {}

    rows[f"bf16_gemm_{n_gemm}"] = bench_gemm(n_gemm, ref, sync_a, sync_r, 10 if cuda else 3)

    x = torch.randn(n_elem)
    xa, xr = x.to("accel"), x.to(ref)
    ya, yr = xa.clone(), xr.clone()
    rows[f"add_fp32_{n_elem}"] = bench(
        "add",
        lambda: torch.add(xa, ya),
        lambda: torch.add(xr, yr),
        sync_a,
        sync_r,
        nbytes=3 * 4 * n_elem,
    )
    rows[f"sum_fp32_{n_elem}"] = bench(
        "sum", lambda: xa.sum(), lambda: xr.sum(), sync_a, sync_r, nbytes=4 * n_elem
    )
    rows_2d = (x.numel() // 4096, 4096)
    x2a, x2r = xa.view(rows_2d), xr.view(rows_2d)
    rows[f"softmax_fp32_{rows_2d[0]}x{rows_2d[1]}"] = bench(
        "softmax",
        lambda: torch.softmax(x2a, -1),
        lambda: torch.softmax(x2r, -1),
        sync_a,
        sync_r,
        nbytes=2 * 4 * n_elem,
    )
    rows[f"sum0_fp32_{rows_2d[0]}x{rows_2d[1]}"] = bench(
        "sum(0)", lambda: x2a.sum(0), lambda: x2r.sum(0), sync_a, sync_r, nbytes=4 * n_elem
    )
    n_scan = n_elem // 16  # 2^24 on a GPU: the scan issue 15 made parallel
    rows[f"cumsum_fp32_{n_scan}"] = bench(
        "cumsum",
        lambda: xa[:n_scan].cumsum(0),
        lambda: xr[:n_scan].cumsum(0),
        sync_a,
        sync_r,
        nbytes=2 * 4 * n_scan,
    )
    rows[f"layer_norm_fp32_{rows_2d[0]}x{rows_2d[1]}"] = bench(
        "layer_norm",
        lambda: torch.nn.functional.layer_norm(x2a, (4096,)),
        lambda: torch.nn.functional.layer_norm(x2r, (4096,)),
        sync_a,
        sync_r,
        nbytes=2 * 4 * n_elem,
    )
    # A long 1-D sort (every merge pass in tiles) and many rows, float32.
    for name, view in (
        (f"sort_fp32_{n_elem}", (n_elem,)),
        (f"sort_fp32_{n_elem // 1024}x1024", (-1, 1024)),
    ):
        sa, sr = xa.view(view), xr.view(view)
        rows[name] = bench(
            "sort",
            lambda: torch.sort(sa, dim=-1),
            lambda: torch.sort(sr, dim=-1),
            sync_a,
            sync_r,
            nbytes=2 * 12 * n_elem,
        )
    write_result(
        args.out,
        "gpu_side_by_side",
        {
            "benchmark": "accel vs torch.cuda side by side" if cuda else "no CUDA: accel vs CPU",
            "cuda": cuda,
            "driver": torch_accel.driver(),
            "device": torch.cuda.get_device_name() if cuda else "cpu",
            "results": rows,
            "fallback_counts": torch_accel.fallback_counts(),
        },
    )


if __name__ == "__main__":
    main()
