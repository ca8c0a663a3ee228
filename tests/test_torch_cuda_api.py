"""torch.accel has torch.cuda's API: the share of torch.cuda's public names it offers (at least
80%), and what the names added for it do, compared with their torch.cuda namesakes or with
CPU results. Names that cannot apply raise an error that says why."""

import os
import types

import pytest
import torch

# Not API: torch.cuda's own helper decorator.
NOT_API = {"classproperty"}
# The graph and memory-pool names belong to accel's graph support; counted when present.
GRAPH_NAMES = {
    "graph",
    "graphs",
    "CUDAGraph",
    "make_graphed_callables",
    "is_current_stream_capturing",
    "graph_pool_handle",
    "MemPool",
    "use_mem_pool",
}


def _torch_cuda_names() -> list:
    """torch.cuda's public names, less what it only imports (typing, os...) and the legacy
    tensor and storage types (FloatTensor, ByteStorage, ...)."""
    names = []
    for name in dir(torch.cuda):
        if name.startswith("_") or name in NOT_API:
            continue
        if name.endswith(("Tensor", "Storage")):
            continue
        obj = getattr(torch.cuda, name)
        if isinstance(obj, types.ModuleType):
            if not obj.__name__.startswith("torch.cuda"):
                continue
        elif not (getattr(obj, "__module__", "") or "").startswith("torch"):
            continue
        names.append(name)
    return names


def _accel_name(name: str):
    """The accel spelling of a torch.cuda name, when torch.accel has one."""
    for candidate in (
        name,
        name.replace("CUDA", "Accel").replace("Cuda", "Accel").replace("cuda", "accel"),
        name.replace("CUDA", ""),
    ):
        if candidate and hasattr(torch.accel, candidate):
            return candidate
    return None


def test_at_least_80_percent_of_torch_cuda_names():
    names = _torch_cuda_names()
    assert len(names) > 90  # the filter keeps torch.cuda's real API
    missing = sorted(n for n in names if _accel_name(n) is None)
    ratio = 1 - len(missing) / len(names)
    print(
        f"torch.accel offers {len(names) - len(missing)} of {len(names)} torch.cuda names "
        f"({ratio:.0%}); missing: {missing}"
    )
    assert ratio >= 0.80, f"{ratio:.0%} of torch.cuda's names; missing: {missing}"
    assert not [
        n
        for n in missing
        if n not in GRAPH_NAMES and n not in {"gds", "sparse", "tunable", "green_contexts"}
    ], missing


def test_error_types_are_torch_s():
    assert torch.accel.AcceleratorError is torch.AcceleratorError
    assert torch.accel.OutOfMemoryError is torch.OutOfMemoryError
    assert issubclass(torch.AcceleratorError, RuntimeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda: torch.ones(2, device="accel:9"),
        lambda: torch.accel.set_device(9),
        lambda: torch.accel.synchronize(9),
        lambda: torch.accel.Stream(device=9),
        lambda: torch.accelerator.set_device_index(9),
        lambda: torch.ones(2).to("accel:9"),
    ],
)
def test_a_bad_device_index_is_an_accelerator_error(call):
    # torch.cuda raises torch.AcceleratorError (invalid device ordinal) here; code catches it
    # as RuntimeError.
    with pytest.raises(torch.AcceleratorError, match="Invalid device index accel:9"):
        call()
    assert torch.ones(2, device="accel").sum().item() == 2.0


def test_device_capability_through_torch_accelerator():
    cap = torch.accelerator.get_device_capability("accel:0")
    dtypes = cap["supported_dtypes"]
    assert {torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.complex64} <= dtypes
    assert torch.qint8 not in dtypes
    assert torch.accel.get_device_capability(0) == (1, 0)
    with pytest.raises(torch.AcceleratorError):
        torch.accelerator.get_device_capability("accel:7")


def test_external_stream_and_stream_context():
    s = torch.accel.Stream()
    handle = s.accel_stream
    ext = torch.accel.ExternalStream(handle)
    assert ext == torch.accel.ExternalStream(handle)  # the same handle, the same stream
    assert torch.accel.get_stream_from_external(handle) == ext
    ctx = torch.accel.stream(ext)
    assert isinstance(ctx, torch.accel.StreamContext)
    with ctx:
        assert torch.accel.current_stream() == ext
        y = torch.ones(1000, device="accel") * 3
    ext.synchronize()
    torch.testing.assert_close(y.cpu(), torch.full((1000,), 3.0))
    default = torch.accel.default_stream().accel_stream
    assert torch.accel.ExternalStream(default) == torch.accel.default_stream()
    with pytest.raises(RuntimeError, match="is not a stream of accel:0"):
        torch.accel.ExternalStream(12345678)


def test_peer_access_and_device_info():
    assert torch.accel.can_device_access_peer(0, 1) is True
    assert torch.accel.get_arch_list() == [] and torch.accel.get_gencode_flags() == ""
    assert torch.accel.is_tf32_supported() is False
    text = torch.accel.list_gpu_processes()
    assert text.startswith("GPU:0") and f"process {os.getpid():>10d}" in text


