"""torch.distributed on accel: the ``accl`` c10d backend.

Importing torch_accel registers it for the accel device, so ``dist.init_process_group()``
picks it (as ``nccl`` for cuda), and ``backend="accl"``, ``"cpu:gloo,accel:accl"`` and
``device_id=torch.device("accel", rank)`` work. DDP, FSDP2, DTensor and torchrun then run
unchanged. The transport is torch's own: ProcessGroupGloo on the host driver (accel memory
staged through pinned host buffers, ordered against the accel streams), NCCL on the cuda
driver.
"""

import inspect

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


def _register() -> None:
    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    kwargs = {}
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kwargs["devices"] = ["accel"]
    dist.Backend.register_backend(BACKEND, _create_backend, **kwargs)


_register()
