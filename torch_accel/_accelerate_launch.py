"""accelerate (and HF Trainer through it) under a multi-process launch on accel.

accelerate knows a fixed list of device types for distributed runs (its DistributedType enum:
MULTI_GPU, MULTI_NPU, MULTI_XPU, ...) and tests membership in that list in several places, so
for an out-of-tree device it resolves DistributedType.NO even under torchrun: every process
then trains its own replica on the current device, without DDP and without sharding the data,
and transformers only says "parallel_mode != ParallelMode.DISTRIBUTED". That needs a device
entry in accelerate itself (as NPU, MLU, MUSA and SDAA have); until then this says plainly what
is happening, once per process, and points to what does distribute on accel.
"""

import os
import warnings

import torch

from ._after_import import after_import

MESSAGE = (
    "torch_accel: accelerate {version} has no distributed type for the out-of-tree device "
    "'accel' (its list is fixed: cuda, npu, xpu, ...), so this launch of {world} processes "
    "runs DistributedType.NO: each process trains its own replica on {device}, without DDP "
    "and without splitting the data. To train data-parallel on accel, use torch.distributed "
    "directly (DDP or FSDP2 under torchrun), which accel supports."
)

_warned = False


def _launched_world() -> int:
    if os.environ.get("LOCAL_RANK") is None:
        return 1
    return int(os.environ.get("WORLD_SIZE", "1"))


def _check(state) -> None:
    global _warned
    if _warned or getattr(state, "_cpu", False):
        return
    from accelerate.utils import DistributedType

    device = getattr(state, "device", None)
    world = _launched_world()
    if world > 1 and state.distributed_type == DistributedType.NO and device is not None:
        if torch.device(device).type == "accel":
            import accelerate

            _warned = True
            warnings.warn(
                MESSAGE.format(version=accelerate.__version__, world=world, device=device),
                stacklevel=3,
            )


def _wrap_init(module) -> None:
    cls = module.PartialState
    original = cls.__init__
    if getattr(original, "_accel_wrapped", False):
        return

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _check(self)

    __init__._accel_wrapped = True
    __init__.__doc__ = original.__doc__
    cls.__init__ = __init__


def install() -> None:
    after_import("accelerate.state", _wrap_init)
