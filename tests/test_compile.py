"""torch.compile on accel (Inductor's C++ kernels on the host driver): fusion, stream order,
training, dynamic shapes, fallback ops, with the Python wrapper and with cpp_wrapper=True; and
the CUDA driver's Triton path, generated here and checked as text. Every test starts with
Dynamo reset and the FX graph cache off, so each one really compiles."""

import json
import os
import re
import sys
import warnings

import pytest
import torch
import torch._dynamo
import torch._inductor.config as inductor_config
from torch._dynamo.utils import counters
from torch._inductor import metrics
from torch._inductor.utils import run_and_get_code

import torch_accel
from conftest import LORA_SMALL_ARGS, ROOT, run_python

host_only = pytest.mark.skipif(
    torch_accel.driver() != "host", reason="covers the host driver's C++ kernels"
)


# What accel's C++ wrapper builds on that torch < 2.13's CppWrapperCpu lacks; there
# cpp_wrapper=True is refused with the reason (test_cpp_wrapper_missing_api_is_refused...).
def _cpp_wrapper_unsupported():
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu

    if hasattr(CppWrapperCpu, "generate_fallback_kernel_with_runtime_lookup_boxed"):
        return None
    return (
        f"torch {torch.__version__}'s CppWrapperCpu has no boxed dispatcher calls "
        "(generate_fallback_kernel_with_runtime_lookup_boxed): accel's cpp_wrapper=True "
        "needs torch >= 2.13"
    )


CPP_WRAPPER_UNSUPPORTED = _cpp_wrapper_unsupported()
needs_cpp_wrapper = pytest.mark.skipif(
    CPP_WRAPPER_UNSUPPORTED is not None, reason=CPP_WRAPPER_UNSUPPORTED or ""
)

# The two wrappers Inductor can generate around the kernels: Python, and C++ (cpp_wrapper=True).
WRAPPERS = pytest.mark.parametrize(
    "wrapper", ["python", pytest.param("cpp", marks=needs_cpp_wrapper)], indirect=True
)


@pytest.fixture
def wrapper(request):
    with inductor_config.patch(cpp_wrapper=request.param == "cpp"):
        yield request.param


def _kernel_call(wrapper, kernel="cpp_fused_"):
    """How each wrapper calls an Inductor C++ kernel in stream order."""
    if wrapper == "cpp":
        return f"torch_accel::KernelScope accel_scope(0);\n{kernel}"
    return f"_accel_call_kernel(0, {kernel}"


@pytest.fixture(autouse=True)
def _fresh_compile():
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    with (
        inductor_config.patch(fx_graph_cache=False),
        torch._dynamo.config.patch(suppress_errors=False),
    ):
        yield
    torch._dynamo.reset()


