"""torch.distributed on accel (accl backend), side by side in one run:

- all_reduce bus bandwidth from 1 KiB to 256 MiB, accel tensors (accl: gloo staged through
  pinned host memory on the host driver, NCCL on the cuda driver) vs CPU tensors on gloo, in
  the same two processes and the same process group ("cpu:gloo,accel:accl"); and, as the
  floor any staged transport pays, gloo on CPU tensors plus the two copies staging adds
  (into a second CPU buffer and back, by CPU torch): where the ranks fill the cores, those
  copies alone set how close to gloo-on-CPU staging can come;
- the DDP LoRA training step (examples/lora_finetune.py's model), one process on the global
  batch vs two processes on half of it each.

    python benchmarks/distributed.py [--out bench-results] [--max-mib 256]

Bus bandwidth is NCCL's convention: bytes * 2 (n - 1) / n / time. Medians over repeats, the two
sides timed in turns (one burst of each per round) so that both see the same load. Each
all_reduce row also compares the CPU time rank 0's process spends per call (all threads): on
a machine loaded by other jobs it varies far less than the wall-time ratio, and it is the
ratio a saturated machine converges to.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import wall_and_cpu_in_turns, write_result  # noqa: E402
from ranks.launch import base_env, free_port  # noqa: E402


def rank_all_reduce(max_mib):
    import torch
    import torch.distributed as dist

    import torch_accel  # noqa: F401

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("accel", rank)
    torch.accel.set_device(device)
    dist.init_process_group("cpu:gloo,accel:accl", device_id=device)
    rows = []
    size = 1024
    while size <= max_mib << 20:
        n = size // 4
        inner = max(1, min(50, (8 << 20) // size))
        repeats = 9 if size <= (16 << 20) else 5
        # First the values (each rank contributes rank + 1), then the timing, on zeros (a
        # repeated sum of ones would overflow).
        check = torch.full((n,), float(rank + 1), device=device)
        dist.all_reduce(check)
        expected = world * (world + 1) / 2
        assert torch.equal(check.cpu(), torch.full((n,), expected)), f"wrong sum at {size} B"
        cpu = torch.zeros(n)
        acc = torch.zeros(n, device=device)
        staged_from, staging = torch.zeros(n), torch.zeros(n)

        def staged_floor():
            staging.copy_(staged_from)
            dist.all_reduce(staging)
            staged_from.copy_(staging)

        # Each side is timed to completion (gloo on CPU tensors returns when done; accel waits
        # for its stream), in turns, so that both see the same load from other processes.
        times = wall_and_cpu_in_turns(
            {
                "cpu": (lambda: dist.all_reduce(cpu), None),
                "accel": (lambda: dist.all_reduce(acc), torch.accel.synchronize),
                "staged_floor": (staged_floor, None),
            },
            repeats,
            inner,
        )
        (t_cpu, c_cpu), (t_acc, c_acc) = times["cpu"], times["accel"]
        t_floor = times["staged_floor"][0]
        factor = 2 * (world - 1) / world if world > 1 else 1.0  # algorithm bandwidth alone
        rows.append(
            {
                "bytes": size,
                "gloo_cpu_busbw_gbps": size * factor / t_cpu / 1e9,
                "accel_busbw_gbps": size * factor / t_acc / 1e9,
                "gloo_cpu_us": t_cpu * 1e6,
                "accel_us": t_acc * 1e6,
                "ratio": t_cpu / t_acc,
                # gloo-on-CPU over gloo plus the two staging copies: the best ratio staging
                # allows here; and accel against that floor.
                "staged_floor_us": t_floor * 1e6,
                "staged_floor_ratio": t_cpu / t_floor,
                "ratio_vs_staged_floor": t_floor / t_acc,
                # The CPU time this rank spends per call, all threads (staging copies, gloo's
                # reduction and sockets, hand-offs): what a saturated machine divides.
                "gloo_cpu_cpu_us": c_cpu * 1e6,
                "accel_cpu_us": c_acc * 1e6,
                "cpu_ratio": c_cpu / c_acc,
            }
        )
        del cpu, acc, staged_from, staging
        size *= 4
    dist.destroy_process_group()
    return rows


def rank_lora_step(steps, batch):
    import torch.distributed as dist

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import lora_finetune as lf

    world = int(os.environ.get("WORLD_SIZE", "1"))
    args = lf.parse_args(["--batch-size", str(batch), "--steps", str(steps)])
    device = lf.check_device("accel")
    ranks, device = lf.init_ranks(args, device)
    tokenizer, data = lf.permutation_task(args.seq_len, 64 * args.batch_size, args.seed)
    model = lf.build_model(args, tokenizer.vocab_size)
    result = lf.train(args, model, data, device, log=lambda *a: None, ranks=ranks)
    if world > 1:
        dist.destroy_process_group()
    return {"tokens_per_s": result.tokens_per_s, "losses": result.losses}


def spawn(mode, world, extra, timeout=1200):
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for rank in range(world):
            out = os.path.join(tmp, f"{rank}.json")
            env = base_env(
                TORCH_ACCEL_DRIVER=os.environ.get("TORCH_ACCEL_DRIVER", "host"),
                RANK=rank,
                LOCAL_RANK=rank,
                WORLD_SIZE=world,
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=port,
            )
            # Threads as torchrun leaves them: one per rank when several share the machine
            # (it sets OMP_NUM_THREADS, which CPU torch and the host driver's pool both
            # follow), the machine's otherwise.
            env.pop("TORCH_ACCEL_NUM_THREADS")
            if world > 1:
                env["OMP_NUM_THREADS"] = "1"
            else:
                env.pop("OMP_NUM_THREADS")
            if mode == "all_reduce":
                env["TORCH_ACCEL_HOST_MEMORY"] = "2G"
            procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--rank-mode", mode, "--rank-out", out, *extra],
                    env=env,
                    cwd=ROOT,
                )
            )
        for p in procs:
            if p.wait(timeout=timeout) != 0:
                raise SystemExit(f"a {mode} rank failed")
        with open(os.path.join(tmp, "0.json")) as f:
            return json.load(f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--max-mib", type=int, default=256)
    p.add_argument("--world", type=int, default=2, help="ranks of the all_reduce run")
    p.add_argument("--no-lora", action="store_true", help="skip the DDP LoRA step")
    p.add_argument("--lora-steps", type=int, default=12)
    p.add_argument("--lora-batch", type=int, default=16)
    p.add_argument("--rank-mode")
    p.add_argument("--rank-out")
    args = p.parse_args()
    if args.rank_mode:
        if args.rank_mode == "all_reduce":
            result = rank_all_reduce(args.max_mib)
        else:
            result = rank_lora_step(args.lora_steps, args.lora_batch)
        if int(os.environ.get("RANK", "0")) == 0:
            with open(args.rank_out, "w") as f:
                json.dump(result, f)
        return

    import torch_accel

    rows = spawn("all_reduce", args.world, ["--max-mib", str(args.max_mib)])
    from_1mib = [r["ratio"] for r in rows if r["bytes"] >= 1 << 20]
    result = {
        "driver": torch_accel.driver(),
        "world": args.world,
        "all_reduce": rows,
        "all_reduce_min_ratio_from_1MiB": min(from_1mib) if from_1mib else None,
        "all_reduce_min_cpu_ratio_from_1MiB": min(
            (r["cpu_ratio"] for r in rows if r["bytes"] >= 1 << 20), default=None
        ),
        "all_reduce_min_ratio_vs_staged_floor_from_1MiB": min(
            (r["ratio_vs_staged_floor"] for r in rows if r["bytes"] >= 1 << 20), default=None
        ),
        "all_reduce_goal": (
            "accel >= 0.8x gloo-on-CPU from 1 MiB up (ratio = gloo time / accel time)"
        ),
        "cpu_count": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
    }
    if not args.no_lora:
        lora_extra = ["--lora-steps", str(args.lora_steps), "--lora-batch", str(args.lora_batch)]
        one = spawn("lora", 1, lora_extra)
        two = spawn("lora", 2, lora_extra)
        result["ddp_lora_step"] = {
            "global_batch": args.lora_batch,
            "one_process_tokens_per_s": one["tokens_per_s"],
            "two_processes_tokens_per_s": two["tokens_per_s"],
            "scaling": two["tokens_per_s"] / one["tokens_per_s"],
            "max_loss_difference": max(abs(a - b) for a, b in zip(one["losses"], two["losses"])),
        }
    for r in rows:
        print(
            f"{r['bytes']:>10} B  gloo-cpu {r['gloo_cpu_busbw_gbps']:7.3f} GB/s  "
            f"accel {r['accel_busbw_gbps']:7.3f} GB/s  ratio {r['ratio']:.2f}  "
            f"cpu-time ratio {r['cpu_ratio']:.2f}  staged floor {r['staged_floor_ratio']:.2f}  "
            f"accel vs floor {r['ratio_vs_staged_floor']:.2f}"
        )
    write_result(args.out, "distributed", result)


if __name__ == "__main__":
    main()
