"""``torch.cuda.profiler``'s place: those functions start and stop an external CUDA profiler
(Nsight). Accel has none; its device activity is recorded by ``torch.profiler`` with
``ProfilerActivity.PrivateUse1``."""

import contextlib

__all__ = ["init", "start", "stop", "profile"]

_WHY = (
    "accel has no external profiler to start or stop: use torch.profiler.profile("
    "activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1])"
)


def init(*args, **kwargs):
    raise RuntimeError(_WHY)


def start():
    raise RuntimeError(_WHY)


def stop():
    raise RuntimeError(_WHY)


@contextlib.contextmanager
def profile():
    start()
    yield
