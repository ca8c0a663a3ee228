"""The caching allocator from Python: the ``torch.cuda.memory`` functions."""

import collections

import torch

from .. import _C
from ._utils import _get_device_index


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


def memory_snapshot(device=None) -> dict:
    """Segments and blocks of the allocator, in the layout of ``torch.cuda.memory._snapshot()``
    (so ``torch.cuda._memory_viz.segment_plot`` can draw it)."""
    index = _index(device)
    return {"segments": _C._memory_snapshot(index), "device_traces": [[]]}


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
