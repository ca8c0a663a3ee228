"""The caching allocator from Python: the ``torch.cuda.memory`` functions."""

import collections
import contextlib
import pickle
import sys
import warnings

import torch

from .. import _C
from ._utils import _get_device_index
from .device import is_initialized, list_gpu_processes  # noqa: F401  (torch.cuda.memory's too)


def _index(device) -> int:
    return _get_device_index(device, optional=True)


def memory_stats(device=None) -> "collections.OrderedDict[str, int]":
    """The allocator's statistics, with the keys of ``torch.cuda.memory_stats``."""
    return torch.accelerator.memory_stats(_index(device))


def memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None) -> None:
    torch.accelerator.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device=None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns every cached, unused block to the device."""
    _C._empty_cache()


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    """Caps what the allocator may reserve on the device, as a fraction of its capacity."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _C._set_memory_fraction(fraction, _index(device))


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of the device."""
    return tuple(_C._mem_get_info(_index(device)))


def memory_snapshot(device=None) -> list:
    """The allocator's segments and their blocks, on every device, as
    ``torch.cuda.memory_snapshot()``."""
    return _snapshot()["segments"]


def _record_memory_history(
    enabled="all",
    context="all",
    stacks="all",
    max_entries=sys.maxsize,
    device=None,
    clear_history=False,
) -> None:
    """Starts (or, with ``enabled=None``, stops) recording the allocator's history on every
    accel device, as ``torch.cuda.memory._record_memory_history``: ``enabled`` "state" keeps
    where each live block was allocated, "all" also the trace of every alloc, free and
    segment action; ``context`` None/"state"/"alloc"/"all" says which actions get a stack;
    ``stacks`` "python" or "all" (with C++ frames)."""
    _C._record_memory_history(enabled, context, stacks, max_entries, clear_history)


def _snapshot(device=None) -> dict:
    """Segments, blocks and ``device_traces`` in the format of ``torch.cuda.memory._snapshot()``,
    which ``torch.cuda._memory_viz`` renders (``segment_plot``, ``trace_plot``, ``memory``...)."""
    return _C._memory_snapshot()


def _dump_snapshot(filename="dump_snapshot.pickle") -> None:
    """Pickles ``_snapshot()`` to ``filename``, for https://pytorch.org/memory_viz."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


def memory_stats_as_nested_dict(device=None) -> dict:
    """``memory_stats()`` with its dotted keys nested, as
    ``torch.cuda.memory_stats_as_nested_dict``."""
    nested: dict = {}
    for key, value in memory_stats(device).items():
        node = nested
        *path, leaf = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def get_per_process_memory_fraction(device=None) -> float:
    """The cap set by ``set_per_process_memory_fraction`` (1.0 by default)."""
    return _C._memory_fraction(_index(device))


def device_memory_used(device=None) -> int:
    """Bytes in use on the device, by this process's allocator (the host driver has no other
    users)."""
    free, total = mem_get_info(device)
    return total - free


