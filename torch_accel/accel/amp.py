"""Automatic mixed precision for accel: what ``torch.autocast("accel")`` asks the device
module (the C++ side registers the AutocastPrivateUse1 policy, the same as CUDA's), and
torch.cuda.amp's older names."""

import warnings

import torch


def get_amp_supported_dtype() -> list:
    """The lower-precision dtypes autocast may use on accel: the GEMMs take both."""
    return [torch.float16, torch.bfloat16]


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("accel")


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("accel")


# torch.cuda.amp's older spellings, deprecated there as here: scripts written against them
# run on accel once "cuda" becomes "accel".
def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"`torch.accel.amp.{old}` is deprecated. Please use `{new}` instead.",
        FutureWarning,
        stacklevel=3,
    )


class autocast(torch.amp.autocast_mode.autocast):
    """``torch.amp.autocast("accel", ...)`` under torch.cuda.amp's name and defaults."""

    def __init__(
        self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True
    ) -> None:
        _deprecated("autocast(args...)", 'torch.amp.autocast("accel", args...)')
        super().__init__("accel", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """``torch.amp.GradScaler("accel", ...)`` under torch.cuda.amp's name and defaults."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        _deprecated("GradScaler(args...)", 'torch.amp.GradScaler("accel", args...)')
        super().__init__(
            "accel", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(device_type="accel")``."""
    _deprecated("custom_fwd(args...)", 'torch.amp.custom_fwd(args..., device_type="accel")')
    return torch.amp.custom_fwd(fwd, device_type="accel", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.amp.custom_bwd(device_type="accel")``."""
    _deprecated("custom_bwd(args...)", 'torch.amp.custom_bwd(args..., device_type="accel")')
    return torch.amp.custom_bwd(bwd, device_type="accel")
