"""``torch.cuda.nccl``'s place. NCCL talks to NVIDIA GPUs only; accel tensors reach other
devices and processes through ``torch.distributed`` (within a process: ``torch.accel.comm``)."""

__all__ = [
    "is_available",
    "version",
    "all_reduce",
    "reduce",
    "broadcast",
    "all_gather",
    "reduce_scatter",
    "unique_id",
    "init_rank",
]

_WHY = (
    "accel has no NCCL binding: use torch.distributed for collectives, or torch.accel.comm "
    "between the devices of one process"
)


def is_available(tensors) -> bool:
    return False


def _unavailable(*args, **kwargs):
    raise RuntimeError(_WHY)


version = unique_id = init_rank = _unavailable
all_reduce = reduce = broadcast = all_gather = reduce_scatter = _unavailable
