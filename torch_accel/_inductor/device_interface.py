"""The Dynamo/Inductor device interface for accel (what ``torch.cuda`` is to CudaInterface)."""

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface

from .. import _C, accel

_worker_current_device: list = []  # set in compile workers, which must not query the runtime
_worker_properties: dict = {}


class AccelInterface(DeviceInterface):
    device = accel.device
    Stream = accel.Stream
    # torch.Event itself: accel events are plain torch.Event objects (see accel/streams.py).
    Event = torch.Event

    class Worker:
        @staticmethod
        def set_device(device: int) -> None:
            _worker_current_device[:] = [device]

        @staticmethod
        def current_device() -> int:
            return _worker_current_device[0] if _worker_current_device else accel.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            if isinstance(device, str):
                device = torch.device(device)
            if isinstance(device, torch.device):
                device = device.index
            if device is None:
                device = AccelInterface.Worker.current_device()
            if not _worker_properties:
                for i in range(accel.device_count()):
                    _worker_properties[i] = accel.get_device_properties(i)
            return _worker_properties[device]

    current_device = staticmethod(accel.current_device)
    set_device = staticmethod(accel.set_device)
    device_count = staticmethod(accel.device_count)
    stream = staticmethod(accel.stream)
    current_stream = staticmethod(accel.current_stream)
    set_stream = staticmethod(accel.set_stream)
    synchronize = staticmethod(accel.synchronize)
    get_device_properties = staticmethod(accel.get_device_properties)
    memory_allocated = staticmethod(accel.memory_allocated)

    @staticmethod
    def is_available() -> bool:
        return accel.is_available()

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return accel.is_bf16_supported()

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        _C._set_stream(stream_id, device_index, device_type)

    @staticmethod
    def exchange_device(device: int) -> int:
        prev = accel.current_device()
        if device >= 0 and device != prev:
            accel.set_device(device)
        return prev

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return AccelInterface.exchange_device(device)

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        """The driver's native handle of the current stream (a cudaStream_t on the CUDA
        driver; on the host driver an opaque queue pointer that only the runtime uses)."""
        return _C._current_raw_stream(device_idx)

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> Any:
        if _C._driver_name() != "cuda":
            return ""  # like CpuInterface: no GPU architecture to target
        major, minor = accel.get_device_capability(device)
        return major * 10 + minor

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        return _C._driver_name() == "cuda" and accel.get_device_capability(device)[0] >= 7

    @staticmethod
    def raise_if_triton_unavailable(device: torch.types.Device = None) -> None:
        if not AccelInterface.is_triton_capable(device):
            raise RuntimeError(
                "accel: Triton code generation needs the CUDA driver on a GPU of compute "
                "capability 7.0 or newer; the host driver compiles C++ kernels instead"
            )
        import triton.backends

        if "nvidia" not in triton.backends.backends:
            raise RuntimeError("triton not built with the 'nvidia' backend")
