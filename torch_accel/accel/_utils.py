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


def _traced_device(device) -> tuple:
    """The arguments torch.accelerator's functions take for ``device`` inside a torch.compile
    trace: (torch.device,), or () for the current device (Dynamo's handlers refuse None). No
    call into _C, which Dynamo cannot trace."""
    if device is None or (not isinstance(device, (str, torch.device)) and int(device) == -1):
        return ()
    if isinstance(device, (str, torch.device)):
        return (torch.device(device),)
    return (torch.device("accel", int(device)),)
