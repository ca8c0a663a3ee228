import gc
import os
import subprocess
import sys

import pytest
import torch

import torch_accel  # noqa: F401  (registers the device)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# examples/lora_finetune.py's arguments for a demo model small enough for a test.
LORA_SMALL_ARGS = [
    "--hidden",
    "32",
    "--layers",
    "1",
    "--batch-size",
    "4",
    "--seq-len",
    "16",
    "--seed",
    "3",
]


def run_python(
    code: str, env: dict | None = None, timeout: int = 120
) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter, so a crash or an env setting stays contained."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=ROOT,
    )


# The real dtypes the kernels cover, for tests that sweep them.
REAL_DTYPES = [
    torch.float32,
    torch.bfloat16,
    torch.float16,
    torch.float64,
    torch.int64,
    torch.int32,
    torch.uint8,
    torch.bool,
]

PROTECT = os.environ.get("TORCH_ACCEL_PROTECT") == "1"

# For tests that move data between two devices: the host driver simulates two, a GPU machine
# may have one.
needs_two_devices = pytest.mark.skipif(
    torch.accel.device_count() < 2, reason="needs two accel devices"
)


@pytest.fixture(autouse=True)
def _clean_state():
    """Each test starts on device 0 with no leftover fallback counts."""
    torch.accel.set_device(0)
    torch_accel.reset_fallback_counts()
    yield
    torch.accel.synchronize()
    if PROTECT:
        # Protect mode re-protects every live segment around each queued work item, so a
        # cache grown by earlier tests would make later ones crawl.
        torch.accel.empty_cache()


@pytest.fixture
def strict():
    """The CPU fallback raises for the test's duration (its op must be native)."""
    mode = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("error")
    yield
    torch_accel.set_fallback_mode(mode)


@pytest.fixture
def settled_memory():
    """For tests that count bytes exactly: earlier tests' tensors caught in reference cycles
    (a pytest.raises traceback holds its frame) are freed now, not by a collection that
    happens to run mid-test."""
    gc.collect()
    torch.accel.synchronize()
