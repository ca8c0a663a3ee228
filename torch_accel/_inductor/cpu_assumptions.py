"""Places where Inductor decides "C++ backend" by ``device.type == "cpu"``.

On the host driver accel's kernels are Inductor's C++ backend (CppScheduling), but a few
decisions inside Inductor test the device type instead of the registered backend. Left alone,
accel would be treated as a Triton GPU there and code generation fails. Each patch below makes
such a test answer for accel as it does for cpu; nothing else changes. They are applied once,
when Inductor first initialises its backends on the host driver, and each is feature-detected
by the caller (see api_probes.missing_inductor_apis).
"""


def apply() -> None:
    _scheduler_node_is_cpu()
    _current_backend_is_cpp()


def _scheduler_node_is_cpu() -> None:
    # BaseSchedulerNode.is_cpu() gates loop transformations during fusion (reindexing, loop
    # reordering, index inversion) that the C++ backend does not support.
    from torch._inductor.scheduler import BaseSchedulerNode

    if getattr(BaseSchedulerNode.is_cpu, "_accel", False):
        return

    def is_cpu(self) -> bool:
        device = self.get_device()
        return device is not None and device.type in ("cpu", "accel")

    is_cpu._accel = True
    BaseSchedulerNode.is_cpu = is_cpu


def _current_backend_is_cpp() -> None:
    # utils.get_current_backend() maps every device it does not know to config.cuda_backend
    # ("triton"); CSE's dtype propagation (e.g. for ops.masked) then reads Triton-only fields.
    # Modules that imported the function by name get the same replacement.
    from torch._inductor import scheduler, utils
    from torch._inductor.codegen import common
    from torch._inductor.virtualized import V

    original = utils.get_current_backend
    if getattr(original, "_accel", False):
        return

    def get_current_backend(device_type=None):
        if not device_type:
            device_type = V.graph.get_current_device_or_throw().type
        return "cpp" if device_type == "accel" else original(device_type)

    get_current_backend._accel = True
    for module in (utils, common, scheduler):
        if getattr(module, "get_current_backend", None) is original:
            module.get_current_backend = get_current_backend
