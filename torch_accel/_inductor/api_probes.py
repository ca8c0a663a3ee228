"""The Inductor APIs the hook builds on, looked up in the torch at hand: what is missing
disables compilation (or cpp_wrapper=True) with the names, instead of failing inside Inductor."""


def missing_inductor_apis() -> list:
    from torch._inductor import scheduler, utils
    from torch._inductor.codegen import common, wrapper

    needed = [
        (common, "register_backend_for_device"),
        (common, "register_device_op_overrides"),
        (common, "DeviceOpOverrides"),
        (wrapper, "PythonWrapperCodegen"),
        (wrapper, "SubgraphPythonWrapperCodegen"),
        (scheduler, "BaseSchedulerNode"),
        (utils, "get_current_backend"),
    ]
    missing = [f"{m.__name__}.{n}" for m, n in needed if not hasattr(m, n)]
    methods = [
        (getattr(wrapper, "PythonWrapperCodegen", None), "_generate_kernel_call_helper"),
        (getattr(scheduler, "BaseSchedulerNode", None), "is_cpu"),
    ]
    for owner, name in methods:
        if owner is not None and not hasattr(owner, name):
            missing.append(f"{owner.__name__}.{name}")
    return missing


def missing_cpp_wrapper_apis() -> list:
    """What accel's C++ wrapper (cpp_wrapper.py) builds on that this torch's CppWrapperCpu
    lacks."""
    from torch._inductor.codegen import cpp_utils, cpp_wrapper_cpu

    needed = [
        "generate_fallback_kernel_with_runtime_lookup",
        "generate_fallback_kernel_with_runtime_lookup_boxed",
        "_generate_kernel_call_helper",
        "add_device_include",
        "generate_scatter_fallback",
    ]
    missing = [n for n in needed if not hasattr(cpp_wrapper_cpu.CppWrapperCpu, n)]
    if not hasattr(cpp_utils, "DEVICE_TO_ATEN"):
        missing.append("cpp_utils.DEVICE_TO_ATEN")
    return missing
