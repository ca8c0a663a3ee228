"""DDP, FSDP2 (and its distributed checkpoint), DTensor, tensor parallelism and torchrun on
accel through the accl backend (host driver), in two rank processes on the two simulated
devices: parameters and losses match the single-process run on the same global batch
(tests/ranks/worker.py)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from ranks.launch import WORKER, base_env, free_port, run_ranks

TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]


@pytest.mark.parametrize("scenario", ["ddp", "fsdp", "dtensor", "tensor_parallel"])
def test_parallel_training_matches_single_process(scenario, tmp_path):
    run_ranks(scenario, tmp_path)


def test_fsdp_checkpoint_saves_loads_and_resumes(tmp_path):
    """torch.distributed.checkpoint over FSDP2 shards on accel: a loaded model and optimizer
    equal the saved ones and resume to the uninterrupted run's parameters."""
    run_ranks("checkpoint", tmp_path, env={"CHECKPOINT_DIR": str(tmp_path / "ckpt")})


def _reports(tmp_path, world):
    reports = []
    for rank in range(world):
        with open(tmp_path / f"rank{rank}.json") as f:
            report = json.load(f)
        failed = {k: v for k, v in report.items() if v is not None}
        assert not failed, f"rank {rank}: {failed}"
        reports.append(report)
    return reports


def test_torchrun_launch(tmp_path):
    port = free_port()
    proc = subprocess.run(
        TORCHRUN
        + [
            "--nproc-per-node",
            "2",
            "--rdzv-backend",
            "c10d",
            "--rdzv-endpoint",
            f"127.0.0.1:{port}",
            WORKER,
            "torchrun",
            str(tmp_path / "rank{rank}.json"),
        ],
        env=base_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert len(_reports(tmp_path, 2)) == 2


def test_two_nodes_through_c10d_rendezvous(tmp_path):
    """Two "machines" on loopback, each a torchrun with one rank on its own simulated device."""
    port = free_port()
    nodes = []
    for node in range(2):
        cmd = TORCHRUN + [
            "--nnodes",
            "2",
            "--node-rank",
            str(node),
            "--nproc-per-node",
            "1",
            "--rdzv-backend",
            "c10d",
            "--rdzv-endpoint",
            f"127.0.0.1:{port}",
            "--rdzv-id",
            "accl-two-nodes",
            WORKER,
            "torchrun",
            str(tmp_path / "rank{rank}.json"),
        ]
        nodes.append(
            subprocess.Popen(
                cmd,
                env=base_env(TORCH_ACCEL_HOST_DEVICES=1),
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = []
    for p in nodes:
        try:
            outputs.append(p.communicate(timeout=120)[0])
        except subprocess.TimeoutExpired:
            for q in nodes:
                q.kill()
            raise
    for p, out in zip(nodes, outputs):
        assert p.returncode == 0, out[-3000:]
    assert len(_reports(tmp_path, 2)) == 2


LORA = [
    os.path.join(ROOT, "examples", "lora_finetune.py"),
    "--steps",
    "3",
    "--batch-size",
    "4",
    "--seq-len",
    "16",
    "--hidden",
    "64",
    "--layers",
    "1",
]


def _lora(tmp_path, name, launcher, extra=()):
    out = tmp_path / name
    proc = subprocess.run(
        launcher + LORA + ["--out", str(out), *extra],
        env=base_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out / "summary.json") as f:
        return out, json.load(f)


def _rank_stdout(log_dir, local_rank):
    for dirpath, _, names in os.walk(log_dir):
        if os.path.basename(dirpath) == str(local_rank) and "stdout.log" in names:
            with open(os.path.join(dirpath, "stdout.log")) as f:
                return f.read()
    raise AssertionError(f"no stdout of rank {local_rank} under {log_dir}")


def test_lora_example_under_torchrun_matches_single_process(tmp_path):
    _, single = _lora(tmp_path, "single", [sys.executable])
    for parallel in ("ddp", "fsdp"):
        port = free_port()
        logs = tmp_path / f"{parallel}-logs"
        launcher = TORCHRUN + [
            "--nproc-per-node",
            "2",
            "--rdzv-backend",
            "c10d",
            "--rdzv-endpoint",
            f"127.0.0.1:{port}",
            "--log-dir",
            str(logs),
            "--redirects",
            "1",
        ]
        out, summary = _lora(tmp_path, parallel, launcher, ["--fsdp"] if parallel == "fsdp" else [])
        assert summary["ranks"] == 2 and summary["parallel"] == parallel
        # The same global batch: the same losses, up to float32 summation order.
        for a, b in zip(summary["losses"], single["losses"]):
            assert abs(a - b) <= 1e-4 * abs(b), (parallel, summary["losses"], single["losses"])
        assert summary["fallback_calls"] == 0
        # Rank 0 alone wrote the adapter and the plots; the reloaded adapter agrees.
        written = sorted(os.listdir(out))
        assert written == ["adapter", "loss_curve.png", "memory_timeline.png", "summary.json"]
        assert "plots:" in _rank_stdout(logs, 0) and "plots:" not in _rank_stdout(logs, 1)
        assert abs(summary["reloaded_eval_loss"] - summary["eval_loss"]) <= 1e-4
