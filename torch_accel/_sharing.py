"""Accel tensors through ``torch.multiprocessing``, as CUDA tensors go through IPC.

Pickling an accel tensor for another process sends the driver allocation that holds its
storage (on the host driver: the memfd behind it, passed as a file descriptor; on the CUDA
driver: a cudaIpcMemHandle) with the storage's place in it. The consumer maps that allocation
and sees the producer's memory: writes on either side are visible to the other, as with CUDA.
The producer keeps the storage alive while a consumer holds it (``torch.accel.ipc_collect()``
releases what no consumer holds any more; sharing does it too).

A tensor whose memory cannot be shared raises a clear error where it is pickled. A
``multiprocessing.Queue`` pickles in a feeder thread, where an exception is only printed: there
the error is sent instead, and the consumer's ``get()`` raises it rather than waiting forever.
"""

import multiprocessing.reduction
import os
import threading
import warnings

import torch
from torch.multiprocessing import reductions as _torch_reductions

from . import _C

# (segment id, offset, nbytes) -> weak reference to the storage opened for it in this process.
_opened: dict = {}


def _unshareable(message: str):
    raise RuntimeError(message)


def _reduce_tensor(tensor):
    if tensor.device.type != "accel":
        return _torch_reductions.reduce_tensor(tensor)
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries. If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue)."
        )
    meta = (
        type(tensor),
        tuple(tensor.size()),
        tuple(tensor.stride()),
        tensor.storage_offset(),
        tensor.dtype,
        tensor.requires_grad,
        tensor.device.index,
    )
    storage = tensor.untyped_storage()
    if storage.nbytes() == 0:
        return (_rebuild_tensor, meta + (None,))
    try:
        device, fd, handle, seg_id, seg_size, offset, nbytes, lease = _C._share_storage(storage)
    except RuntimeError as e:
        message = f"cannot send an accel tensor on {tensor.device} to another process: {e}"
        if threading.current_thread().name == "QueueFeederThread":
            warnings.warn(message + " (the receiver's get() raises this error)", stacklevel=2)
            return (_unshareable, (message,))
        raise RuntimeError(message) from e
    fd_share = multiprocessing.reduction.DupFd(fd) if fd >= 0 else None
    sent = (
        device,
        fd_share,
        handle,
        seg_id,
        seg_size,
        offset,
        nbytes,
        multiprocessing.reduction.DupFd(lease),
    )
    return (_rebuild_tensor, meta + (sent,))


def _open(device, fd_share, handle, seg_id, seg_size, offset, nbytes, lease_share):
    lease = lease_share.detach()
    try:
        key = (seg_id, offset, nbytes)
        ref = _opened.get(key)
        if ref is not None and not ref.expired():
            _C._acknowledge_shared_storage(lease)
            return torch.UntypedStorage._new_with_weak_ptr(ref.cdata)
        fd = fd_share.detach() if fd_share is not None else -1
        try:
            storage = _C._open_shared_storage(
                device, fd, handle, seg_id, seg_size, offset, nbytes, lease
            )
        finally:
            if fd >= 0:
                os.close(fd)
        _opened[key] = torch.multiprocessing.reductions.StorageWeakRef(storage)
        return storage
    finally:
        os.close(lease)


def _rebuild_tensor(cls, size, stride, storage_offset, dtype, requires_grad, index, sent):
    device = torch.device("accel", index)
    tensor = torch.empty((0,), dtype=dtype, device=device)
    if sent is not None:
        tensor.set_(_open(*sent), storage_offset, size, stride)
    if cls is torch.nn.parameter.Parameter:
        return torch.nn.parameter.Parameter(tensor, requires_grad=requires_grad)
    tensor.requires_grad = requires_grad
    return tensor


def _reduce_storage(storage):
    if storage.device.type == "accel":
        raise RuntimeError("Cannot pickle accel storage; try pickling an accel tensor instead")
    return _torch_reductions.reduce_storage(storage)


def install() -> None:
    """Registers the reducers with torch.multiprocessing's pickler (after torch's own)."""
    pickler = multiprocessing.reduction.ForkingPickler
    for cls in (torch.Tensor, torch.nn.parameter.Parameter):
        pickler.register(cls, _reduce_tensor)
    pickler.register(torch.UntypedStorage, _reduce_storage)


def ipc_collect() -> None:
    """Releases the storages this process shared that no other process holds any more."""
    _C._ipc_collect()
