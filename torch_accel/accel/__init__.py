"""``torch.accel``: the accel device module, with the API of ``torch.cuda``."""

from . import _utils, graphs
from .amp import get_amp_supported_dtype, get_autocast_dtype, is_autocast_enabled
from .device import (
    _is_in_bad_fork,
    current_device,
    device,
    device_count,
    device_of,
    get_device_capability,
    get_device_name,
    get_device_properties,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    set_device,
    synchronize,
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
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
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
from .streams import Event, Stream, current_stream, default_stream, set_stream, stream

__all__ = [name for name in dir() if not name.startswith("_")] + ["_is_in_bad_fork"]
