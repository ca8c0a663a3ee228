"""transformers' bfloat16 check, answered for accel.

``TrainingArguments(bf16=True)`` refuses to start unless transformers'
``is_torch_bf16_gpu_available()`` says yes, and that function knows a fixed list of devices
(CUDA, XPU, NPU, MPS, ...), with no branch for an out-of-tree backend. accel computes bfloat16
natively on both drivers, so while accel is torch's current accelerator the answer is yes;
otherwise transformers' own answer stands. (fp16 needs nothing: transformers asks accelerate,
which asks torch.accelerator.)

transformers binds the function by name when its modules load, so it is wrapped where it is
defined, as that module loads (a meta-path hook), or, when transformers is already imported,
in every module that holds it.
"""

import functools
import sys

import torch

from ._after_import import after_import

DEFINED_IN = "transformers.utils.import_utils"
NAME = "is_torch_bf16_gpu_available"


def _accel_is_current() -> bool:
    accelerator = torch.accelerator.current_accelerator()
    return accelerator is not None and accelerator.type == "accel"


def _wrap(original):
    if getattr(original, "_accel_wrapped", False):
        return original

    @functools.wraps(original)
    def is_torch_bf16_gpu_available() -> bool:
        return _accel_is_current() or original()

    is_torch_bf16_gpu_available._accel_wrapped = True
    return is_torch_bf16_gpu_available


def _wrap_in(module) -> None:
    if hasattr(module, NAME):
        setattr(module, NAME, _wrap(getattr(module, NAME)))


def install() -> None:
    if DEFINED_IN not in sys.modules:
        after_import(DEFINED_IN, _wrap_in)
        return
    for name in (DEFINED_IN, "transformers.utils", "transformers.training_args"):
        module = sys.modules.get(name)
        if module is not None:
            _wrap_in(module)