def memory_cached(device=None) -> int:
    """Deprecated name of ``memory_reserved``."""
    warnings.warn(
        "torch.accel.memory_cached has been renamed to torch.accel.memory_reserved",
        FutureWarning,
        stacklevel=2,
    )
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of ``max_memory_reserved``."""
    warnings.warn(
        "torch.accel.max_memory_cached has been renamed to torch.accel.max_memory_reserved",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device)


def reset_max_memory_allocated(device=None) -> None:
    """Resets every peak statistic (as torch.cuda's, which it is deprecated for)."""
    warnings.warn(
        "torch.accel.reset_max_memory_allocated now calls "
        "torch.accel.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    """Resets every peak statistic (as torch.cuda's, which it is deprecated for)."""
    warnings.warn(
        "torch.accel.reset_max_memory_cached now calls "
        "torch.accel.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def caching_allocator_alloc(size: int, device=None, stream=None) -> int:
    """A raw block of ``size`` bytes from the caching allocator, ordered on ``stream`` (the
    current stream by default), as an integer address. Free it with caching_allocator_delete."""
    index = _index(device)
    if stream is None:
        stream = torch.accel.current_stream(index)
    if not isinstance(stream, torch.Stream) or stream.device.type != "accel":
        raise TypeError(
            "Invalid type for stream argument, must be `torch.accel.Stream` or "
            "a `torch.Stream` of an accel device"
        )
    return _C._raw_alloc(size, stream.stream_id, stream.device_index)


def caching_allocator_delete(mem_ptr: int) -> None:
    """Frees a block from caching_allocator_alloc."""
    _C._raw_delete(mem_ptr)


def caching_allocator_enable(value: bool = True) -> None:
    """Turns the caching allocator's cache on or off: off, every malloc and free goes to the
    driver (what TORCH_ACCEL_NO_CACHING=1 does from the start)."""
    _C._set_caching_enabled(bool(value))


@contextlib.contextmanager
def caching_allocator_disabled():
    """Runs the block with the cache off, then restores it."""
    prev = _C._caching_enabled()
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(prev)


def get_allocator_backend() -> str:
    """Accel has one allocator: its native caching allocator."""
    return "native"


def change_current_allocator(allocator) -> None:
    raise RuntimeError(
        "accel has one allocator, its caching allocator (csrc/allocator): it "
        "cannot be replaced at run time"
    )


class AccelPluggableAllocator:
    """torch.cuda.CUDAPluggableAllocator's place: accel cannot load another allocator."""

    def __init__(self, *args, **kwargs):
        change_current_allocator(None)


def memory_summary(device=None) -> str:
    """A short human-readable table of the main statistics."""
    stats = memory_stats(device)
    mib = 1024 * 1024
    rows = [
        ("Allocated memory", "allocated_bytes.all"),
        ("Active memory", "active_bytes.all"),
        ("Reserved memory", "reserved_bytes.all"),
        ("Non-releasable memory", "inactive_split_bytes.all"),
    ]
    lines = [f"accel:{_index(device)} memory summary", f"{'':<24}{'current':>14}{'peak':>14}"]
    for title, key in rows:
        cur = stats.get(f"{key}.current", 0) / mib
        peak = stats.get(f"{key}.peak", 0) / mib
        lines.append(f"{title:<24}{cur:>11.1f} MiB{peak:>10.1f} MiB")
    lines.append(
        f"device mallocs: {stats.get('num_device_alloc', 0)}, "
        f"frees: {stats.get('num_device_free', 0)}, "
        f"retries: {stats.get('num_alloc_retries', 0)}, OOMs: {stats.get('num_ooms', 0)}"
    )
    return "\n".join(lines)


# ---- pinned host memory ---------------------------------------------------------------------


def host_memory_stats_as_nested_dict() -> dict:
    """The pinned host allocator's statistics, as torch.cuda.host_memory_stats_as_nested_dict:
    blocks held and in use, their bytes, and the driver calls and their time (us)."""
    return _C._host_memory_stats()


def host_memory_stats() -> "collections.OrderedDict[str, int]":
    """host_memory_stats_as_nested_dict() with dotted keys (``"allocated_bytes.current"``...)."""
    flat = []

    def walk(prefix, node):
        for key, value in node.items():
            if isinstance(value, dict):
                walk(prefix + key + ".", value)
            else:
                flat.append((prefix + key, value))

    walk("", host_memory_stats_as_nested_dict())
    return collections.OrderedDict(sorted(flat))


def reset_accumulated_host_memory_stats() -> None:
    _C._reset_accumulated_host_memory_stats()


def reset_peak_host_memory_stats() -> None:
    _C._reset_peak_host_memory_stats()


def empty_host_cache() -> None:
    """Returns the cached, unused pinned blocks to the driver (which synchronises the devices,
    as cudaFreeHost does)."""
    _C._empty_host_cache()


def __getattr__(name: str):
    # torch.cuda.memory.MemPool / use_mem_pool; imported late: mem_pool needs graphs, which
    # needs this module.
    if name in ("MemPool", "use_mem_pool"):
        from . import mem_pool

        return getattr(mem_pool, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
