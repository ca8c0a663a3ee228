"""CUDA driver: Inductor's Triton path on accel's CUDA memory, launched on accel's current
stream (``get_raw_stream`` returns the native cudaStream_t of accel's current stream)."""
from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen


def _require_triton():
    try:
        import triton  # noqa: F401
    except ImportError as e:
        raise RuntimeError(
            "torch_accel: torch.compile on the accel CUDA driver generates Triton kernels, and "
            f"triton is not importable ({e}). Install triton, or compile with "
            "backend='aot_eager'.") from e


class AccelSubgraphGpuWrapperCodegen(SubgraphPythonWrapperCodegen):
    pass


class AccelGpuWrapperCodegen(PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        _require_triton()
        if is_subgraph:
            return AccelSubgraphGpuWrapperCodegen(subgraph_name, parent_wrapper,
                                                  partition_signatures)
        return AccelGpuWrapperCodegen()
