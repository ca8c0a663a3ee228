"""Bad input raises a clear PyTorch error and leaves the process, allocator and streams usable.
Each case runs in a fresh interpreter, so a crash counts as a failure. A case is
(statement, accepted exception types, text the message must contain[, setup[, env]]); the
setup runs outside the checked statement."""

import textwrap

import pytest

from conftest import run_python

ONE_DEVICE = {"TORCH_ACCEL_HOST_DEVICES": "1"}

CASES = {
    # --- devices (a bad index is torch.AcceleratorError, a RuntimeError, as on CUDA) --------
    "device index past device_count": (
        "torch.ones(2, device='accel:9')",
        "AcceleratorError",
        "Invalid device index accel:9",
    ),
    "negative device index": (
        "torch.ones(2, device='accel:-2')",
        "RuntimeError",
        "Invalid device string: 'accel:-2'",
    ),
    "set_device past device_count": (
        "torch.accel.set_device(5)",
        "AcceleratorError",
        "Invalid device index accel:5",
    ),
    "copy to a device that does not exist": (
        "torch.ones(2).to('accel:3')",
        "AcceleratorError",
        "Invalid device index accel:3",
    ),
    "stream on a device that does not exist": (
        "torch.accel.Stream(device=7)",
        "AcceleratorError",
        "Invalid device index accel:7",
    ),
    "cpu tensor mixed with accel tensor": (
        "torch.ones(3, device='accel') + torch.ones(3)",
        "RuntimeError",
        "Expected all tensors to be on the same device",
    ),
    "accel:0 tensor mixed with accel:1 tensor": (
        "torch.ones(3, device='accel:0') + torch.ones(3, device='accel:1')",
        "RuntimeError",
        "Expected all tensors to be on the same device",
    ),
    "out= on another device": (
        "torch.add(torch.ones(3, device='accel:0'), 1, out=torch.empty(3, device='accel:1'))",
        "RuntimeError",
        "Expected all tensors to be on the same device",
    ),
    "record_stream with a cpu stream": (
        "torch.ones(3, device='accel').record_stream(torch.Stream('cpu'))",
        "RuntimeError",
        "record_stream expects an accel stream, got a stream of cpu",
    ),
    "record_stream with another device's stream": (
        "x.record_stream(torch.accel.Stream(device=1))",
        "RuntimeError",
        "the tensor is on accel:0 but the stream belongs to accel:1",
        "x = torch.ones(3, device='accel:0')",
    ),
    "checkpoint saved on accel:1 loaded with one device": (
        "torch.load(os.environ['CKPT'])",
        "AcceleratorError",
        "Invalid device index accel:1",
        "import os",
        ONE_DEVICE,
    ),
    # --- sizes and memory ------------------------------------------------------------------
    "negative size": ("torch.empty(-2, 3, device='accel')", "RuntimeError", "negative dimension"),
    "overflowing size": (
        "torch.empty(2**40, 2**40, dtype=torch.float32, device='accel')",
        "RuntimeError",
        "Storage size calculation overflowed",
    ),
    "allocation past capacity": (
        "torch.empty(torch.accel.get_device_properties(0).total_memory * 2, dtype=torch.uint8, "
        "device='accel')",
        "OutOfMemoryError",
        "Tried to allocate",
    ),
    "memory fraction above one": (
        "torch.accel.set_per_process_memory_fraction(1.5)",
        "RuntimeError|ValueError",
        "Invalid fraction value: 1.5",
    ),
    # --- indexing (these ops may run through the fallback: the check is the error) ----------
    "advanced index out of range": (
        "x[torch.tensor([7], device='accel')]; torch.accel.synchronize()",
        "IndexError|RuntimeError",
        "out of bounds",
        "x = torch.arange(5.0, device='accel')",
    ),
    "index_select index out of range": (
        "torch.index_select(x, 0, torch.tensor([9], device='accel')); torch.accel.synchronize()",
        "IndexError|RuntimeError",
        "out of range",
        "x = torch.arange(5.0, device='accel')",
    ),
    "gather index out of range": (
        "torch.gather(x, 0, torch.tensor([9], device='accel')); torch.accel.synchronize()",
        "RuntimeError",
        "out of bounds",
        "x = torch.arange(5.0, device='accel')",
    ),
    "narrow past the end": (
        "torch.ones(4, device='accel').narrow(0, 3, 5)",
        "RuntimeError",
        "exceeds dimension size",
    ),
    # --- shapes, views, outputs ------------------------------------------------------------
    "mismatched shapes": (
        "torch.ones(3, device='accel') + torch.ones(4, device='accel')",
        "RuntimeError",
        "The size of tensor a (3) must match the size of tensor b (4)",
    ),
    "matmul shapes": (
        "torch.ones(2, 3, device='accel') @ torch.ones(4, 5, device='accel')",
        "RuntimeError",
        "cannot be multiplied",
    ),
    "in-place result would broadcast": (
        "torch.ones(3, device='accel').add_(torch.ones(2, 3, device='accel'))",
        "RuntimeError",
        "doesn't match the broadcast shape",
    ),
    "copy_ from a wrong shape": (
        "torch.ones(3, device='accel').copy_(torch.ones(4))",
        "RuntimeError",
        "must match the existing size (4)",
    ),
    "view to an incompatible shape": (
        "torch.ones(6, device='accel').view(4, 2)",
        "RuntimeError",
        "shape '[4, 2]' is invalid for input of size 6",
    ),
    "view of a non-contiguous tensor": (
        "torch.ones(4, 4, device='accel').t().view(16)",
        "RuntimeError",
        "view size is not compatible with input tensor's size and stride",
    ),
    "output overlapping its input": (
        "torch.add(a[:3], 1, out=a[1:])",
        "RuntimeError",
        "some elements of the input tensor and the written-to tensor refer to a single memory "
        "location",
        "a = torch.ones(4, device='accel')",
    ),
    "expanded output": (
        "torch.add(torch.ones(4, device='accel'), 1, out=a.expand(4))",
        "RuntimeError",
        "more than one element of the written-to tensor refers to a single memory location",
        "a = torch.ones(1, device='accel')",
    ),
    "out= with a narrower dtype": (
        "torch.add(torch.ones(3, device='accel'), 1.5, "
        "out=torch.empty(3, dtype=torch.int64, device='accel'))",
        "RuntimeError",
        "can't be cast to the desired output type Long",
    ),
    # (set_ to a storage smaller than the view is not an error in PyTorch: a resizable storage
    # grows, on CPU as on accel.)
    "set_ with a negative storage offset": (
        "torch.empty(0, device='accel')"
        ".set_(torch.empty(4, device='accel').untyped_storage(), -1, (2,), (1,))",
        "RuntimeError",
        "invalid storage offset -1",
    ),
    "set_ with sizes and strides of different lengths": (
        "torch.empty(0, device='accel')"
        ".set_(torch.empty(4, device='accel').untyped_storage(), 0, (2,), (1, 2))",
        "RuntimeError",
        "unequal size length (1) and stride length (2)",
    ),
    "resize_ of a tensor that requires grad": (
        "torch.ones(4, device='accel', requires_grad=True).resize_(8)",
        "RuntimeError",
        "cannot resize variables that require grad",
    ),
    "item of a multi-element tensor": (
        "torch.ones(3, device='accel').item()",
        "RuntimeError",
        "a Tensor with 3 elements cannot be converted to Scalar",
    ),
    "integer tensor requiring grad": (
        "torch.ones(3, dtype=torch.long, device='accel', requires_grad=True)",
        "RuntimeError",
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    # --- configuration ---------------------------------------------------------------------
    "invalid fallback mode": (
        "torch_accel.set_fallback_mode('sometimes')",
        "RuntimeError|ValueError",
        "fallback mode must be warn, silent or error, got 'sometimes'",
    ),
}

TEMPLATE = """
import torch, torch_accel
keep = torch.arange(10.0, device='accel')
{setup}
try:
{stmt}
    print('NO ERROR')
except Exception as e:
    print('TYPE', type(e).__name__)
    print('MSG', str(e).replace(chr(10), ' '))
# everything still works afterwards
s = torch.accel.Stream()
with torch.accel.stream(s):
    y = torch.ones(1000, device='accel') * 2
s.synchronize()
print('OK', (keep.cpu() == torch.arange(10.0)).all().item(), y.cpu().sum().item())
"""


@pytest.fixture(scope="module")
def checkpoint_on_accel1(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ckpt") / "on_accel1.pt")
    proc = run_python(
        f"import torch, torch_accel\ntorch.save(torch.ones(3, device='accel:1'), {path!r})"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name, checkpoint_on_accel1):
    stmt, types, message, *rest = CASES[name]
    setup = rest[0] if rest else ""
    env = dict(rest[1]) if len(rest) > 1 else {}
    env["CKPT"] = checkpoint_on_accel1
    proc = run_python(TEMPLATE.format(setup=setup, stmt=textwrap.indent(stmt, "    ")), env=env)
    assert proc.returncode == 0, f"crashed: {proc.stderr[-2000:]}"
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert "NO" not in lines, f"{name}: no error raised"
    assert lines["TYPE"] in types.split("|"), lines
    assert message in lines["MSG"], lines["MSG"]
    assert lines["OK"] == "True 2000.0"


def test_invalid_fallback_env_value():
    # Read when the policy is first needed: at the first fallback, or when asked for.
    proc = run_python(
        "import torch, torch_accel\nprint(torch_accel.fallback_mode())",
        env={"TORCH_ACCEL_FALLBACK": "sometimes"},
    )
    assert proc.returncode != 0, proc.stdout
    assert "TORCH_ACCEL_FALLBACK must be warn, silent or error, got 'sometimes'" in proc.stderr, (
        proc.stderr[-2000:]
    )


def test_invalid_host_memory_env_value():
    proc = run_python(
        "import torch, torch_accel\ntorch.ones(2, device='accel')",
        env={"TORCH_ACCEL_HOST_MEMORY": "lots"},
    )
    assert proc.returncode != 0
    assert "TORCH_ACCEL_HOST_MEMORY='lots'" in proc.stderr, proc.stderr[-2000:]


def test_grad_scaler_skips_step_on_inf_and_nan():
    code = textwrap.dedent("""
        import torch, torch_accel, warnings
        warnings.simplefilter('ignore')
        model = torch.nn.Linear(4, 2).to('accel')
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler('accel', init_scale=1024.0)
        for bad in (float('inf'), float('nan')):
            before = [p.detach().cpu().clone() for p in model.parameters()]
            loss = model(torch.full((3, 4), bad, device='accel')).sum()
            scaler.scale(loss).backward()
            scale = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            after = [p.detach().cpu() for p in model.parameters()]
            print('UNCHANGED', all(torch.equal(a, b) for a, b in zip(before, after)))
            print('SCALE', scaler.get_scale() < scale)
        # a finite step afterwards does update
        before = [p.detach().cpu().clone() for p in model.parameters()]
        scaler.scale(model(torch.ones(3, 4, device='accel')).sum()).backward()
        scaler.step(opt)
        scaler.update()
        after = [p.detach().cpu() for p in model.parameters()]
        print('STEPPED', not all(torch.equal(a, b) for a, b in zip(before, after)))
    """)
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("UNCHANGED True") == 2, proc.stdout
    assert proc.stdout.count("SCALE True") == 2, proc.stdout
    assert "STEPPED True" in proc.stdout, proc.stdout


SURVIVAL = """
import torch, torch_accel

def train_step(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 8), torch.nn.Flatten(),
                                torch.nn.Linear(24, 16), torch.nn.GELU(),
                                torch.nn.Linear(16, 3)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    tokens = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 1, 2]], device=device)
    labels = torch.tensor([0, 1, 2, 1], device=device)
    losses = []
    for _ in range(2):
        loss = torch.nn.functional.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]

x = torch.arange(12.0, device='accel').view(4, 3)
bad = {BAD!r}
try:
    eval(bad)
    torch.accel.synchronize()
    print('NO ERROR')
except Exception as e:
    print('TYPE', type(e).__name__)
cpu_losses, cpu_params = train_step('cpu')
losses, params = train_step('accel')
torch.testing.assert_close(losses, cpu_losses, rtol=1e-5, atol=1e-6)
for p, q in zip(params, cpu_params):
    torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
print('TRAINED', len(params))
"""


@pytest.mark.parametrize(
    "bad",
    [
        "torch.index_select(x, 0, torch.tensor([9], device='accel'))",
        "torch.gather(x, 0, torch.tensor([[9, 0, 0]], device='accel'))",
        "torch.nn.functional.embedding(torch.tensor([11], device='accel'), x)",
        "torch.nn.functional.nll_loss(x.log_softmax(1), torch.tensor([0, 1, 7, 2], "
        "device='accel'))",
        "x[torch.tensor([5], device='accel')]",
        "torch.masked_select(x, x > 4, out=x)",
        "x.scatter_(0, torch.tensor([[6, 0, 0]], device='accel'), 1.0)",
    ],
)
def test_one_bad_call_then_a_training_step_matches_cpu(bad):
    """A bad index is a PyTorch error (raised at once, or at the next synchronize for an error
    found inside a kernel), and the same process then trains exactly as the CPU does."""
    proc = run_python(SURVIVAL.replace("{BAD!r}", repr(bad)))
    assert proc.returncode == 0, f"crashed or diverged: {proc.stderr[-3000:]}"
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert "NO" not in lines, f"{bad}: no error raised"
    assert lines["TYPE"] in ("IndexError", "RuntimeError", "AcceleratorError"), lines
    assert lines["TRAINED"] == "5"
