"""Memory pools of the caching allocator: ``torch.cuda.MemPool`` and ``use_mem_pool``.

A pool's blocks serve only the allocations routed to it, so its memory is never handed to
other work; graphs use the same pools (``torch.accel.graph(g, pool=mem_pool.id)``)."""

import contextlib

from .. import _C
from ._utils import _get_device_index
from .device import current_device
from .graphs import graph_pool_handle


class MemPool:
    """A private pool of the caching allocator on the current device. ``allocator`` (a
    custom allocator) is not supported on accel; ``use_on_oom`` and ``no_split`` neither."""

    def __init__(self, allocator=None, use_on_oom: bool = False, no_split: bool = False):
        if allocator is not None:
            raise NotImplementedError(
                "accel's MemPool has no custom allocators: its pools are "
                "part of the caching allocator"
            )
        if use_on_oom or no_split:
            raise NotImplementedError("accel's MemPool does not support use_on_oom or no_split")
        self._device = current_device()
        self._id = graph_pool_handle()
        _C._pool_create(self._device, self._id)

    @property
    def id(self) -> tuple:
        """The pool's id, as a pair of ints (a graph's ``pool`` argument accepts it)."""
        return self._id

    @property
    def allocator(self):
        return None

    def use_count(self) -> int:
        """How many references the pool has: this object, active ``use_mem_pool`` contexts and
        the graphs captured into it."""
        return _C._pool_use_count(self._device, self._id)

    def snapshot(self, include_traces=True):
        raise NotImplementedError(
            "accel does not keep per-pool snapshots; "
            "torch.accel.memory_snapshot() covers every pool"
        )

    def __del__(self):
        try:
            _C._pool_release(self._device, self._id)
            _C._empty_cache()  # returns the pool's segments once nothing uses them
        except Exception:
            pass  # never raise under garbage collection


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device=None):
    """Routes the current thread's accel allocations on ``device`` (default: current) to
    ``pool`` inside the context."""
    index = current_device() if device is None else _get_device_index(device)
    _C._pool_begin_current_thread(index, pool.id)
    try:
        yield
    finally:
        _C._pool_end(index, pool.id)
        _C._pool_release(index, pool.id)
