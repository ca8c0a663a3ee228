"""Devices: count, selection, synchronisation, properties."""

from dataclasses import dataclass

from .. import _C
from ._utils import _get_device_index


def is_available() -> bool:
    return _C._device_count() > 0


def is_initialized() -> bool:
    return True  # the runtime initialises when the extension loads


def init() -> None:
    if _C._is_in_bad_fork():
        raise RuntimeError(
            "Cannot re-initialize accel in forked subprocess. To use accel with "
            "multiprocessing, you must use the 'spawn' start method"
        )


def _is_in_bad_fork() -> bool:
    return _C._is_in_bad_fork()


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._current_device()


def set_device(device) -> None:
    index = _get_device_index(device, optional=True)
    if index >= 0:
        _C._set_device(index)


class device:
    """Context manager that changes the current accel device, like ``torch.cuda.device``."""

    def __init__(self, device):
        self.idx = _get_device_index(device, optional=True) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _C._current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            _C._set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.idx != self.prev_idx:
            _C._set_device(self.prev_idx)
        return False


class device_of(device):
    """The device of a tensor as a context manager (a no-op for non-accel tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "accel" else None)


def synchronize(device=None) -> None:
    """Waits for all work queued on every stream of the device."""
    _C._synchronize(_get_device_index(device, optional=True))


@dataclass(frozen=True)
class _DeviceProperties:
    name: str
    total_memory: int
    multi_processor_count: int
    major: int
    minor: int
    warp_size: int
    max_threads_per_block: int
    max_threads_per_multi_processor: int
    regs_per_multiprocessor: int
    driver: str


def get_device_properties(device=None) -> _DeviceProperties:
    return _DeviceProperties(**_C._device_properties(_get_device_index(device, optional=True)))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def is_tf32_supported() -> bool:
    """Whether float32 matmuls may use TF32: on a GPU of compute capability 8.0 or newer (the
    host driver computes in float32)."""
    return _C._driver_name() == "cuda" and get_device_capability() >= (8, 0)


def can_device_access_peer(device, peer_device) -> bool:
    """Whether ``device`` reads and writes ``peer_device``'s memory directly (always, on the
    host driver: every simulated device is host memory)."""
    return _C._can_device_access_peer(_get_device_index(device), _get_device_index(peer_device))


def get_arch_list() -> list:
    """The CUDA architectures the CUDA driver's kernels were compiled for (``sm_80``...);
    empty on the host driver."""
    if _C._driver_name() != "cuda":
        return []
    return [f"sm_{arch}" for arch in _C._cuda_arch_list().split()]


def get_gencode_flags() -> str:
    """nvcc ``-gencode`` flags for get_arch_list(), as torch.cuda.get_gencode_flags."""
    return " ".join(f"-gencode compute=compute_{a[3:]},code={a}" for a in get_arch_list())


# ---- sync debug mode ------------------------------------------------------------------------

_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode) -> None:
    """Warn (1, "warn") or raise (2, "error") when an operation makes the host wait for the
    device (``.item()``, blocking copies, ``nonzero``, the CPU fallback, stream synchronize);
    0 or "default" turns it off. As ``torch.cuda.set_sync_debug_mode``."""
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`"
            )
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _C._set_sync_debug_mode(int(debug_mode))


def get_sync_debug_mode() -> int:
    return _C._sync_debug_mode()


# ---- monitoring -----------------------------------------------------------------------------


def _nvml_handle(device):
    try:
        import pynvml  # type: ignore[import]
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            "pynvml does not seem to be installed or it can't be imported."
        ) from e
    pynvml.nvmlInit()
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(_get_device_index(device, optional=True))


def utilization(device=None) -> int:
    """Percent of about the last second during which the device ran work. On the host driver:
    the share of time at least one of its stream workers was busy; on the CUDA driver, NVML's
    GPU utilization."""
    percent = _C._utilization(_get_device_index(device, optional=True))
    if percent >= 0:
        return percent
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


def memory_usage(device=None) -> int:
    """Percent of about the last second during which device memory was read or written. On the
    host driver every kernel and copy works on device memory, so it is utilization()."""
    percent = _C._utilization(_get_device_index(device, optional=True))
    if percent >= 0:
        return percent
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).memory


def _sensor(device, name: str, query):
    if _C._driver_name() != "cuda":
        raise RuntimeError(
            f"torch.accel.{name}: the host driver's simulated devices have no "
            f"{name.replace('_', ' ')} sensor"
        )
    pynvml, handle = _nvml_handle(device)
    return query(pynvml, handle)


def temperature(device=None) -> int:
    """The GPU's temperature in degrees C (CUDA driver, through NVML)."""
    return _sensor(
        device, "temperature", lambda nv, h: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)
    )


def power_draw(device=None) -> int:
    """The GPU's power draw in milliwatts (CUDA driver, through NVML)."""
    return _sensor(device, "power_draw", lambda nv, h: nv.nvmlDeviceGetPowerUsage(h))


def clock_rate(device=None) -> int:
    """The GPU's SM clock in MHz (CUDA driver, through NVML)."""
    return _sensor(
        device, "clock_rate", lambda nv, h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)
    )


def list_gpu_processes(device=None) -> str:
    """This process's use of the device, in the layout of torch.cuda.list_gpu_processes (the
    host driver's devices belong to the process that simulates them)."""
    import os

    from .memory import memory_reserved

    index = _get_device_index(device, optional=True)
    mib = memory_reserved(index) / (1024 * 1024)
    process = f"process {os.getpid():>10d} uses {mib:>12.3f} MB GPU memory"
    return "\n".join([f"GPU:{index}", process])


# ---- what accel does not have -----------------------------------------------------------------


def current_blas_handle():
    raise RuntimeError(
        "torch.accel.current_blas_handle: accel hands out no BLAS handle (the "
        "kernel layer owns its cuBLAS(Lt) handles on the CUDA driver; the host "
        "driver uses LibTorch's CPU BLAS)"
    )


def current_solver_handle():
    raise RuntimeError(
        "torch.accel.current_solver_handle: accel has no cuSOLVER: linear algebra "
        "solvers run through the CPU fallback"
    )


class DeferredAccelCallError(Exception):
    """torch.cuda.DeferredCudaCallError's counterpart: accel initialises eagerly, when the
    extension loads, so no call is ever deferred; kept for code that catches it."""


class AccelError(RuntimeError):
    """An accel runtime error code, as torch.cuda.CudaError."""

    def __init__(self, code: int) -> None:
        self.code = code
        super().__init__(f"accel runtime error {code}")


class accelStatus:
    """Runtime status codes, as torch.cuda.cudaStatus."""

    SUCCESS: int = 0
    ERROR_NOT_READY: int = 4


def check_error(res: int) -> None:
    """Raises AccelError for a nonzero runtime status, as torch.cuda.check_error."""
    if res != accelStatus.SUCCESS:
        raise AccelError(res)


def accelrt():
    raise RuntimeError(
        "torch.accel.accelrt: accel's runtime is its own driver API "
        "(csrc/runtime/driver.h), not exposed to Python; torch.accel is its "
        "Python face"
    )


class GreenContext:
    """torch.cuda.GreenContext's place: green contexts partition a GPU's SMs, which accel's
    drivers do not do."""

    @staticmethod
    def create(*args, **kwargs):
        raise RuntimeError(
            "torch.accel.GreenContext: accel cannot partition a device's compute units"
        )
