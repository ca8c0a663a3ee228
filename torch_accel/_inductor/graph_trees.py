"""``torch.compile(mode="reduce-overhead")`` on accel: Inductor's CUDA graph trees are built
on torch.cuda (its graphs, allocator and streams), so they cannot replay accel work. Inductor
already declines graph trees for any device but "cuda"; this makes it say so in one clear line
(its own skip message is off by default and calls accel "multiple devices"), and the compiled
code runs without graphs, with the same results. For graph replay on accel, capture the step,
eager or compiled with the default mode (its kernels are stream launches), with
``torch.accel.graph``.
"""

import warnings

MESSAGE = (
    "torch_accel: mode='reduce-overhead' compiles for accel without CUDA graphs "
    "(Inductor's graph trees serve torch.cuda only); the compiled code runs as with "
    "mode='default'. For graph replay, capture the step (eager, or compiled with the default "
    "mode) with torch.accel.graph."
)

_warned = False


def apply() -> None:
    from torch._inductor import cudagraph_utils

    check = getattr(cudagraph_utils, "check_multiple_devices_or_any_cpu_nodes", None)
    if check is None or getattr(check, "_accel", False):
        return

    def check_devices(device_node_mapping):
        global _warned
        if any(d.type == "accel" for d in device_node_mapping):
            if not _warned:
                _warned = True
                warnings.warn(MESSAGE, stacklevel=2)
            return cudagraph_utils.format_default_skip_message("accel device: " + MESSAGE)
        return check(device_node_mapping)

    check_devices._accel = True
    cudagraph_utils.check_multiple_devices_or_any_cpu_nodes = check_devices