def _aten_ops_run(fn, *args):
    """The aten ops dispatched while fn runs (the profiler sees every dispatch; Dynamo runs
    compiled code under it, unlike under a TorchDispatchMode)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        out = fn(*args)
    return out, {e.name for e in prof.events() if e.name.startswith("aten::")}


def _chain(x, y):
    return (x * 2 + 1).sin() * y - x


def test_hook_registered():
    from torch._inductor.codegen.common import init_backend_registration

    init_backend_registration()  # registration is lazy: it happens when Inductor starts
    status = torch_accel._inductor.status()
    assert status["dynamo"] == "ok" and status["inductor"] == "ok", status
    if torch_accel.driver() == "host" and CPP_WRAPPER_UNSUPPORTED is None:
        assert status["cpp_wrapper"] == "ok", status
    elif torch_accel.driver() == "host":
        assert (
            status["cpp_wrapper"].startswith("disabled: RuntimeError: this torch")
            and "generate_fallback_kernel_with_runtime_lookup_boxed" in status["cpp_wrapper"]
        ), status
    from torch._dynamo.device_interface import get_interface_for_device

    iface = get_interface_for_device("accel")
    assert iface.device_count() == torch.accel.device_count()
    assert iface.current_device() == 0
    assert isinstance(iface.current_stream(), torch.Stream)
    # On the cuda driver the default stream is CUDA's legacy NULL stream, as in torch.cuda.
    raw = iface.get_raw_stream(0)
    assert isinstance(raw, int) and (raw != 0 or torch_accel.driver() == "cuda")
    assert iface.Worker.get_device_properties("accel:0").multi_processor_count >= 1


@host_only
@WRAPPERS
def test_pointwise_chain_is_one_fused_kernel(wrapper):
    x, y = torch.randn(257, 33), torch.randn(257, 33)
    xa, ya = x.to("accel"), y.to("accel")
    compiled = torch.compile(_chain)
    out, code = run_and_get_code(compiled, xa, ya)
    assert metrics.generated_kernel_count == 1
    assert code[0].count("cpp_fused_") >= 2  # defined once, called once
    assert _kernel_call(wrapper) in code[0].replace("    ", ""), code[0]
    torch.testing.assert_close(out.cpu(), _chain(x, y), rtol=1e-5, atol=1e-5)
    assert torch_accel.fallback_counts() == {}
    # At run time the compiled graph launches no aten op (the eager sin/mul/add/sub kernels
    # are not used: the fused C++ kernel computes them) and nothing falls back.
    fused = {"aten::sin", "aten::mul", "aten::add", "aten::sub"}
    out2, ops = _aten_ops_run(compiled, xa, ya)
    assert not fused & ops, ops
    torch.testing.assert_close(out2.cpu(), _chain(x, y), rtol=1e-5, atol=1e-5)
    assert torch_accel.fallback_counts() == {}
    _, eager_ops = _aten_ops_run(_chain, xa, ya)
    assert fused <= eager_ops  # the check above could have seen them


@host_only
@WRAPPERS
def test_kernel_waits_for_earlier_work_on_the_stream(wrapper):
    # x * 3 and the additions are native asynchronous launches on the current stream; the
    # compiled kernel must see their results, also on a side stream (which the reader then
    # waits for, as with CUDA streams: the kernel is itself a launch on that stream).
    compiled = torch.compile(_chain)
    x, y = torch.randn(1 << 20), torch.randn(1 << 20)
    for stream in [None, torch.accel.Stream()]:
        with torch.accel.stream(stream):
            xa, ya = x.to("accel"), y.to("accel")
            for _ in range(3):
                xa = xa * 3
                ya = ya + 1
            out = compiled(xa, ya)
        if stream is not None:
            torch.accel.current_stream().wait_stream(stream)
        torch.testing.assert_close(out.cpu(), _chain(x * 27, y + 3), rtol=1e-4, atol=1e-4)


@host_only
@WRAPPERS
def test_protect_mode_kernels_do_not_fault(wrapper):
    # With protect mode, a kernel touching accel memory outside its scope would SIGSEGV.
    r = run_python(
        "import torch, torch_accel, torch._inductor.config as c\n"
        f"c.fx_graph_cache = False; c.cpp_wrapper = {wrapper == 'cpp'}\n"
        "f = torch.compile(lambda x, w: ((x @ w) * 2 + 1).sin() * x)\n"
        "x, w = torch.randn(40, 40), torch.randn(40, 40)\n"
        "torch.testing.assert_close(f(x.to('accel'), w.to('accel')).cpu(),\n"
        "                           ((x @ w) * 2 + 1).sin() * x, rtol=1e-4, atol=1e-4)\n"
        "print('ok')\n",
        env={"TORCH_ACCEL_PROTECT": "1"},
        timeout=170,
    )
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


@host_only
@WRAPPERS
def test_device_error_before_a_kernel_is_raised_by_the_compiled_call(wrapper):
    # An earlier launch failed on the stream (nll_loss's device-side bounds check, a sticky
    # error as with CUDA); the compiled call raises it, at the latest when its result is read
    # (the Python wrapper's kernels are stream launches, as eager ones; cpp_wrapper's kernels
    # wait for the stream, and raise at the call). Then the device works again.
    r = run_python(
        "import torch, torch_accel, torch._inductor.config as c\n"
        f"c.fx_graph_cache = False; c.cpp_wrapper = {wrapper == 'cpp'}\n"
        "f = torch.compile(lambda x: (x * 2 + 1).sin())\n"
        "x = torch.randn(4, 5, device='accel')\n"
        "assert torch.allclose(f(x).cpu(), (x.cpu() * 2 + 1).sin())\n"
        "torch.nn.functional.nll_loss(x, torch.tensor([0, 1, 7, 2], device='accel'))\n"
        "try:\n"
        "    f(x).cpu()\n"
        "except RuntimeError as e:\n"
        "    print('RAISED', e)\n"
        "assert torch.allclose(f(x).cpu(), (x.cpu() * 2 + 1).sin())\n",
        timeout=170,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "RAISED" in r.stdout and "Target 7 is out of bounds." in r.stdout, r.stdout


@host_only
@WRAPPERS
def test_mlp_trains_like_eager(wrapper):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    ref = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    ref.load_state_dict(model.state_dict())
    model.to("accel")
    compiled = torch.compile(model)
    x, target = torch.randn(5, 8), torch.randn(5, 4)
    for _ in range(2):  # the second step runs with the first step's updated weights
        loss = torch.nn.functional.mse_loss(compiled(x.to("accel")), target.to("accel"))
        loss.backward()
        ref_loss = torch.nn.functional.mse_loss(ref(x), target)
        ref_loss.backward()
        torch.testing.assert_close(loss.cpu(), ref_loss, rtol=1e-5, atol=1e-5)
        with torch.no_grad():
            for p, q in zip(model.parameters(), ref.parameters()):
                torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-5)
                p -= 0.1 * p.grad
                q -= 0.1 * q.grad
                p.grad = None
                q.grad = None
    # forward and backward were both compiled to C++ kernels
    assert metrics.generated_kernel_count >= 2
    assert not counters["graph_break"], dict(counters["graph_break"])


@host_only
@WRAPPERS
def test_convolution_net_trains_like_eager(wrapper):
    # Convolutions run through the counted fallback; their outputs must have the strides
    # FakeTensor predicts for accel (the CPU would return channels_last for channels_last
    # weights, which Inductor's layout optimisation produces).
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(4, 2, 3),
        torch.nn.Flatten(),
        torch.nn.Linear(72, 3),
    )
    x = torch.randn(2, 3, 8, 8)
    ref_out = net(x)  # CPU eager first, then the same parameters on accel
    ref_out.sum().backward()
    ref_grads = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    net.to("accel")
    out = torch.compile(net)(x.to("accel"))
    out.sum().backward()
    torch.testing.assert_close(out.cpu(), ref_out, rtol=1e-4, atol=1e-4)
    for p, g in zip(net.parameters(), ref_grads):
        torch.testing.assert_close(p.grad.cpu(), g, rtol=1e-4, atol=1e-4)
    assert metrics.generated_kernel_count >= 2
    assert not counters["graph_break"], dict(counters["graph_break"])


@host_only
@needs_cpp_wrapper
def test_cpp_wrapper_calls_extern_kernels_through_the_dispatcher():
    # CPU's C shims (aoti_torch_cpu_mm_out, ...) would run at::cpu kernels on the calling
    # thread, outside accel's streams; on accel every extern call goes to the dispatcher.
    def f(x, w, b):
        lengths = torch.tensor([2, 4], device=x.device)
        return (torch.addmm(b, x, w).relu() @ w).sin() + torch.segment_reduce(
            x, "max", lengths=lengths
        ).sum()

    x, w, b = torch.randn(6, 6), torch.randn(6, 6), torch.randn(6)
    with inductor_config.patch(cpp_wrapper=True):
        out, code = run_and_get_code(torch.compile(f), x.to("accel"), w.to("accel"), b.to("accel"))
    torch.testing.assert_close(out.cpu(), f(x, w, b), rtol=1e-4, atol=1e-4)
    assert 'findSchemaOrThrow("aten::addmm", "out")' in code[0]
    assert 'findSchemaOrThrow("aten::mm", "out")' in code[0]
    assert "aoti_torch_cpu_" not in code[0] and "aoti_torch_accel_" not in code[0]
    # a fallback op, through the dispatcher too (torch 2.14's runtime lookup calls it boxed)
    assert (
        'aoti_torch_call_dispatcher("aten::segment_reduce"' in code[0]
        or 'findSchemaOrThrow("aten::segment_reduce", "")' in code[0]
    ), code[0]
    assert "cached_torch_device_type_privateuse1" in code[0]  # buffers from accel's allocator
    assert torch_accel.fallback_counts() == {"aten::segment_reduce": 1}


@host_only
@WRAPPERS
def test_dynamic_batch_size_compiles_once(wrapper):
    def f(x, w):
        return torch.relu(x @ w) * 0.5 + x.sum(dim=1, keepdim=True)

    compiled = torch.compile(f)
    w = torch.randn(6, 6)
    for batch in [4, 7, 11]:
        x = torch.randn(batch, 6)
        out = compiled(x.to("accel"), w.to("accel"))
        torch.testing.assert_close(out.cpu(), f(x, w), rtol=1e-5, atol=1e-5)
    # one static graph (batch 4), then one dynamic graph serves both 7 and 11; no graph
    # breaks, no frame left to eager
    assert counters["stats"]["unique_graphs"] == 2, dict(counters["stats"])
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert counters["frames"]["ok"] == counters["frames"]["total"]


@host_only
@WRAPPERS
def test_op_without_lowering_or_kernel_falls_back_with_warning(wrapper, capfd):
    # segment_reduce has no Inductor lowering (it stays an aten call in the graph) and no
    # native accel kernel: it runs through the counted CPU fallback, between fused kernels.
    def f(x, lengths):
        return torch.segment_reduce(x.sin() * 2, "max", lengths=lengths) + 1

    x, lengths = torch.randn(300), torch.tensor([100, 150, 50])
    compiled = torch.compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = compiled(x.to("accel"), lengths.to("accel"))
    torch.testing.assert_close(out.cpu(), f(x, lengths))
    assert torch_accel.fallback_counts() == {"aten::segment_reduce": 1}
    # The backend's warning names the op. It is a Python warning where the call path installs
    # PyTorch's warning handler, and goes to stderr (c10's default handler) from compiled code.
    warned = [str(w.message) for w in caught] + [capfd.readouterr().err]
    assert any("'aten::segment_reduce' has no native accel kernel" in m for m in warned), warned


@host_only
@WRAPPERS
@pytest.mark.skipif(torch.accel.device_count() < 2, reason="needs two accel devices")
def test_graph_on_second_device_trains_like_cpu(wrapper):
    # The Python wrapper named buffers' device type only (the current device, accel:0): the
    # extern mm's out= then met accel:1 inputs.
    torch.manual_seed(0)
    lin = torch.nn.Linear(6, 5)
    x = torch.randn(4, 6)

    def loss(lin, x):
        return ((x @ lin.weight.t()).relu() + lin.bias).sin().square().mean()

    ref = loss(lin, x)
    ref.backward()
    ref_grads = [p.grad.clone() for p in lin.parameters()]
    lin.zero_grad()
    lin.to("accel:1")
    out = torch.compile(loss)(lin, x.to("accel:1"))
    out.backward()
    assert out.device == torch.device("accel:1")
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)
    for p, g in zip(lin.parameters(), ref_grads):
        assert p.grad.device == torch.device("accel:1")
        torch.testing.assert_close(p.grad.cpu(), g, rtol=1e-4, atol=1e-5)
    assert torch.accel.current_device() == 0


@host_only
def test_fft_in_a_compiled_graph_matches_cpu():
    # Inductor asserts an extern FFT's output strides against the meta function's (CPU's).
    def f(x):
        spectrum = torch.fft.rfft(x) * torch.fft.rfft(x.flip(1))
        return torch.fft.irfft(spectrum, n=x.shape[1]) + torch.fft.fft(x, dim=0).abs()

    x = torch.randn(4, 16)
    out = torch.compile(f)(x.to("accel"))
    torch.testing.assert_close(out.cpu(), f(x), rtol=1e-4, atol=1e-4)
    assert torch_accel.fallback_counts() == {}


@host_only
def test_data_dependent_nonzero_in_a_compiled_graph_matches_cpu():
    # The fake kernel predicts nonzero's column-major output (CPU's), which the graph asserts.
    def f(x):
        idx = torch.nonzero(x > 0)
        return idx * 2 + 1, x[x > 0.5].sum()

    x = torch.randn(4, 5)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        out = torch.compile(f, fullgraph=True)(x.to("accel"))
    for got, want in zip(out, f(x)):
        torch.testing.assert_close(got.cpu(), want)


def test_current_stream_traces_without_a_graph_break():
    # As torch.cuda.current_stream does; fullgraph=True raises on any break.
    def f(x):
        s = torch.accel.current_stream()
        assert torch.accel.current_stream(x.device) == s
        return x * 2 + 1

    x = torch.randn(8)
    got = torch.compile(f, fullgraph=True)(x.to("accel"))
    torch.testing.assert_close(got.cpu(), x * 2 + 1)
    assert isinstance(torch.accel.current_stream(), torch.accel.Stream)  # eager is unchanged


@host_only
@needs_cpp_wrapper
def test_aot_inductor_is_refused_with_the_reason():
    # Inductor's own error was an AssertionError about "mixed-device constants".
    model = torch.nn.Linear(3, 2).to("accel")
    program = torch.export.export(model, (torch.randn(2, 3, device="accel"),))
    with pytest.raises(Exception, match="AOTInductor .* does not support accel"):
        torch._inductor.aoti_compile_and_package(program)


def test_triton_path_generates_code():
    # The CUDA driver's path: Triton kernels launched on accel's current CUDA stream.
    if torch_accel.driver() != "cuda":
        pytest.skip("the Triton path needs the accel CUDA driver (a GPU); this is the host driver")
    pytest.importorskip(
        "triton",
        reason="triton is not installed: the accel CUDA driver's "
        "Triton path cannot be generated or checked here",
    )
    x, y = torch.randn(4096), torch.randn(4096)
    out, code = run_and_get_code(torch.compile(_chain), x.to("accel"), y.to("accel"))
    assert "@triton.jit" in code[0] and "get_raw_stream" in code[0]
    assert "_current_raw_stream" in code[0]
    torch.testing.assert_close(out.cpu(), _chain(x, y), rtol=1e-5, atol=1e-5)


# The CUDA driver's Triton path, generated on any driver and checked as text. A subprocess
# registers the Triton backend for accel (registration is process-global) and stubs only what
# an sm_90 GPU would provide: accel's device properties (the fields the CUDA driver reports)
# and compute capability, Triton's active CUDA driver (its compile target) and Inductor's
# "a GPU can run Triton" check. get_code generates the wrapper and kernels without compiling
# or running them.
_TRITON_CODEGEN = r"""
import json, types
import torch, torch_accel
import torch._functorch.config as functorch_config
import torch._inductor.config as inductor_config
from torch._inductor import scheduler
from torch._inductor.utils import get_code
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from torch_accel._inductor.device_interface import AccelInterface
from torch_accel._inductor.registration import register_inductor
from torch_accel.accel.device import _DeviceProperties

