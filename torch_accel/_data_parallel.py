"""nn.DataParallel across accel devices. Its copies go through torch.nn.parallel.comm, whose
broadcast, scatter, gather and reduce_add call torch._C's CUDA implementations: absent from
CPU wheels, and refusing accel tensors in CUDA ones. Calls on accel tensors (or any call, where
the wheel has no CUDA implementation) take torch.accel.comm's instead."""

import functools

import torch
import torch.nn.parallel.comm as _comm

from .accel import comm as _accel_comm

_ROUTED = "__accel_routed__"


def _has_accel_tensor(x) -> bool:
    if isinstance(x, torch.Tensor):
        return x.device.type == "accel"
    if isinstance(x, (list, tuple)):
        return any(_has_accel_tensor(y) for y in x)
    return False


def _route(name: str) -> None:
    original, ours = getattr(_comm, name), getattr(_accel_comm, name)
    cuda_only = not hasattr(torch._C, "_broadcast_coalesced")  # a CPU wheel

    @functools.wraps(original)
    def routed(*args, **kwargs):
        if cuda_only or _has_accel_tensor(args) or _has_accel_tensor(list(kwargs.values())):
            return ours(*args, **kwargs)
        return original(*args, **kwargs)

    setattr(routed, _ROUTED, True)
    setattr(_comm, name, routed)


def install() -> None:
    for name in _accel_comm.__all__:
        if not getattr(getattr(_comm, name), _ROUTED, False):
            _route(name)
