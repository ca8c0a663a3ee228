"""One prepared check for a machine with an NVIDIA GPU: `make gpu-check DIR=...`.

Needs only what such a machine has (torch with CUDA, triton, nvcc, cmake, ninja, pytest; no
package registry). The steps run in the order that gives the most information first: build
(the CUDA plugin for this GPU's own architecture only), a smoke test, the op tests on the cuda
driver, the benchmarks next to torch.cuda, the compile tests. Each step has a time limit
(together 8 minutes) and DIR/summary.json is rewritten as each step finishes, so a run cut
off from outside still reports what it did. Each step's output is in DIR/<step>.log.

    python scripts/gpu_check.py DIR            run it
    python scripts/gpu_check.py DIR --dry-run  the plan, each command replaced by an echo
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUDGET_SECONDS = 8 * 60

SMOKE = """
import torch, torch_accel
assert torch_accel.driver() == 'cuda', torch_accel.driver()
a = torch.randn(64, 64, device='accel'); b = torch.randn(64, 64, device='accel')
torch.testing.assert_close((a @ b).cpu(), a.cpu() @ b.cpu(), atol=1e-4, rtol=1e-4)
s = torch.accel.Stream(); e = torch.accel.Event()
s.wait_stream(torch.accel.current_stream())
with torch.accel.stream(s):
    c = (a @ b).sum()
e.record(s)
e.query(); s.query()  # a query that finds work pending must not fail the next launch
torch.testing.assert_close((a + 1).cpu(), a.cpu() + 1)
torch.accel.manual_seed(0); x = torch.rand(8, device='accel').cpu()
print('driver', torch_accel.driver(), torch.accel.get_arch_list(), 'ok; uniforms', x.tolist())
"""

OP_TESTS = [
    "tests/test_blas_ops.py",
    "tests/test_random_ops.py",
    "tests/test_binary_ops.py",
    "tests/test_elementwise_ops.py",
    "tests/test_reduction_ops.py",
    "tests/test_attention.py",
    "tests/test_scan_ops.py",
    "tests/test_sort_ops.py",
    "tests/test_autocast.py",
    "tests/test_copy.py",
    "tests/test_fallback.py",
    "tests/test_streams.py",
]


def steps(py, out, gpus=1):
    """(name, seconds, command): the plan, most informative first."""
    pytest = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return [
        ("build", 180, [py, "setup.py", "-q", "build_ext", "--inplace"]),
        ("smoke", 20, [py, "-c", SMOKE]),
        ("op_tests", 100, pytest + ["--junitxml", os.path.join(out, "op_tests.xml")] + OP_TESTS),
        ("bench", 55, [py, "benchmarks/gpu_side_by_side.py", "--out", out]),
        ("lora_step", 35, [py, "benchmarks/lora_step.py", "--steps", "5", "--bf16", "--out", out]),
        ("compile_tests", 45, pytest + ["tests/test_compile.py"]),
        (
            "compile_bench",
            30,
            [py, "benchmarks/compile.py", "--no-lora", "--repeats", "10", "--out", out],
        ),
        # NCCL through the accl backend, two ranks where there are two GPUs.
        (
            "nccl",
            15,
            [
                py,
                "benchmarks/distributed.py",
                "--world",
                str(min(gpus, 2)),
                "--no-lora",
                "--max-mib",
                "64",
                "--out",
                out,
            ],
        ),
    ]


def device_arch():
    """This GPU's compute capability as CMake spells it ("90"), or None."""
    if shutil.which("nvidia-smi"):
        r = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        first = r.stdout.strip().splitlines()[:1]
        if r.returncode == 0 and first and first[0].replace(".", "").isdigit():
            return first[0].replace(".", "")
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"{major}{minor}"
    except ImportError:
        pass
    return None


def gpu_count():
    if not shutil.which("nvidia-smi"):
        return 1
    r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return max(1, r.stdout.count("GPU "))


def gpu_name():
    if not shutil.which("nvidia-smi"):
        return "no nvidia-smi"
    r = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    )
    return r.stdout.strip() or r.stderr.strip()


def write_summary(path, summary):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(tmp, path)  # a reader never sees half a file


def tail(path, lines=3):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-lines:]
    except OSError:
        return []


def run_step(command, limit, log_path, env):
    """(status, rc, seconds): the command under its limit, its whole process group killed at
    the limit (pytest and the build start children)."""
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            rc = proc.wait(timeout=limit)
            status = "ok" if rc == 0 else "failed"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            status = "timeout"
    return status, rc, round(time.monotonic() - t0, 1)


# Steps the rest cannot do without: no build, nothing to run; a failed smoke test means no
# usable device (no GPU, a driver older than the runtime), and every later step would only
# fail the same way.
GATES = ("build", "smoke")


def run_all(plan, out, env, summary):
    """Runs the plan in order, rewriting out/summary.json after each step. A failed gate step
    skips the rest, naming it."""
    path = os.path.join(out, "summary.json")
    summary["steps"] = [{"name": n, "limit_s": s, "status": "pending"} for n, s, _ in plan]
    write_summary(path, summary)
    failed_gate = None
    for entry, (name, limit, command) in zip(summary["steps"], plan):
        if failed_gate:
            entry["status"] = f"skipped: the {failed_gate} step failed"
        else:
            log = os.path.join(out, f"{name}.log")
            entry["status"], entry["rc"], entry["seconds"] = run_step(command, limit, log, env)
            entry["tail"] = tail(log)
            if name in GATES and entry["status"] != "ok":
                failed_gate = name
            print(
                f"{name}: {entry['status']} (rc {entry['rc']}, {entry['seconds']} s of {limit})",
                flush=True,
            )
        write_summary(path, summary)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", nargs="?", default="gpu-check")
    parser.add_argument(
        "--dry-run", action="store_true", help="run every step as an echo of its command"
    )
    args = parser.parse_args(argv)
    out = os.path.abspath(args.dir)
    os.makedirs(out, exist_ok=True)
    py = os.environ.get("PYTHON", sys.executable)
    plan = steps(py, out, 1 if args.dry_run else gpu_count())
    assert sum(s for _, s, _ in plan) <= BUDGET_SECONDS, "step limits exceed the budget"
    arch = "dry-run" if args.dry_run else device_arch()

    env = dict(os.environ)
    env.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
    env.setdefault("TORCH_ACCEL_BUILD_DIR", os.path.join(ROOT, "build", "cmake"))
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # the tests import torch_accel themselves
    env["TORCH_ACCEL_DRIVER"] = "cuda"
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if arch and not args.dry_run:  # one architecture: half the device compile of "80;90"
        env["TORCH_ACCEL_CMAKE_ARGS"] = (
            env.get("TORCH_ACCEL_CMAKE_ARGS", "") + f" -DACCEL_CUDA_ARCHITECTURES={arch}"
        ).strip()
    if args.dry_run:
        plan = [(n, s, [py, "-c", "import sys; print(sys.argv[1:])"] + c) for n, s, c in plan]

    summary = {
        "gpu": "dry run" if args.dry_run else gpu_name(),
        "arch": arch,
        "budget_s": BUDGET_SECONDS,
    }
    run_all(plan, out, env, summary)
    print(json.dumps({s["name"]: s["status"] for s in summary["steps"]}))
    return 0 if all(s["status"] == "ok" for s in summary["steps"]) else 1


if __name__ == "__main__":
    sys.exit(main())
