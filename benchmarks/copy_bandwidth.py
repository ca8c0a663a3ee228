"""Copy bandwidth host->device and device->host (pageable and pinned), next to a host-to-host
copy of the same size measured in the same run.

    python benchmarks/copy_bandwidth.py [--out DIR]
"""

import argparse

import torch

import torch_accel  # noqa: F401
from common import median_seconds, write_result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = {}
    for mib in [1, 16, 256]:
        n = mib << 20
        host = torch.ones(n, dtype=torch.uint8)
        pinned = host.pin_memory()
        dev = torch.empty(n, dtype=torch.uint8, device="accel")
        dst = torch.empty_like(host)
        sync = torch.accel.synchronize
        reps = 9 if mib == 256 else 21
        t_ref = median_seconds(lambda: dst.copy_(host), repeats=reps)
        t_h2d = median_seconds(lambda: dev.copy_(host), repeats=reps, sync=sync)
        t_d2h = median_seconds(lambda: dst.copy_(dev), repeats=reps, sync=sync)
        t_h2d_p = median_seconds(
            lambda: dev.copy_(pinned, non_blocking=True), repeats=reps, sync=sync
        )
        t_d2h_p = median_seconds(
            lambda: pinned.copy_(dev, non_blocking=True), repeats=reps, sync=sync
        )
        gbps = lambda t: n / t / 1e9  # noqa: E731
        rows[f"{mib}MiB"] = {
            "host_to_host_GBps": gbps(t_ref),
            "h2d_GBps": gbps(t_h2d),
            "d2h_GBps": gbps(t_d2h),
            "h2d_pinned_GBps": gbps(t_h2d_p),
            "d2h_pinned_GBps": gbps(t_d2h_p),
            "h2d_over_host_copy": t_ref / t_h2d,
            "d2h_over_host_copy": t_ref / t_d2h,
        }
        r = rows[f"{mib}MiB"]
        print(
            f"{mib:>4} MiB  host copy {r['host_to_host_GBps']:.1f} GB/s  H2D {r['h2d_GBps']:.1f}  "
            f"D2H {r['d2h_GBps']:.1f}  pinned H2D {r['h2d_pinned_GBps']:.1f}  "
            f"pinned D2H {r['d2h_pinned_GBps']:.1f}"
        )
    write_result(
        args.out,
        "copy_bandwidth",
        {"benchmark": "copy bandwidth", "driver": torch_accel.driver(), "sizes": rows},
    )


if __name__ == "__main__":
    main()
