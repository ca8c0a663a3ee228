"""Annotations for a profile, with the API of ``torch.cuda.nvtx``.

Accel has no external range tool, so a range is a ``torch.profiler`` user annotation (what
``record_function`` makes): it shows on the CPU timeline and, around the work launched inside
it, on the accel stream lanes. Outside a profile a range costs about a microsecond."""

import contextlib
import threading

import torch

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_local = threading.local()
_started = {}  # range_start id -> handle (such ranges may end on another thread)
_started_lock = threading.Lock()
_next_id = 0


def _enter(msg: str):
    return torch.ops.profiler._record_function_enter_new(msg, None)


def _exit(handle) -> None:
    torch.ops.profiler._record_function_exit._RecordFunction(handle)


def _stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def range_push(msg: str) -> int:
    """Opens a range on this thread; returns its zero-based depth."""
    stack = _stack()
    stack.append(_enter(msg))
    return len(stack) - 1


def range_pop() -> int:
    """Closes this thread's innermost range; returns its depth, or -1 when none was open."""
    stack = _stack()
    if not stack:
        return -1
    _exit(stack.pop())
    return len(stack)


def range_start(msg: str) -> int:
    """Opens a range that range_end(id) may close on any thread; returns the id."""
    global _next_id
    handle = _enter(msg)
    with _started_lock:
        _next_id += 1
        _started[_next_id] = handle
        return _next_id


def range_end(range_id: int) -> None:
    with _started_lock:
        handle = _started.pop(range_id, None)
    if handle is None:
        raise ValueError(f"range_end: no open range with id {range_id}")
    _exit(handle)


def mark(msg: str) -> None:
    """An instant annotation (an empty range)."""
    _exit(_enter(msg))


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):
    """``with torch.accel.nvtx.range("step {}", i):`` annotates the block."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