props = _DeviceProperties(name="stub sm_90", total_memory=80 << 30, multi_processor_count=132,
                          major=9, minor=0, warp_size=32, max_threads_per_block=1024,
                          max_threads_per_multi_processor=2048,
                          regs_per_multiprocessor=65536, driver="cuda")
AccelInterface.get_device_properties = staticmethod(lambda device=None: props)
AccelInterface.get_compute_capability = staticmethod(lambda device=None: 90)
driver.set_active(types.SimpleNamespace(get_current_target=lambda: GPUTarget("cuda", 90, 32)))
scheduler.has_triton = lambda: True

register_inductor("triton")
inductor_config.fx_graph_cache = False


def code_of(fn, *args):
    return [c for c in get_code(torch.compile(fn), *args) if c]


torch.manual_seed(0)
x, y = torch.randn(4096, device="accel"), torch.randn(4096, device="accel")
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(),
                            torch.nn.Linear(16, 4)).to("accel")
data, target = torch.randn(5, 8, device="accel"), torch.randn(5, 4, device="accel")
codes = {"chain": code_of(lambda x, y: (x * 2 + 1).sin() * y - x, x, y),
         "softmax": code_of(lambda x: torch.softmax(x, -1), torch.randn(8, 8192, device="accel")),
         "cond": code_of(lambda p, x: torch.cond(p, lambda x: (x * 2).sin(),
                                                 lambda x: x.cos() + 1, (x,)),
                         torch.tensor(True, device="accel"), torch.randn(64, device="accel"))}
