"""Device-index parsing, also what torch.serialization asks the device module for."""

import torch

from .. import _C


def _get_device_index(device, optional: bool = False, allow_cpu: bool = False) -> int:
    """The accel device index of ``device`` (int, str or torch.device); the current device
    when it names none and ``optional`` is set, or when it is -1."""
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type == "cpu" and allow_cpu:
            return -1
        if device.type != "accel":
            raise ValueError(f"Expected an accel device, but got: {device}")
        index = device.index
    else:
        index = device
    if index is None:
        if not optional:
            raise ValueError(f"Expected an accel device with a specified index, got: {device}")
        return _C._current_device()
    return _C._check_device(int(index))  # -1 is the current device
