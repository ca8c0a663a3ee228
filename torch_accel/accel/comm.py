"""Copies between the accel devices of one process, with the API of ``torch.cuda.comm``
(broadcast, scatter, gather, reduce_add). Each is a set of device-to-device copies on the
current streams; results match torch.cuda.comm's."""

import torch

from ._utils import _get_device_index

__all__ = [
    "broadcast",
    "broadcast_coalesced",
    "reduce_add",
    "reduce_add_coalesced",
    "scatter",
    "gather",
]


def _device(d) -> torch.device:
    if isinstance(d, torch.device) and d.type == "cpu":
        return d
    return torch.device("accel", _get_device_index(d, optional=True))


def broadcast(tensor, devices=None, *, out=None):
    """Copies ``tensor`` to each of ``devices`` (or into the tensors of ``out``)."""
    if (devices is None) == (out is None):
        raise RuntimeError(
            "Exactly one of 'devices' and 'out' must be specified, but got "
            f"devices={devices} and out={out}"
        )
    if out is not None:
        for o in out:
            o.copy_(tensor)
        return tuple(out)
    return tuple(tensor.to(_device(d), copy=True) for d in devices)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """broadcast() of each tensor: a list per device (lists, as torch.cuda's, which
    nn.DataParallel's Broadcast assigns into)."""
    copies = [broadcast(t, devices) for t in tensors]
    return [[c[i] for c in copies] for i in range(len(devices))]


def reduce_add(inputs, destination=None):
    """The sum of same-shaped tensors from several devices, on ``destination``."""
    if not inputs:
        raise ValueError("reduce_add expects at least one input")
    shape = inputs[0].shape
    for i, t in enumerate(inputs):
        if t.shape != shape:
            raise ValueError(
                f"input {i} has invalid size: got {list(t.shape)}, but expected {list(shape)}"
            )
    dest = _device(destination)
    result = inputs[0].to(dest, copy=True)
    for t in inputs[1:]:
        result.add_(t.to(dest))
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """reduce_add() of each position: ``inputs`` holds one sequence of tensors per device."""
    return tuple(reduce_add(list(group), destination) for group in zip(*inputs))


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """Splits ``tensor`` along ``dim`` across ``devices`` (or into the tensors of ``out``)."""
    if out is not None:
        sizes = [o.shape[dim] for o in out]
        for o, chunk in zip(out, torch.split(tensor, sizes, dim)):
            o.copy_(chunk)
        return tuple(out)
    devices = [_device(d) for d in devices]
    if chunk_sizes is None:
        chunks = torch.chunk(tensor, len(devices), dim)  # as CUDA's: maybe fewer than devices
    else:
        if sum(chunk_sizes) != tensor.shape[dim]:
            raise RuntimeError(
                f"Expected chunk sizes to sum to {tensor.shape[dim]}, but got {sum(chunk_sizes)}"
            )
        chunks = torch.split(tensor, list(chunk_sizes), dim)
    return tuple(c.to(d, copy=True) for c, d in zip(chunks, devices))


def gather(tensors, dim=0, destination=None, *, out=None):
    """Concatenates tensors from several devices along ``dim``, on ``destination`` (-1: CPU)."""
    if out is not None:
        return torch.cat([t.to(out.device) for t in tensors], dim, out=out)
    dest = torch.device("cpu") if destination == -1 else _device(destination)
    return torch.cat([t.to(dest) for t in tensors], dim)