# The backward graph is lowered with the forward one, so both are generated without running.
with functorch_config.patch(force_non_lazy_backward_lowering=True):
    codes["mlp"] = code_of(lambda d, t: torch.nn.functional.mse_loss(model(d), t), data, target)
print("CODES" + json.dumps(codes))
"""


@pytest.fixture(scope="module")
def triton_code():
    pytest.importorskip(
        "triton",
        reason="triton is not installed (requirements.txt pins it): "
        "the accel CUDA driver's Triton path cannot be generated here",
    )
    r = run_python(_TRITON_CODEGEN, timeout=170)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout.split("CODES", 1)[1])


_KERNEL_SOURCE = re.compile(
    r"^(triton_\w+) = async_compile\.triton\('\1', '''(.*?)''', "
    r"device_str='(\w+)'\)$",
    re.M | re.S,
)


def _check_accel_triton_wrapper(code):
    """The accel-specific parts of one generated wrapper, whatever its graph; returns
    {kernel name: kernel source} and the launch lines."""
    compile(code, "<wrapper>", "exec")  # the whole module is valid Python
    found = _KERNEL_SOURCE.findall(code)
    kernels = {name: src for name, src, _ in found}
    assert kernels, code
    assert [device for *_, device in found] == ["accel"] * len(kernels)
    for name, src in kernels.items():
        compile(src, name, "exec")
        assert f"@triton.jit\ndef {name}(" in src, src
        # Triton compiles and launches for CUDA (cuda_wrapper.triton_targets_cuda).
        assert "'device': DeviceProperties(type='cuda', index=0, " in src, src
        # the occupancy limits reach the heuristics (reduction sizing, fusion register checks)
        assert "regs_per_multiprocessor=65536" in src, src
        assert "max_threads_per_multi_processor=2048" in src, src
    # Streams come from accel's runtime (its current CUDA stream on the CUDA driver), and
    # every kernel is launched on the stream fetched for device 0 just before.
    assert "from torch_accel._C import _current_raw_stream as get_raw_stream" in code
    assert "torch.cuda" not in code and "_cuda_getCurrentRawStream" not in code
    body = code.split("    def call(self, args):", 1)[1].split("runner = Runner(", 1)[0]
    assert "with torch.accel.device(0):" in body
    launches = re.findall(r"^ +(triton_\w+)\.run\((.*), stream=(\w+)\)$", body, re.M)
    assert sorted({k for k, *_ in launches}) == sorted(kernels), body
    for _, _, stream in launches:
        assert f"{stream} = get_raw_stream(0)" in body, body
    # Buffers come from accel's allocator; nothing is C++ or on another device.
    allocations = re.findall(r"= (empty_strided\w*)\((.*)\)$", body, re.M)
    assert allocations, body
    assert all(f == "empty_strided" and "device='accel'" in a for f, a in allocations), body
    assert "cpp_fused" not in code and "_accel_call_kernel" not in code
    return kernels, launches


def test_triton_path_pointwise_chain_is_one_kernel_on_the_accel_stream(triton_code):
    (code,) = triton_code["chain"]
    kernels, launches = _check_accel_triton_wrapper(code)
    (name,) = kernels
    assert name.startswith("triton_poi_fused_") and all(
        op in name for op in ("add", "mul", "sin", "sub")
    ), name
    assert "tl_math.sin(" in kernels[name]
    # (the stream variable is raw_stream0 from torch 2.13 on, stream0 before)
    assert launches in (
        [(name, "arg0_1, arg1_1, buf0, 4096", stream)] for stream in ("raw_stream0", "stream0")
    ), launches
    assert "buf0 = empty_strided((4096, ), (1, ), device='accel', dtype=torch.float32)" in code


def test_triton_path_reductions_and_training(triton_code):
    (softmax,) = triton_code["softmax"]
    kernels, _ = _check_accel_triton_wrapper(softmax)
    assert [k for k in kernels if k.startswith("triton_red_fused__softmax")], list(kernels)
    # MLP forward and backward: Triton kernels for the pointwise and reduction parts, and
    # the matmuls as extern calls that dispatch to accel's own kernels.
    forward, backward = triton_code["mlp"]
    fw, _ = _check_accel_triton_wrapper(forward)
    bw, _ = _check_accel_triton_wrapper(backward)
    assert any(k.startswith("triton_poi_fused_gelu") for k in fw), list(fw)
    assert any(k.startswith("triton_per_fused_") and "mse_loss" in k for k in fw), list(fw)
    assert any(k.startswith("triton_poi_fused_gelu_gelu_backward") for k in bw), list(bw)
    assert "extern_kernels.addmm(" in forward and "extern_kernels.mm(" in backward


def test_triton_path_control_flow_subgraphs(triton_code):
    # torch.cond's branches are generated by the subgraph wrapper (AccelSubgraphGpuWrapperCodegen):
    # each is a function with its own device guard, accel buffers and accel-stream launches.
    (code,) = triton_code["cond"]
    compile(code, "<wrapper>", "exec")
    kernels = {name: device for name, _, device in _KERNEL_SOURCE.findall(code)}
    assert len(kernels) == 2 and set(kernels.values()) == {"accel"}, kernels
    assert "from torch_accel._C import _current_raw_stream as get_raw_stream" in code
    for branch in ("true_graph_0", "false_graph_0"):
        body = code.split(f"def {branch}(args):", 1)[1].split("\n\n", 1)[0]
        assert "with torch.accel.device(0):" in body, body
        assert re.search(
            rf"^ +{branch}_buf0 = empty_strided\(\(64, \), \(1, \), "
            r"device='accel', dtype=torch\.float32\)$",
            body,
            re.M,
        ), body
        launch = re.search(r"^ +(triton_poi_fused_\w+)\.run\(.*, stream=(\w+)\)$", body, re.M)
        assert launch and launch.group(1) in kernels, body
        assert f"{launch.group(2)} = get_raw_stream(0)" in body, body
    # the predicate, read on the host (torch 2.14 branches on an int selector)
    assert "if arg0_1.item():" in code or (
        "buf0_selector = int(arg0_1.item())" in code and "if buf0_selector == 0:" in code
    ), code


@host_only
@WRAPPERS
def test_lora_example_compiled_matches_eager(wrapper):
    # The LoRA example's training step (transformers + peft, AdamW, clipping) under
    # torch.compile: the same per-step losses as eager accel, whole graphs, no fallback.
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import lora_finetune as lf

    def train(compiled):
        args = lf.parse_args(LORA_SMALL_ARGS + ["--steps", "3"] + ["--compile"] * compiled)
        tokenizer, data = lf.permutation_task(args.seq_len, 64, args.seed)
        model = lf.build_model(args, tokenizer.vocab_size)
        runner = torch.compile(model) if compiled else model  # as the script's main() does
        result = lf.train(args, runner, data, torch.device("accel"), log=lambda *_: None)
        return result, {n: p.detach().cpu() for n, p in model.named_parameters() if p.requires_grad}

    eager, eager_weights = train(False)
    compiled, compiled_weights = train(True)
    torch.testing.assert_close(
        torch.tensor(compiled.losses), torch.tensor(eager.losses), rtol=1e-4, atol=0
    )
    # the compiled AdamW steps left the same LoRA weights
    torch.testing.assert_close(compiled_weights, eager_weights, rtol=1e-4, atol=1e-6)
    assert metrics.generated_kernel_count >= 3  # forward, backward and optimizer kernels
    # torch.optim's step breaks its graph on purpose (torch._dynamo.graph_break()); no other
    breaks = [b for b in counters["graph_break"] if "torch._dynamo.graph_break()" not in b]
    assert not breaks, breaks
    assert compiled.fallback_calls == 0


def test_cpp_wrapper_missing_api_is_refused_with_the_reason():
    # A torch whose C++ wrapper lacks what ours builds on: cpp_wrapper=True names the reason,
    # the Python wrapper keeps compiling.
    r = run_python(
        "import torch\n"
        "from torch._inductor.codegen import cpp_wrapper_cpu\n"
        "if hasattr(cpp_wrapper_cpu.CppWrapperCpu,\n"  # torch < 2.13 lacks it already
        "           'generate_fallback_kernel_with_runtime_lookup_boxed'):\n"
        "    del cpp_wrapper_cpu.CppWrapperCpu.generate_fallback_kernel_with_runtime_lookup_boxed\n"
        "import torch_accel, torch._inductor.config as c\n"
        "c.fx_graph_cache = False\n"
        "x = torch.randn(4, device='accel')\n"
        "print('PY', torch.compile(lambda t: t * 2)(x).cpu().tolist() == (x * 2).cpu().tolist())\n"
        "torch._dynamo.reset()\n"
        "c.cpp_wrapper = True\n"
        "try:\n"
        "    torch.compile(lambda t: t * 3)(x)\n"
        "except Exception as e:\n"
        "    print('ERROR', e)\n"
        "print('STATUS', torch_accel._inductor.status())\n",
        timeout=170,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "PY True" in r.stdout, r.stdout
    assert "cpp_wrapper=True is not supported on accel" in r.stdout, r.stdout
    assert "generate_fallback_kernel_with_runtime_lookup_boxed" in r.stdout, r.stdout


def test_missing_inductor_api_disables_compile_not_import():
    # A torch whose Inductor lacks an API the hook needs: import works, compile names the
    # reason, backend="aot_eager" still runs.
    r = run_python(
        "import warnings, torch\n"
        # first, so that registration waits for the compile call (as with the autoload)
        "import torch_accel\n"
        "from torch._inductor.codegen import wrapper\n"
        "del wrapper.PythonWrapperCodegen._generate_kernel_call_helper\n"
        "x = torch.randn(4, device='accel')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    try:\n"
        "        torch.compile(lambda t: t * 2)(x)\n"
        "    except Exception as e:\n"
        "        print('ERROR', e)\n"
        "print('STATUS', torch_accel._inductor.status()['inductor'])\n"
        "print('WARNED', any('disabled' in str(m.message) for m in w))\n"
        "aot = torch.compile(lambda t: t * 2, backend='aot_eager')(x)\n"
        "print('AOT', aot.cpu().tolist() == (x * 2).cpu().tolist())\n",
        timeout=170,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "STATUS disabled: RuntimeError: this torch" in r.stdout, r.stdout
    assert "_generate_kernel_call_helper" in r.stdout and "WARNED True" in r.stdout, r.stdout
    assert "backend='aot_eager' still works" in r.stdout.split("ERROR", 1)[1], r.stdout
    assert "AOT True" in r.stdout, r.stdout


def test_the_integrations_version_is_part_of_inductors_cache_key(tmp_path, monkeypatch):
    # A graph cached by another version of torch_accel's Inductor integration must compile
    # again: its wrapper code and its graph decision may differ (registration.py's pass).
    from torch._inductor.codegen import common

    common.init_backend_registration()
    version = common.custom_backend_passes.get("accel")
    if version is None:
        pytest.skip("this torch's register_backend_for_device takes no device pass")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    x = torch.randn(33)

    def lookups():
        counters.clear()
        torch._dynamo.reset()
        out = torch.compile(lambda t: t.sin() * 3)(x.to("accel"))
        torch.testing.assert_close(out.cpu(), x.sin() * 3)
        return counters["inductor"]["fxgraph_cache_hit"], counters["inductor"]["fxgraph_cache_miss"]

    with inductor_config.patch(fx_graph_cache=True, fx_graph_remote_cache=False):
        assert lookups() == (0, 1)
        assert lookups() == (1, 0)
        monkeypatch.setattr(type(version), "uuid", lambda self: "another version")
        assert lookups() == (0, 1)
    torch._dynamo.reset()
