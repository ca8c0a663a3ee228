"""Dense linear algebra on accel vs CPU (LAPACK) in one run, each side timed in settled blocks
(common.medians_in_blocks): batches of small matrices (one factorization panel, launches
parallel over the batch) and single large ones (64-column panels, the rest by GEMM): LU
(solve, inv, det, slogdet), Cholesky and Householder QR.
Ratio = accel time / CPU time (below 1: accel faster).

    python benchmarks/linalg.py [--out DIR] [--repeats N]
"""

import argparse

import torch

import torch_accel
from common import medians_in_blocks, write_result


def spd(a):
    return a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], device=a.device)


CASES = {
    "inv 4096 x 4x4": ((4096, 4, 4), torch.linalg.inv),
    "det 1024 x 3x3": ((1024, 3, 3), torch.linalg.det),
    "inv 64 x 32x32": ((64, 32, 32), torch.linalg.inv),
    "solve 256x256, 8 rhs": ((256, 256), lambda a: torch.linalg.solve(a, a[:, :8])),
    "solve 1024x1024, 8 rhs": ((1024, 1024), lambda a: torch.linalg.solve(a, a[:, :8])),
    "cholesky 512x512": ((512, 512), lambda a: torch.linalg.cholesky(spd(a))),
    "slogdet 16 x 128x128": ((16, 128, 128), torch.linalg.slogdet),
    "qr 256 x 16x16": ((256, 16, 16), torch.linalg.qr),
    "qr 1024x1024": ((1024, 1024), torch.linalg.qr),
    "qr 4096x64": ((4096, 64), torch.linalg.qr),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch_accel.reset_fallback_counts()
    rows = {}
    for name, (shape, op) in CASES.items():
        a = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
        a_accel = a.to("accel")

        def on_accel(op=op, a_accel=a_accel):
            op(a_accel)
            torch.accel.synchronize()

        t = medians_in_blocks({"cpu": lambda op=op, a=a: op(a), "accel": on_accel}, args.repeats)
        rows[name] = {
            "cpu_ms": t["cpu"] * 1e3,
            "accel_ms": t["accel"] * 1e3,
            "accel_time_vs_cpu": t["accel"] / t["cpu"],
        }
        print(f"{name}: accel {t['accel'] * 1e3:.2f} ms, CPU {t['cpu'] * 1e3:.2f} ms")
    write_result(
        args.out,
        "linalg",
        {"cases": rows, "accel_fallback_calls": sum(torch_accel.fallback_counts().values())},
    )


if __name__ == "__main__":
    main()
