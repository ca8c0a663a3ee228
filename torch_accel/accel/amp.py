"""Automatic mixed precision for accel: what ``torch.autocast("accel")`` asks the device
module (the C++ side registers the AutocastPrivateUse1 policy, the same as CUDA's)."""

import torch


def get_amp_supported_dtype() -> list:
    """The lower-precision dtypes autocast may use on accel: the GEMMs take both."""
    return [torch.float16, torch.bfloat16]


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("accel")


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("accel")
