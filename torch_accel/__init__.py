"""torch_accel: an out-of-tree PyTorch device backend named ``accel``.

``import torch_accel`` (or just ``import torch``, through the ``torch.backends`` entry point)
registers the device: ``torch.ones(3, device="accel")``, ``model.to("accel")``,
``torch.accel.*`` (the API of ``torch.cuda``) and ``torch.accelerator.*``.
"""

import torch

__version__ = "0.1.0"

from . import _C  # loading it registers the C++ backend (guard, hooks, allocator, kernels)

__all__ = [
    "fallback_counts",
    "fallback_stats",
    "reset_fallback_counts",
    "set_fallback_mode",
    "fallback_mode",
    "driver",
]


def _register():
    if torch._C._get_privateuse1_backend_name() != "accel":
        torch.utils.rename_privateuse1_backend("accel")
    from . import accel as device_module

    if not hasattr(torch, "accel"):
        torch._register_device_module("accel", device_module)
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_storage=True, for_packed_sequence=True
        )
    # torch.accelerator.Graph (torch 2.12+) finds accel's graphs by the backend's new name.
    _C._register_graph_impl()


_register()

from . import _sharing  # noqa: E402  accel tensors through torch.multiprocessing

_sharing.install()

from . import _autograd_exit  # noqa: E402  a backward's last release before exit

_autograd_exit.install()

from . import _data_parallel  # noqa: E402  nn.DataParallel over accel devices

_data_parallel.install()

from . import _linear_cross_entropy_defaults  # noqa: E402

_linear_cross_entropy_defaults.install()

from . import _transformers_bf16  # noqa: E402  TrainingArguments(bf16=True) on accel

_transformers_bf16.install()

from . import _accelerate_launch  # noqa: E402  says when accelerate cannot distribute on accel

_accelerate_launch.install()


def _install_compile_hook():
    # torch.compile support registers itself lazily, when Dynamo/Inductor load (_inductor/).
    try:
        from . import _inductor

        _inductor.install()
    except Exception as e:  # never let compile support break the import
        import warnings

        warnings.warn(
            f"torch_accel: torch.compile support disabled: {type(e).__name__}: {e}", stacklevel=2
        )


_install_compile_hook()

from . import distributed  # noqa: E402, F401  registers the accl c10d backend for accel


def driver() -> str:
    """The driver behind the accel devices: ``"host"`` or ``"cuda"``."""
    return _C._driver_name()


def fallback_stats() -> dict:
    """Per aten op that ran through the CPU fallback: calls, seconds and bytes copied."""
    return _C._fallback_stats()


def fallback_counts() -> dict:
    """Per aten op that ran through the CPU fallback: the number of calls."""
    return {name: s["calls"] for name, s in _C._fallback_stats().items()}


def reset_fallback_counts() -> None:
    """Clears the counts and stats; each op warns again the next time it falls back."""
    _C._reset_fallback_stats()


def set_fallback_mode(mode: str) -> None:
    """``"warn"`` (once per op until reset_fallback_counts()), ``"silent"``, or ``"error"``
    (raise instead)."""
    _C._set_fallback_mode(mode)


def fallback_mode() -> str:
    return _C._fallback_mode()
