"""The torch.compile hook for accel: Dynamo's device interface and Inductor's code generation.

Nothing here is imported by ``import torch_accel``: ``install()`` only arranges for
``register_dynamo()`` to run when ``torch._dynamo.device_interface`` is imported, and for
``register_inductor()`` to run the first time Inductor initialises its backends. A torch whose
Inductor lacks the APIs used here disables compilation on accel with a clear message
(``status()``) instead of breaking the import.

- host driver: Inductor's C++ kernels (CppScheduling) called in stream order from the Python
  wrapper (host_wrapper.py) or, with cpp_wrapper=True, from the C++ wrapper (cpp_wrapper.py).
- cuda driver: Inductor's Triton kernels launched on accel's current CUDA stream.
"""
import importlib.abc
import importlib.machinery
import sys
import warnings

_status = {"dynamo": "not registered yet", "inductor": "not registered yet",
           "cpp_wrapper": "not registered yet"}

_DISABLED_HINT = ("torch.compile(backend='inductor') is disabled on accel; "
                  "backend='aot_eager' still works")


def status() -> dict:
    """What the hook registered: {'dynamo', 'inductor', 'cpp_wrapper'} -> 'ok' or why not."""
    return dict(_status)


def register_dynamo() -> None:
    from torch._dynamo.device_interface import register_interface_for_device

    from .device_interface import AccelInterface

    register_interface_for_device("accel", AccelInterface)
    from .. import _C

    for i in range(_C._device_count()):
        register_interface_for_device(f"accel:{i}", AccelInterface)
    _status["dynamo"] = "ok"


def _missing_inductor_apis() -> list:
    from torch._inductor import scheduler, utils
    from torch._inductor.codegen import common, wrapper

    needed = [(common, "register_backend_for_device"), (common, "register_device_op_overrides"),
              (common, "DeviceOpOverrides"), (wrapper, "PythonWrapperCodegen"),
              (wrapper, "SubgraphPythonWrapperCodegen"), (scheduler, "BaseSchedulerNode"),
              (utils, "get_current_backend")]
    missing = [f"{m.__name__}.{n}" for m, n in needed if not hasattr(m, n)]
    methods = [(getattr(wrapper, "PythonWrapperCodegen", None), "_generate_kernel_call_helper"),
               (getattr(scheduler, "BaseSchedulerNode", None), "is_cpu")]
    for owner, name in methods:
        if owner is not None and not hasattr(owner, name):
            missing.append(f"{owner.__name__}.{name}")
    return missing


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
    _status["cpp_wrapper"] = ("disabled: the CUDA driver launches Triton kernels from the "
                              "Python wrapper")
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen

    refuse = _refusing_wrapper(PythonWrapperCodegen, "cpp_wrapper=True is not supported on "
                               "accel's CUDA driver; compile with cpp_wrapper=False")
    common.register_backend_for_device("accel", TritonScheduling, AccelGpuWrapperCodegen, refuse)


def register_inductor(backend: str | None = None) -> None:
    """Registers accel's Inductor backend: "cpp" on the host driver, "triton" on the CUDA
    driver. ``backend`` overrides the choice (tests generate Triton code on the host driver)."""
    import torch
    from torch._inductor.codegen import common

    from .. import _C

    missing = _missing_inductor_apis()
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
        common.register_backend_for_device("accel", CppScheduling, AccelHostWrapperCodegen,
                                            _host_cpp_wrapper())
    common.register_device_op_overrides("accel", AccelDeviceOpOverrides())
    _status["inductor"] = "ok"


