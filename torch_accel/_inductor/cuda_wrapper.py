"""CUDA driver: Inductor's Triton path on accel's CUDA memory, launched on accel's current
stream (``get_raw_stream`` returns the native cudaStream_t of accel's current stream).

Accel memory on this driver is ordinary CUDA memory in the process's CUDA context, so Triton
kernels compiled for CUDA run on it unchanged. Triton and Inductor's Triton runtime know the
target only as device type "cuda" (the backend lookup, cubin handling, benchmarking through
torch.cuda), so the device properties Inductor records for an accel device say "cuda". That
needs a CUDA-enabled torch. Not yet run on a GPU; tests/test_compile.py generates this path's
code on any machine with triton (registering it with
``registration.register_inductor("triton")`` and stubbing what a GPU reports) and checks it as
text.
"""

import torch
from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen


def check_cuda_torch() -> None:
    if not torch.cuda._is_compiled():
        raise RuntimeError(
            "the accel CUDA driver compiles Triton kernels, which needs a CUDA-enabled torch; "
            f"this torch ({torch.__version__}) has no CUDA"
        )


def triton_targets_cuda() -> None:
    """DeviceProperties.create(accel device) reports type "cuda" (see the module doc)."""
    from torch._inductor.runtime.hints import DeviceProperties

    original = DeviceProperties.create
    if getattr(original, "_accel", False):
        return

    def create(cls, device):
        props = original(device)
        return props._replace(type="cuda") if props.type == "accel" else props

    create._accel = True
    DeviceProperties.create = classmethod(create)


def _require_triton():
    try:
        import triton  # noqa: F401
    except ImportError as e:
        raise RuntimeError(
            "torch_accel: torch.compile on the accel CUDA driver generates Triton kernels, and "
            f"triton is not importable ({e}). Install triton, or compile with "
            "backend='aot_eager'."
        ) from e


class AccelSubgraphGpuWrapperCodegen(SubgraphPythonWrapperCodegen):
    pass


class AccelGpuWrapperCodegen(PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        _require_triton()
        if is_subgraph:
            return AccelSubgraphGpuWrapperCodegen(
                subgraph_name, parent_wrapper, partition_signatures
            )
        return AccelGpuWrapperCodegen()
