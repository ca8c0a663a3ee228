"""Host driver: the Python wrapper that calls Inductor's C++ (CppScheduling) kernels on accel.

Design. On the host driver, accel memory is host memory, so a C++ kernel compiled by Inductor
can read and write accel tensors through their data pointers. Like any accel kernel it must run
in stream order, after the launches it reads (an extern ``mm(..., out=buf0)`` may still be
running when the wrapper's next line starts). Every C++ kernel call therefore goes through
``torch_accel._C._inductor_call_kernel(device, kernel, *args)``, which queues it on the
current stream as a kernel of host code: each kernel library carries a launch entry point and
its argument signature (``_launch_entry`` below), so the call only fills 64-bit argument slots
and returns. The kernel then runs on the stream worker while the wrapper's Python goes on, and
a graph capture (``torch.accel.graph``) records it like any launch. A call that cannot be
queued (a CPU tensor argument, such as AdamW's step count, which the host may change before the
stream reads it) drains the stream and runs on the caller instead. Buffers come from
``torch.empty_strided(..., device='accel')``, i.e. the accel caching allocator, and extern calls
(mm, addmm, bmm, fallbacks) dispatch through aten to accel's own kernels.
"""

import ast
import re

from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen
from torch._inductor.virtualized import V

_IMPORT = "from torch_accel._C import _inductor_call_kernel as _accel_call_kernel"

# CppScheduling's kernel definition: async_compile.cpp_pybinding([arg types], r'''source''')
_PYBINDING = re.compile(r"async_compile\.cpp_pybinding\((\[[^\]]*\]), r'''")
_SOURCE_END = "\n''')"
_SLOT_KINDS = {"int64_t": "i", "long": "i", "uintptr_t": "u", "float": "f", "double": "f"}

_LAUNCH_ENTRY = """
// torch_accel: kernel() as a stream launch (torch_accel/_inductor/host_wrapper.py).
#include <cstdio>
#include <cstring>
#include <exception>
template <class T> static inline T torch_accel_real(uint64_t bits) {{
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return static_cast<T>(value);
}}
extern "C" __attribute__((visibility("default")))
const char torch_accel_launch_signature[] = "{signature}";
extern "C" __attribute__((visibility("default")))
int torch_accel_launch(const uint64_t* slots, char* error, unsigned long size) {{
    try {{
        kernel({args});
        return 0;
    }} catch (const std::exception& e) {{
        std::snprintf(error, size, "%s", e.what());
    }} catch (...) {{
        std::snprintf(error, size, "a torch.compile kernel failed");
    }}
    return 1;
}}
"""


def _launch_entry(arg_types: list) -> str | None:
    """C++ appended to a kernel's source: torch_accel_launch(slots, error, size) calls kernel()
    with its arguments read from 64-bit slots, and torch_accel_launch_signature names each
    slot's kind (csrc/python/inductor_support.cpp fills them). None for an argument type it
    does not know: that kernel keeps the synchronous call."""
    signature, args = [], []
    for i, arg_type in enumerate(arg_types):
        base = arg_type.replace("const ", "").strip()
        if base.endswith("*"):
            signature.append("p")
            args.append(f"reinterpret_cast<{arg_type}>(slots[{i}])")
        elif base in _SLOT_KINDS:
            kind = _SLOT_KINDS[base]
            signature.append(kind)
            cast = "torch_accel_real" if kind == "f" else "static_cast"
            args.append(f"{cast}<{base}>(slots[{i}])")
        else:
            return None
    return _LAUNCH_ENTRY.format(signature="".join(signature), args=", ".join(args))


class _HostKernelCalls:
    """Mixin: C++ kernels on accel buffers are called in stream order (see the module doc)."""

    def define_kernel(self, kernel_name, kernel_body, *args, **kwargs):
        match = _PYBINDING.match(kernel_body)
        end = kernel_body.rfind(_SOURCE_END)
        entry = _launch_entry(ast.literal_eval(match.group(1))) if match and end > 0 else None
        if entry is not None:
            kernel_body = kernel_body[:end] + entry + kernel_body[end:]
        return super().define_kernel(kernel_name, kernel_body, *args, **kwargs)

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
