"""Starting rank processes for the distributed tests: free ports, an environment on the host
driver, a timeout so nothing can hang CI, and each rank's JSON report."""

import json
import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKER = os.path.join(ROOT, "tests", "ranks", "worker.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(**extra) -> dict:
    env = dict(os.environ)
    env.update(
        TORCH_ACCEL_DRIVER="host",
        TORCH_ACCEL_HOST_DEVICES="2",
        TORCH_ACCEL_HOST_MEMORY="1G",
        PYTHONPATH=ROOT,
        OMP_NUM_THREADS="1",
        TORCH_ACCEL_NUM_THREADS="1",
    )
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_ranks(
    scenario: str, tmp_path, world: int = 2, timeout: float = 120, env=None, expect_ok=True
) -> list:
    """Runs `worker.py scenario` as `world` ranks; returns each rank's (returncode, report,
    output). With expect_ok, a rank that fails or reports a failed check fails the test."""
    port = free_port()
    procs = []
    for rank in range(world):
        out = tmp_path / f"rank{rank}.json"
        e = base_env(
            RANK=rank,
            LOCAL_RANK=rank,
            WORLD_SIZE=world,
            LOCAL_WORLD_SIZE=world,
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=port,
            **(env or {}),
        )
        procs.append(
            (
                subprocess.Popen(
                    [sys.executable, WORKER, scenario, str(out)],
                    env=e,
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                ),
                out,
            )
        )
    results = []
    for proc, out in procs:
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            for p, _ in procs:
                p.kill()
            raise AssertionError(f"{scenario}: ranks did not finish within {timeout} s") from e
        report = json.loads(out.read_text()) if out.exists() else None
        results.append((proc.returncode, report, output))
    if expect_ok:
        for rank, (code, report, output) in enumerate(results):
            assert code == 0 and report is not None, f"rank {rank} exited {code}:\n{output[-4000:]}"
            failed = {k: v for k, v in report.items() if v is not None}
            assert not failed, f"rank {rank}: failed checks {json.dumps(failed, indent=1)}"
    return results
