"""Host driver: the Python wrapper that calls Inductor's C++ (CppScheduling) kernels on accel.

Design. On the host driver, accel memory is host memory, so a C++ kernel compiled by Inductor
can read and write accel tensors through their data pointers, on the calling thread. What it
must not do is run ahead of the stream: accel launches are asynchronous (worker threads run
each stream's queue), so an extern call such as ``mm(..., out=buf0)`` may still be running when
the next line of the wrapper starts. Every C++ kernel call therefore goes through
``torch_accel._C._inductor_call_kernel(device, kernel, *args)``, which drains the calling
thread's current stream (GIL released), then runs the kernel while holding device access (so
protect mode, TORCH_ACCEL_PROTECT=1, does not fault). When the kernel returns its writes are
done, so later asynchronous launches need no event. Buffers come from
``torch.empty_strided(..., device='accel')``, i.e. the accel caching allocator, and extern calls
(mm, addmm, bmm, fallbacks) dispatch through aten to accel's own kernels.
"""

from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen
from torch._inductor.virtualized import V

_IMPORT = "from torch_accel._C import _inductor_call_kernel as _accel_call_kernel"


class _HostKernelCalls:
    """Mixin: C++ kernels on accel buffers are called in stream order (see the module doc)."""

    def _generate_kernel_call_helper(self, kernel_name, call_args, *args, **kwargs):
        device = kwargs.get("device") or V.graph.get_current_device_or_throw()
        if kwargs.get("triton", True) or device.type != "accel":
            return super()._generate_kernel_call_helper(kernel_name, call_args, *args, **kwargs)
        root = self
        while getattr(root, "parent_wrapper", None) is not None:
            root = root.parent_wrapper
        if not root.imports.contains(_IMPORT):
            root.imports.writeline(_IMPORT)
        index = device.index if device.index is not None else 0
        self.writeline(f"_accel_call_kernel({index}, {kernel_name}, {', '.join(call_args)})")

    def make_allocation(self, name, device, dtype, shape, stride, *args, **kwargs):
        # Inductor's line names the device type only, i.e. the current device, and relies on a
        # device guard that it emits for GPUs alone: a graph on accel:1 would allocate on accel:0.
        line = super().make_allocation(name, device, dtype, shape, stride, *args, **kwargs)
        if device.type != "accel" or device.index is None:
            return line
        return line.replace("device='accel'", f"device='{device}'")


class AccelSubgraphWrapperCodegen(_HostKernelCalls, SubgraphPythonWrapperCodegen):
    pass


class AccelHostWrapperCodegen(_HostKernelCalls, PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        # PythonWrapperCodegen.create builds the base classes; ours must survive it.
        if is_subgraph:
            return AccelSubgraphWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return AccelHostWrapperCodegen()
