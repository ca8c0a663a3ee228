"""Registers accel with Dynamo (its device interface) and Inductor (a scheduling backend, a
wrapper codegen and device op overrides). A part whose registration fails is registered as a
stand-in that refuses to compile, naming the reason.

- host driver: Inductor's C++ kernels (CppScheduling) called in stream order from the Python
  wrapper (host_wrapper.py) or, with cpp_wrapper=True, from the C++ wrapper (cpp_wrapper.py).
- cuda driver: Inductor's Triton kernels launched on accel's current CUDA stream.
"""

from .api_probes import missing_cpp_wrapper_apis, missing_inductor_apis
from .registration_status import DISABLED_HINT, STATUS, run_or_disable


def register_dynamo() -> None:
    from torch._dynamo.device_interface import register_interface_for_device

    from .device_interface import AccelInterface

    register_interface_for_device("accel", AccelInterface)
    from .. import _C

    for i in range(_C._device_count()):
        register_interface_for_device(f"accel:{i}", AccelInterface)
    STATUS["dynamo"] = "ok"


def _cache_key_pass() -> dict:
    """``register_backend_for_device``'s ``device_custom_pass``, where this torch has it: a pass
    that changes nothing, whose uuid (a hash of this package's Inductor sources) is part of
    Inductor's FX graph cache key. A graph cached by another version of this integration (its
    wrapper code, its graph routing) is then compiled again rather than reused."""
    import hashlib
    import inspect
    import pathlib

    from torch._inductor.codegen import common

    if "device_custom_pass" not in inspect.signature(common.register_backend_for_device).parameters:
        return {}
    from torch._inductor.custom_graph_pass import CustomGraphModulePass

    digest = hashlib.sha256()
    for source in sorted(pathlib.Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())

    class IntegrationVersion(CustomGraphModulePass):
        def __call__(self, gm) -> None:
            pass

        def uuid(self) -> str:
            return "torch_accel-inductor-" + digest.hexdigest()

    return {"device_custom_pass": IntegrationVersion()}


def _register_triton_backend() -> None:
    """Inductor's Triton kernels, launched on accel's current CUDA stream (the CUDA driver's
    backend). It only generates code until a kernel runs, so tests register it on the host
    driver too, to check the generated code as text."""
    from torch._inductor import utils
    from torch._inductor.codegen import common
    from torch._inductor.codegen.triton import TritonScheduling

    from .cuda_wrapper import AccelGpuWrapperCodegen, triton_targets_cuda

    triton_targets_cuda()
    # Inductor keys its GPU paths (device guards, stream handles, Triton launches) on this
    # list; accel on the CUDA driver is a CUDA GPU.
    if "accel" not in utils.GPU_TYPES:
        utils.GPU_TYPES.append("accel")
    STATUS["cpp_wrapper"] = (
        "disabled: the CUDA driver launches Triton kernels from the Python wrapper"
    )
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen

    refuse = _refusing_wrapper(
        PythonWrapperCodegen,
        "cpp_wrapper=True is not supported on accel's CUDA driver; compile with cpp_wrapper=False",
    )
    common.register_backend_for_device(
        "accel", TritonScheduling, AccelGpuWrapperCodegen, refuse, **_cache_key_pass()
    )


def register_inductor(backend: str | None = None) -> None:
    """Registers accel's Inductor backend: "cpp" on the host driver, "triton" on the CUDA
    driver. ``backend`` overrides the choice (tests generate Triton code on the host driver)."""
    import torch
    from torch._inductor.codegen import common

    from .. import _C

    missing = missing_inductor_apis()
    if missing:
        raise RuntimeError(f"this torch ({torch.__version__}) lacks {', '.join(missing)}")
    from .device_op_overrides import AccelDeviceOpOverrides

    if backend is None:
        backend = "triton" if _C._driver_name() == "cuda" else "cpp"
    if backend == "triton":
        if _C._driver_name() == "cuda":
            from .cuda_wrapper import check_cuda_torch

            check_cuda_torch()  # running Triton kernels needs torch.cuda; generating them not
        _register_triton_backend()
    else:
        from torch._inductor.codegen.cpp import CppScheduling

        from . import cpu_assumptions
        from .host_wrapper import AccelHostWrapperCodegen

        cpu_assumptions.apply()
        common.register_backend_for_device(
            "accel",
            CppScheduling,
            AccelHostWrapperCodegen,
            _host_cpp_wrapper(),
            **_cache_key_pass(),
        )
    common.register_device_op_overrides("accel", AccelDeviceOpOverrides())
    from . import graph_trees

    graph_trees.apply()
    STATUS["inductor"] = "ok"


def _host_cpp_wrapper():
    """The cpp_wrapper=True codegen, or, where this torch's C++ wrapper lacks what it builds
    on, a stand-in that refuses with the reason (the Python wrapper keeps working)."""
    import torch

    try:
        missing = missing_cpp_wrapper_apis()
        if missing:
            raise RuntimeError(
                f"this torch ({torch.__version__})'s CppWrapperCpu lacks {', '.join(missing)}"
            )
        from .cpp_wrapper import AccelCppWrapperCodegen, register_device_name

        register_device_name()
        STATUS["cpp_wrapper"] = "ok"
        return AccelCppWrapperCodegen
    except Exception as e:
        STATUS["cpp_wrapper"] = f"disabled: {type(e).__name__}: {e}"
        from torch._inductor.codegen.wrapper import PythonWrapperCodegen

        return _refusing_wrapper(
            PythonWrapperCodegen,
            "cpp_wrapper=True is not supported "
            f"on accel with this torch ({STATUS['cpp_wrapper']}); "
            "compile with cpp_wrapper=False",
        )


def _refusing_wrapper(base, reason=None):
    """Registered in place of a real wrapper when registration failed, so that compiling for
    accel stops with the reason instead of Inductor's bare 'Device accel not supported'."""

    class Refuse(base):
        supports_caching = False

        def __init__(self, *args, **kwargs):
            self.create()

        @staticmethod
        def create(*args, **kwargs):
            why = reason or f"{DISABLED_HINT} ({STATUS['inductor']})"
            raise RuntimeError(f"torch_accel: {why}")

    return Refuse


def register_inductor_or_refuse() -> None:
    run_or_disable("inductor", register_inductor)
    if STATUS["inductor"] != "ok":
        try:
            from torch._inductor.codegen import common, wrapper

            refuse = _refusing_wrapper(getattr(wrapper, "PythonWrapperCodegen", object))
            common.register_backend_for_device("accel", refuse, refuse, refuse)
            from .device_op_overrides import AccelDeviceOpOverrides

            common.register_device_op_overrides("accel", AccelDeviceOpOverrides())
        except Exception:
            pass
