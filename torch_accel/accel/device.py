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
