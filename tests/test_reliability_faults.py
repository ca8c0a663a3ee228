"""Fault injection (TORCH_ACCEL_FAULTS): a training loop whose device mallocs, copies and kernel
launches fail at random survives every failure as a clean Python exception, and afterwards the
model computes correctly and the allocator has lost nothing."""

import re

from conftest import run_python

TRAIN = r"""
import gc, warnings
import torch, torch_accel
warnings.simplefilter("ignore")            # fallback warnings: ops may run via the fallback
torch_accel.set_fallback_mode("silent")
torch.manual_seed(0)
caught = {"oom": 0, "memcpy": 0, "launch": 0}

def classify(e):
    msg = str(e)
    if isinstance(e, torch.OutOfMemoryError):
        assert "out of memory" in msg.lower(), msg
        return "oom"
    assert type(e) is torch.AcceleratorError, (type(e), msg)  # a RuntimeError, as on CUDA
    assert "accel runtime error 'unspecified launch failure' in " in msg, msg
    return "memcpy" if "memcpyAsync" in msg else "launch"

def retry(fn):
    # Runs fn until it completes: each failure must be one of the injected kinds.
    for _ in range(100):
        try:
            return fn()
        except (RuntimeError, torch.OutOfMemoryError) as e:
            caught[classify(e)] += 1
    raise AssertionError("100 failures in a row")

# A batch above 1 MiB comes from the large pool, which empty_cache can give back each time.
X, Y = torch.randn(20000, 16), torch.randn(20000, 4)
model = retry(lambda: torch.nn.Linear(16, 4).to("accel"))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
steps_ok = 0
for step in range(300):
    x = y = loss = None
    if step % 5 == 0:
        torch.accel.empty_cache()  # so that device mallocs (and their faults) keep happening
    try:
        x, y = X.to("accel"), Y.to("accel")
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
        steps_ok += 1
    except (RuntimeError, torch.OutOfMemoryError) as e:
        caught[classify(e)] += 1

# The model still computes what the CPU computes with the same parameters.
w, b = retry(lambda: (model.weight.detach().cpu(), model.bias.detach().cpu()))
out = retry(lambda: model(X.to("accel")).detach().cpu())
torch.testing.assert_close(out, X @ w.T + b, rtol=1e-4, atol=1e-4)

# Nothing is lost: with every tensor gone the allocator holds nothing and gives all back.
del model, opt, out, x, y, loss
gc.collect()
retry(torch.accel.synchronize)
stats = torch.accel.memory_stats()
assert stats["allocated_bytes.all.current"] == 0, stats["allocated_bytes.all.current"]
assert stats["active_bytes.all.current"] == 0, stats["active_bytes.all.current"]
assert stats["allocation.all.current"] == 0
torch.accel.empty_cache()
stats = torch.accel.memory_stats()
assert stats["reserved_bytes.all.current"] == 0, stats["reserved_bytes.all.current"]
assert stats["num_device_alloc"] == stats["num_device_free"], stats
print("STEPS_OK", steps_ok)
print("CAUGHT", caught["oom"], caught["memcpy"], caught["launch"], stats["num_ooms"])
"""

INJECTED = re.compile(r"torch_accel faults injected: malloc=(\d+) memcpy=(\d+) launch=(\d+)")


def _run(spec):
    proc = run_python(
        TRAIN, env={"TORCH_ACCEL_FAULTS": spec, "TORCH_ACCEL_DRIVER": "host"}, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    oom, memcpy, launch, num_ooms = map(int, out["CAUGHT"].split())
    injected = INJECTED.search(proc.stderr)
    assert injected, proc.stderr[-2000:]
    inj_malloc, inj_memcpy, inj_launch = map(int, injected.groups())
    print(
        f"{spec}: injected malloc={inj_malloc} memcpy={inj_memcpy} launch={inj_launch}; "
        f"survived oom={oom} memcpy={memcpy} launch={launch}; steps ok {out['STEPS_OK']}/300"
    )
    return (
        (inj_malloc, inj_memcpy, inj_launch),
        (oom, memcpy, launch, num_ooms),
        int(out["STEPS_OK"]),
    )


def test_training_survives_injected_faults():
    (inj_malloc, inj_memcpy, inj_launch), (oom, memcpy, launch, num_ooms), ok = _run(
        "malloc:0.2,memcpy:0.01,launch:0.01,seed:1"
    )
    # Every failed copy or launch surfaced exactly once, as a RuntimeError naming the call.
    assert memcpy == inj_memcpy and launch == inj_launch
    assert memcpy > 0 and launch > 0
    # The allocator's retry absorbs a failed device malloc unless the retry fails too; those
    # that reached Python are torch.OutOfMemoryError and are counted as OOMs.
    assert inj_malloc > 0 and oom <= inj_malloc and oom == num_ooms
    assert ok > 100  # most steps still complete


def test_faults_are_deterministic_with_a_seed():
    assert _run("malloc:0.05,launch:0.02,seed:7") == _run("malloc:0.05,launch:0.02,seed:7")


def test_malformed_fault_spec_is_a_clear_error():
    proc = run_python(
        "import torch, torch_accel\ntorch.ones(1, device='accel')",
        env={"TORCH_ACCEL_FAULTS": "malloc:2", "TORCH_ACCEL_DRIVER": "host"},
    )
    assert proc.returncode != 0
    assert "TORCH_ACCEL_FAULTS='malloc:2'" in proc.stderr, proc.stderr[-2000:]
