"""At exit, autograd's accel device threads let go of the last backward before Python
finalizes; otherwise a late release can abort the process (csrc/python/autograd_exit.cpp)."""

import atexit
import os

from . import _C


def _device_threads_started() -> bool:
    """Whether autograd started its device threads (named pt_autograd_<n>) in this process."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return True  # no /proc to ask: drain anyway, it costs one tiny backward per device
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                if f.read().startswith("pt_autograd_"):
                    return True
        except OSError:
            continue  # the thread ended meanwhile
    return False


def _drain() -> None:
    if not _C._is_in_bad_fork() and _device_threads_started():
        _C._drain_autograd_device_threads()


def install() -> None:
    atexit.register(_drain)