def _host_cpp_wrapper():
    """The cpp_wrapper=True codegen, or, where this torch's C++ wrapper lacks what it builds
    on, a stand-in that refuses with the reason (the Python wrapper keeps working)."""
    import torch

    try:
        from torch._inductor.codegen import cpp_utils, cpp_wrapper_cpu

        needed = ["generate_fallback_kernel_with_runtime_lookup",
                  "generate_fallback_kernel_with_runtime_lookup_boxed",
                  "_generate_kernel_call_helper", "add_device_include", "generate_scatter_fallback"]
        missing = [n for n in needed if not hasattr(cpp_wrapper_cpu.CppWrapperCpu, n)]
        if not hasattr(cpp_utils, "DEVICE_TO_ATEN"):
            missing.append("cpp_utils.DEVICE_TO_ATEN")
        if missing:
            raise RuntimeError(f"this torch ({torch.__version__})'s CppWrapperCpu lacks "
                               f"{', '.join(missing)}")
        from .cpp_wrapper import AccelCppWrapperCodegen, register_device_name

        register_device_name()
        _status["cpp_wrapper"] = "ok"
        return AccelCppWrapperCodegen
    except Exception as e:
        _status["cpp_wrapper"] = f"disabled: {type(e).__name__}: {e}"
        from torch._inductor.codegen.wrapper import PythonWrapperCodegen

        return _refusing_wrapper(PythonWrapperCodegen, "cpp_wrapper=True is not supported "
                                 f"on accel with this torch ({_status['cpp_wrapper']}); "
                                 "compile with cpp_wrapper=False")


def _safely(name, fn):
    try:
        fn()
    except Exception as e:  # a torch whose internals moved: disable, never break the caller
        _status[name] = f"disabled: {type(e).__name__}: {e}"
        warnings.warn(f"torch_accel: {_DISABLED_HINT} ({_status[name]})", stacklevel=3)


def _refusing_wrapper(base, reason=None):
    """Registered in place of a real wrapper when registration failed, so that compiling for
    accel stops with the reason instead of Inductor's bare 'Device accel not supported'."""

    class Refuse(base):
        supports_caching = False

        def __init__(self, *args, **kwargs):
            self.create()

        @staticmethod
        def create(*args, **kwargs):
            why = reason or f"{_DISABLED_HINT} ({_status['inductor']})"
            raise RuntimeError(f"torch_accel: {why}")

    return Refuse


def _register_inductor_or_refuse() -> None:
    _safely("inductor", register_inductor)
    if _status["inductor"] != "ok":
        try:
            from torch._inductor.codegen import common, wrapper

            refuse = _refusing_wrapper(getattr(wrapper, "PythonWrapperCodegen", object))
            common.register_backend_for_device("accel", refuse, refuse, refuse)
            from .device_op_overrides import AccelDeviceOpOverrides

            common.register_device_op_overrides("accel", AccelDeviceOpOverrides())
        except Exception:
            pass


def _on_common_loaded(common) -> None:
    """Wrap Inductor's backend initialisation so that ours registers first, on first use."""
    if not hasattr(common, "init_backend_registration"):
        _status["inductor"] = "disabled: Inductor has no init_backend_registration"
        return
    original = common.init_backend_registration

    def init_backend_registration():
        if _status["inductor"] == "not registered yet":
            _register_inductor_or_refuse()
        return original()

    init_backend_registration.__wrapped__ = original
    common.init_backend_registration = init_backend_registration


_HOOKS = {
    "torch._dynamo.device_interface": lambda module: _safely("dynamo", register_dynamo),
    "torch._inductor.codegen.common": _on_common_loaded,
}


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Runs _HOOKS[name](module) right after the module `name` has executed."""

    def find_spec(self, name, path, target=None):
        if name not in _HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        exec_module = spec.loader.exec_module

        def exec_then_hook(module):
            exec_module(module)
            _HOOKS[name](module)

        spec.loader.exec_module = exec_then_hook
        return spec


def install() -> None:
    if "torch._dynamo.device_interface" in sys.modules:
        _safely("dynamo", register_dynamo)
    if "torch._inductor.codegen.common" in sys.modules:  # Inductor already loaded: no wrapping
        _register_inductor_or_refuse()
    if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())
