"""``torch.accel``: the accel device module, with the API of ``torch.cuda``."""

import torch

from .._sharing import ipc_collect
from . import _utils, comm, graphs, jiterator, memory, nccl, nvtx, profiler, streams
from .amp import get_amp_supported_dtype, get_autocast_dtype, is_autocast_enabled
from .device import (
    AccelError,
    DeferredAccelCallError,
    GreenContext,
    _is_in_bad_fork,
    accelrt,
    accelStatus,
    can_device_access_peer,
    check_error,
    clock_rate,
    current_blas_handle,
    current_device,
    current_solver_handle,
    device,
    device_count,
    device_of,
    get_arch_list,
    get_device_capability,
    get_device_name,
    get_device_properties,
    get_gencode_flags,
    get_sync_debug_mode,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    is_tf32_supported,
    list_gpu_processes,
    memory_usage,
    power_draw,
    set_device,
    set_sync_debug_mode,
    synchronize,
    temperature,
    utilization,
)
from .graphs import (
    AccelGraph,
    Graph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from .mem_pool import MemPool, use_mem_pool
from .memory import (
    AccelPluggableAllocator,
    caching_allocator_alloc,
    caching_allocator_delete,
    caching_allocator_disabled,
    caching_allocator_enable,
    change_current_allocator,
    device_memory_used,
    empty_cache,
    empty_host_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .random import (
    default_generators,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import (
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    get_stream_from_external,
    set_stream,
    stream,
)

# The error types torch.cuda re-exports: accel raises the same ones.
AcceleratorError = torch.AcceleratorError
OutOfMemoryError = torch.OutOfMemoryError

# torch.cuda's flag, set once its context exists; accel's runtime starts when the extension
# loads. torch.utils.checkpoint stashes and restores the device's RNG state only when it is
# true: without it a recomputed dropout drew a new mask and the gradients were wrong.
_initialized = True

__all__ = [n for n in dir() if not n.startswith("_") and n != "torch"] + ["_is_in_bad_fork"]