def test_utilization_is_the_share_of_busy_time():
    torch.accel.utilization()  # starts a window
    a = torch.randn(1200, 1200, device="accel")
    for _ in range(3):
        a = a @ a / 1200
    torch.accel.synchronize()
    busy = torch.accel.utilization()
    assert 0 < busy <= 100
    assert 0 <= torch.accel.memory_usage() <= 100
    assert 0 <= torch.accel.utilization(1) <= 100


def test_comm_matches_torch_cuda_comm_semantics():
    x = torch.arange(12.0).view(4, 3)
    copies = torch.accel.comm.broadcast(x.to("accel:0"), [0, 1])
    assert [c.device.index for c in copies] == [0, 1]
    for c in copies:
        torch.testing.assert_close(c.cpu(), x)
    parts = torch.accel.comm.scatter(x.to("accel"), [0, 1], dim=0)
    assert [p.shape[0] for p in parts] == [2, 2] and parts[1].device.index == 1
    torch.testing.assert_close(torch.accel.comm.gather(parts, 0, -1), x)
    torch.testing.assert_close(torch.accel.comm.reduce_add(copies, 1).cpu(), 2 * x)
    assert torch.accel.comm.reduce_add(copies, 1).device == torch.device("accel:1")
    # as CUDA's: an uneven split is torch.chunk's (3 rows over 2 devices: 2 and 1; 1 row: one
    # part only), and broadcast_coalesced gives a list per device
    assert [p.shape[0] for p in torch.accel.comm.scatter(x[:3].to("accel"), [0, 1])] == [2, 1]
    assert len(torch.accel.comm.scatter(x[:1].to("accel"), [0, 1])) == 1
    per_device = torch.accel.comm.broadcast_coalesced([x.to("accel"), x[0].to("accel")], [0, 1])
    assert isinstance(per_device, list) and all(isinstance(d, list) for d in per_device)


@pytest.mark.parametrize("on_accel", [True, False])
def test_data_parallel_over_two_devices_matches_cpu(on_accel):
    """nn.DataParallel replicates the module on accel:0 and accel:1, scatters the batch (from
    accel:0 or from CPU), gathers the outputs on accel:0 and sums the replicas' gradients."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))
    x = torch.randn(7, 4)
    want = net(x)
    want.pow(2).sum().backward()
    want_grads = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    net.to("accel:0")
    dp = torch.nn.DataParallel(net, device_ids=[0, 1])
    got = dp(x.to("accel:0") if on_accel else x)
    assert got.device == torch.device("accel:0")
    got.pow(2).sum().backward()
    torch.testing.assert_close(got.detach().cpu(), want.detach())
    for p, g in zip(net.parameters(), want_grads):
        torch.testing.assert_close(p.grad.cpu(), g)


def test_names_that_cannot_apply_say_why():
    for call, why in [
        (lambda: torch.accel.current_blas_handle(), "no BLAS handle"),
        (lambda: torch.accel.jiterator._create_jit_fn("x"), "does not compile CUDA C"),
        (lambda: torch.accel.nccl.all_reduce([]), "no NCCL"),
        (lambda: torch.accel.profiler.start(), "no external profiler"),
        (lambda: torch.accel.temperature(), "no temperature sensor"),
        (lambda: torch.accel.AccelPluggableAllocator("x.so", "a", "f"), "cannot be replaced"),
        (lambda: torch.accel.GreenContext.create(1, 0), "cannot partition"),
    ]:
        with pytest.raises(RuntimeError, match=why):
            call()
    assert torch.accel.nccl.is_available([]) is False
    torch.accel.check_error(0)
    with pytest.raises(torch.accel.AccelError):
        torch.accel.check_error(torch.accel.accelStatus.ERROR_NOT_READY)


def test_torch_cuda_memory_submodule_names():
    """torch.cuda.memory's public functions, reached through the submodule, as scripts do."""
    public = [
        n
        for n in dir(torch.cuda.memory)
        if not n.startswith("_")
        and callable(getattr(torch.cuda.memory, n))
        and getattr(getattr(torch.cuda.memory, n), "__module__", "").startswith("torch.cuda")
    ]
    missing = [n for n in public if not hasattr(torch.accel.memory, n)]
    assert not [n for n in missing if n != "CUDAPluggableAllocator"], missing
    assert torch.accel.memory.MemPool is torch.accel.MemPool
    pool = torch.accel.memory.MemPool()
    with torch.accel.memory.use_mem_pool(pool):
        x = torch.arange(1000, device="accel", dtype=torch.float32)
    assert torch.equal(x.cpu(), torch.arange(1000, dtype=torch.float32))
    assert torch.accel.memory.list_gpu_processes() == torch.accel.list_gpu_processes()
