"""torch.distributed on accel: the ``accl`` c10d backend.

Importing torch_accel registers it for the accel device, so ``dist.init_process_group()``
picks it (as ``nccl`` for cuda), and ``backend="accl"``, ``"cpu:gloo,accel:accl"`` and
``device_id=torch.device("accel", rank)`` work. DDP, FSDP2, DTensor and torchrun then run
unchanged. The transport is torch's own: ProcessGroupGloo on the host driver (accel memory
staged through pinned host buffers, ordered against the accel streams), NCCL on the cuda
driver.
"""

import functools
import inspect

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND", "bf16_compression_hook", "staging_stats"]

#: The name of the backend, for ``init_process_group(backend=...)``.
BACKEND = "accl"


def _create_backend(store, rank, world_size, timeout):
    # The gloo group over the same ranks: the transport on the host driver, and the channel of
    # the cross-rank argument check on both drivers. Its own key prefix keeps its rendezvous
    # apart from what the accl backend keeps in the store.
    gloo = dist.ProcessGroupGloo(dist.PrefixStore("accl-gloo/", store), rank, world_size, timeout)
    return _C.ProcessGroupAccel(store, gloo, rank, world_size, timeout)


def bf16_compression_hook(process_group, bucket):
    """DDP's bf16 gradient compression hook (torch's bf16_compress_hook), under a name that
    DDP accepts on accel: DDP refuses that hook by its name unless torch was built with CUDA
    and NCCL (or XPU), though the hook itself works on any device:
    ``ddp.register_comm_hook(group, bf16_compression_hook)``."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    return default_hooks.bf16_compress_hook(process_group, bucket)


def staging_stats() -> dict:
    """The pinned staging pool of the host driver's transport: bytes in use and cached,
    acquires, reuses, and host allocations/frees (cached blocks are freed with the last
    process group)."""
    return _C._dist_staging_stats()


def _default_to_accl(pg) -> None:
    # A group of several backends ("cpu:gloo,accel:accl", and init_process_group()'s default)
    # should name accl its default, as it names nccl for cuda. torch compares the plugin's
    # upper-case name with the config's lower-case one, so it sets none, and
    # destroy_process_group() then warns "No backend of type 0 found" on every rank.
    if not isinstance(pg, dist.ProcessGroup) or pg._get_backend_name() != "undefined":
        return
    try:
        backend = pg._get_backend(torch.device("accel"))
    except RuntimeError:
        return
    if isinstance(backend, _C.ProcessGroupAccel):
        pg._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)


def _install_default_backend_fix() -> None:
    c10d = dist.distributed_c10d
    helper = getattr(c10d, "_new_process_group_helper", None)
    if helper is None or getattr(helper, "__accel_default__", False):
        return

    @functools.wraps(helper)
    def wrapped(*args, **kwargs):
        result = helper(*args, **kwargs)
        _default_to_accl(result[0] if isinstance(result, tuple) else result)
        return result

    wrapped.__accel_default__ = True
    c10d._new_process_group_helper = wrapped


def _register() -> None:
    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    kwargs = {}
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kwargs["devices"] = ["accel"]
    dist.Backend.register_backend(BACKEND, _create_backend, **kwargs)
    _install_default_backend_fix()


_register()
